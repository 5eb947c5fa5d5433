// `les bench`: prefill and decode speed of a model, in the manner of
// llama.cpp's llama-bench, for resident and streamed experts.
//
//   les bench [-m MODEL.gguf] [-p 512[,N...]] [-n 128[,N...]] [-r 5] [-t T[,T...]]
//             [--budget-mb 0[,MiB...]] [-c N] [--kv-type f16|q8_0] [--prefetch-c C]
//             [--io auto|pread|io_uring|dispatch] [--eviction adaptive|next_use|lfu_aged|lru] [--json]
//
// For every (threads, budget) a fresh context is created (budget 0: experts
// resident; > 0: streamed through an expert cache of that many MiB), and every
// test runs once untimed (warm-up: page cache, expert cache, thread start)
// and then -r times, each from an empty context:
//   pp N  one les_context_decode of N tokens (prefill, in chunks of n_batch);
//   tg N  N les_context_decode calls of one token each (decode).
// Tokens are ids drawn from a fixed-seed generator over the vocabulary (as
// llama-bench does: speed does not depend on the text). Each repetition gives
// tokens / seconds; the table shows their mean ± sample standard deviation.
// Streamed rows add the expert-cache hit rate and MiB read per token over the
// timed repetitions. --json prints one JSON array (one object per row, every
// repetition's tok/s included) on stdout instead of the table.
//
// Every argument is checked before the first test runs: the lists' syntax,
// then every budget by creating (and freeing) its context. The threads column
// shows the thread count used (-t 0: every core).
//
// Exit codes: 0, 1 (the model cannot be loaded, a context cannot be created,
// a decode fails), 2 (usage: no test, a size < 1 or beyond the context,
// -r < 1, an empty list element, budgets below the minimum).
#include <les/les.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "common/default_model.h"
#include "common/handles.h"
#include "common/model_options.h"

namespace les::tool {
namespace {

constexpr const char* kTool = "bench";

struct BenchOptions {
  std::string model;
  // The list flags as given (each occurrence comma-separated); validate() parses
  // them into the vectors below and refuses an empty element (CLI11 drops them).
  std::vector<std::string> n_prompt_arg{"512"}, n_gen_arg{"128"}, threads_arg{"0"}, budgets_arg{"0"};
  std::vector<int32_t> n_prompt;
  std::vector<int32_t> n_gen;
  int32_t reps = 5;
  std::vector<int> threads;
  std::vector<double> budgets_mb;
  int32_t n_ctx = 0;  // 0: the largest test (at least 256)
  std::string kv_type = "f16";
  int32_t prefetch_c = -1;
  std::string io = "auto";
  std::string eviction = "adaptive";
  bool json = false;
};

struct Test {
  bool prefill = true;  // pp N, else tg N
  int32_t n = 0;
  std::string name() const { return (prefill ? "pp" : "tg") + std::to_string(n); }
};

struct Row {
  int threads = 0;
  double budget_mb = 0;  // 0: resident
  Test test;
  std::vector<double> tok_per_s;
  double hit_rate = -1, mib_read_per_token = -1;  // streamed rows
  double mean() const {
    double s = 0;
    for (double v : tok_per_s) s += v;
    return tok_per_s.empty() ? 0 : s / static_cast<double>(tok_per_s.size());
  }
  double sd() const {  // sample standard deviation; 0 for one repetition
    if (tok_per_s.size() < 2) return 0;
    const double m = mean();
    double s = 0;
    for (double v : tok_per_s) s += (v - m) * (v - m);
    return std::sqrt(s / static_cast<double>(tok_per_s.size() - 1));
  }
};

int usage(const std::string& msg) {
  std::fprintf(stderr, "les bench: %s\n", msg.c_str());
  return 2;
}

// Splits each of `flag`'s comma-separated arguments into numbers of type T;
// an empty element or one that is not a whole number of T is a usage error
// naming the flag. Returns 0 or the exit code 2.
template <class T>
int parse_list(const char* flag, const std::vector<std::string>& args, std::vector<T>& out) {
  out.clear();
  for (const std::string& arg : args) {
    size_t begin = 0;
    while (true) {
      const size_t end = std::min(arg.find(',', begin), arg.size());
      const std::string item = arg.substr(begin, end - begin);
      T v{};
      if (item.empty())
        return usage(std::string(flag) + ": empty value in '" + arg + "' (give a comma-separated list of numbers)");
      std::string text = item;
      if (!decimal_number()(text).empty() || !CLI::detail::lexical_cast(item, v))
        return usage(std::string(flag) + ": '" + item + "' is not a number");
      out.push_back(v);
      if (end == arg.size()) break;
      begin = end + 1;
    }
  }
  return 0;
}

int validate(BenchOptions& o) {
  if (int rc = parse_list("-p", o.n_prompt_arg, o.n_prompt)) return rc;
  if (int rc = parse_list("-n", o.n_gen_arg, o.n_gen)) return rc;
  if (int rc = parse_list("-t", o.threads_arg, o.threads)) return rc;
  if (int rc = parse_list("--budget-mb", o.budgets_arg, o.budgets_mb)) return rc;
  for (int32_t v : o.n_prompt)
    if (v < 0) return usage("-p sizes must be >= 0 (0 = no prefill test), got " + std::to_string(v));
  for (int32_t v : o.n_gen)
    if (v < 0) return usage("-n sizes must be >= 0 (0 = no decode test), got " + std::to_string(v));
  if (o.reps < 1) return usage("-r must be >= 1, got " + std::to_string(o.reps));
  for (int t : o.threads)
    if (t < 0 || t > les_max_threads())
      return usage("-t values must be in [0, " + std::to_string(les_max_threads()) + "] (0 = all cores), got " +
                   std::to_string(t));
  for (int t : o.threads) warn_threads_beyond_cores("bench", t);
  for (double b : o.budgets_mb)
    if (!std::isfinite(b) || b < 0 || b > 1024.0 * 1024.0)
      return usage("--budget-mb values must be in [0, 1048576] (MiB; 0 = experts resident)");
  if (o.n_ctx < 0) return usage("-c must be >= 0, got " + std::to_string(o.n_ctx));
  if (o.prefetch_c < -1) return usage("--prefetch-c must be -1, 0 or k..2k");
  bool any = false;
  for (int32_t v : o.n_prompt) any = any || v > 0;
  for (int32_t v : o.n_gen) any = any || v > 0;
  if (!any) return usage("nothing to measure: every -p and -n size is 0");
  int32_t largest = 0;
  for (int32_t v : o.n_prompt) largest = std::max(largest, v);
  for (int32_t v : o.n_gen) largest = std::max(largest, v);
  if (o.n_ctx == 0) o.n_ctx = std::max(largest, 256);
  if (largest > o.n_ctx)
    return usage("a test of " + std::to_string(largest) + " tokens does not fit in -c " + std::to_string(o.n_ctx));
  return 0;
}

// Seconds to run `t` once from an empty context. Errors print and return < 0.
double run_once(les_context* ctx, const Test& t, std::mt19937& rng, int32_t n_vocab) {
  std::uniform_int_distribution<int32_t> pick(0, n_vocab - 1);
  std::vector<les_token> ids(static_cast<size_t>(t.n));
  for (auto& id : ids) id = pick(rng);
  if (les_context_reset(ctx) != LES_OK) return -1;
  const auto t0 = std::chrono::steady_clock::now();
  les_status st = LES_OK;
  if (t.prefill) {
    st = les_context_decode(ctx, ids.data(), t.n);
  } else {
    for (int32_t i = 0; i < t.n && st == LES_OK; ++i) st = les_context_decode(ctx, &ids[static_cast<size_t>(i)], 1);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (st != LES_OK) {
    fail_c(kTool, "decoding", st, les_context_last_error(ctx));
    return -1;
  }
  return s;
}

bool stream_stats(les_context* ctx, les_stream_stats& s) {
  s = les_stream_stats{};
  s.struct_size = sizeof s;
  return les_context_stream_stats(ctx, &s) == LES_OK;
}

std::string fmt_mib(double mib) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", mib);
  return buf;
}

std::string experts_cell(double budget_mb) {
  if (budget_mb <= 0) return "resident";
  return "streamed " + fmt_mib(budget_mb) + " MiB";
}

// Runs every test on one (threads, budget) context; appends the rows. Returns an exit code.
int bench_config(const BenchOptions& o, les_model* model, int threads, double budget_mb,
                 const std::vector<Test>& tests, std::vector<Row>& rows) {
  les_context_params cp = les_context_default_params();
  cp.n_ctx = o.n_ctx;
  cp.n_threads = threads;
  cp.kv_type = o.kv_type == "q8_0" ? LES_KV_Q8_0 : LES_KV_F16;
  cp.expert_budget_bytes = static_cast<uint64_t>(std::ceil(budget_mb * 1024.0 * 1024.0));
  cp.prefetch_candidates = o.prefetch_c;
  cp.io_backend = io_backend_from_option(o.io);
  cp.eviction = o.eviction == "lru"        ? LES_EVICTION_LRU
                : o.eviction == "lfu_aged" ? LES_EVICTION_LFU_AGED
                : o.eviction == "next_use" ? LES_EVICTION_NEXT_USE
                                           : LES_EVICTION_ADAPTIVE;
  // A progress callback keeps the expert cache's prefault on this thread (les_context_params):
  // no page is faulted in while a test is timed.
  cp.progress_callback = [](float, void*) { return true; };
  ContextHandle ctx;
  if (les_status st = les_context_create(model, &cp, &ctx.p); st != LES_OK)
    return fail_c(kTool,
                  "creating the context (-t " + std::to_string(threads) + ", " + experts_cell(budget_mb) + ")",
                  st, les_last_error(), st == LES_ERR_INVALID_ARGUMENT ? 2 : 1);
  const int32_t n_vocab = les_model_n_vocab(model);
  std::mt19937 rng(1234);
  for (const Test& t : tests) {
    Row r;
    // -t 0 means the model's thread count, which is every core (les_model_params.n_threads).
    r.threads = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    r.budget_mb = budget_mb;
    r.test = t;
    if (run_once(ctx.p, t, rng, n_vocab) < 0) return 1;  // warm-up
    les_stream_stats before{}, after{};
    const bool streamed = stream_stats(ctx.p, before);
    for (int32_t i = 0; i < o.reps; ++i) {
      const double s = run_once(ctx.p, t, rng, n_vocab);
      if (s < 0) return 1;
      r.tok_per_s.push_back(s > 0 ? t.n / s : 0.0);
    }
    if (streamed && stream_stats(ctx.p, after)) {
      const double sel = static_cast<double>((after.cache_hits - before.cache_hits) +
                                             (after.inflight_hits - before.inflight_hits) +
                                             (after.cache_misses - before.cache_misses));
      const double tokens = static_cast<double>(after.tokens - before.tokens);
      r.hit_rate = sel > 0 ? static_cast<double>((after.cache_hits - before.cache_hits) +
                                                 (after.inflight_hits - before.inflight_hits)) /
                                 sel
                           : 0.0;
      r.mib_read_per_token =
          tokens > 0 ? static_cast<double>(after.bytes_read - before.bytes_read) / (1024.0 * 1024.0) / tokens : 0.0;
    }
    if (!o.json)
      std::fprintf(stderr, "les bench: %s -t %d %s: %.2f ± %.2f tok/s\n", t.name().c_str(), r.threads,
                   experts_cell(budget_mb).c_str(), r.mean(), r.sd());
    rows.push_back(std::move(r));
  }
  return 0;
}

int bench(BenchOptions o) {
  if (int rc = validate(o)) return rc;
  if (o.model.empty()) {
    auto def = ensure_default_model();
    if (!def.ok()) {
      std::fprintf(stderr, "les bench: embedded default model: %s\n", def.status().to_string().c_str());
      return 1;
    }
    std::fprintf(stderr, "les bench: no -m given: using the embedded default (random weights) at %s\n",
                 def->path.c_str());
    o.model = def->path;
  }
  ModelHandle model;
  les_model_params mp = les_model_default_params();
  use_tool_log(kTool, mp);
  if (les_status st = les_model_load(o.model.c_str(), &mp, &model.p); st != LES_OK)
    return fail_c(kTool, "loading " + o.model, st, les_last_error());
  const bool has_experts = les_model_n_expert(model.p) > 0;
  std::vector<Test> tests;
  for (int32_t n : o.n_prompt)
    if (n > 0) tests.push_back({true, n});
  for (int32_t n : o.n_gen)
    if (n > 0) tests.push_back({false, n});
  // Every budget is checked by creating (and freeing) its context before any
  // test runs, so a budget LES refuses (below the minimum) stops the command
  // before the first row. Without a progress callback the cache's pages fault
  // in on a background thread, which freeing stops: this costs milliseconds.
  for (double b : o.budgets_mb) {
    if (b <= 0 || !has_experts) continue;
    les_context_params cp = les_context_default_params();
    cp.n_ctx = o.n_ctx;
    cp.kv_type = o.kv_type == "q8_0" ? LES_KV_Q8_0 : LES_KV_F16;
    cp.expert_budget_bytes = static_cast<uint64_t>(std::ceil(b * 1024.0 * 1024.0));
    cp.prefetch_candidates = o.prefetch_c;
    ContextHandle probe;
    if (les_status st = les_context_create(model.p, &cp, &probe.p); st != LES_OK)
      return fail_c(kTool, "--budget-mb " + fmt_mib(b), st, les_last_error(), st == LES_ERR_INVALID_ARGUMENT ? 2 : 1);
  }
  std::vector<Row> rows;
  for (int threads : o.threads) {
    for (double b : o.budgets_mb) {
      if (b > 0 && !has_experts) {
        std::fprintf(stderr, "les bench: note: the model has no routed experts; --budget-mb %g skipped\n", b);
        continue;
      }
      if (int rc = bench_config(o, model.p, threads, b, tests, rows)) return rc;
    }
  }
  const std::string desc = model_desc(model.p);
  std::error_code ec;
  const auto size = std::filesystem::file_size(o.model, ec);
  const double size_mib = ec ? 0.0 : static_cast<double>(size) / (1024.0 * 1024.0);
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Row& r : rows) {
      nlohmann::json j = {{"model", o.model},
                          {"desc", desc},
                          {"size_mib", size_mib},
                          {"n_ctx", o.n_ctx},
                          {"kv_type", o.kv_type},
                          {"threads", r.threads},
                          {"expert_budget_mib", r.budget_mb > 0 ? nlohmann::json(r.budget_mb) : nlohmann::json()},
                          {"test", r.test.name()},
                          {"n_prompt", r.test.prefill ? r.test.n : 0},
                          {"n_gen", r.test.prefill ? 0 : r.test.n},
                          {"repetitions", o.reps},
                          {"tok_per_s", r.tok_per_s},
                          {"avg_tok_per_s", r.mean()},
                          {"stddev_tok_per_s", r.sd()}};
      j["hit_rate"] = r.hit_rate >= 0 ? nlohmann::json(r.hit_rate) : nlohmann::json();
      j["mib_read_per_token"] = r.mib_read_per_token >= 0 ? nlohmann::json(r.mib_read_per_token) : nlohmann::json();
      out.push_back(std::move(j));
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("| model | size | experts | threads | test | t/s | hit rate | MiB read/token |\n");
  std::printf("| --- | ---: | --- | ---: | --- | ---: | ---: | ---: |\n");
  for (const Row& r : rows) {
    char hit[32] = "-", mib[32] = "-";
    if (r.hit_rate >= 0) std::snprintf(hit, sizeof hit, "%.3f", r.hit_rate);
    if (r.mib_read_per_token >= 0) std::snprintf(mib, sizeof mib, "%.2f", r.mib_read_per_token);
    std::printf("| %s | %.2f MiB | %s | %d | %s | %.2f ± %.2f | %s | %s |\n", desc.c_str(), size_mib,
                experts_cell(r.budget_mb).c_str(), r.threads, r.test.name().c_str(), r.mean(), r.sd(), hit, mib);
  }
  return 0;
}

}  // namespace

void register_bench(CLI::App& app, ToolState& state) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand("bench", "Measure prefill (pp) and decode (tg) tok/s, resident and streamed");
  cmd->add_option("-m,--model", o->model, "GGUF model file (default: the embedded random-weight tiny qwen3moe)");
  cmd->add_option("-p,--n-prompt", o->n_prompt_arg, "Prefill test sizes in tokens, comma-separated (0 = none)")
      ->capture_default_str();
  cmd->add_option("-n,--n-gen", o->n_gen_arg, "Decode test sizes in tokens, comma-separated (0 = none)")
      ->capture_default_str();
  cmd->add_option("-r,--repetitions", o->reps, "Timed repetitions per test (after one warm-up run)")
      ->capture_default_str();
  cmd->add_option("-t,--threads", o->threads_arg, "Thread counts, comma-separated (0 = all cores)")
      ->capture_default_str();
  cmd->add_option("--budget-mb", o->budgets_arg,
                  "Expert budgets in MiB, comma-separated (0 = experts resident; > 0 = streamed)")
      ->capture_default_str();
  cmd->add_option("-c,--ctx", o->n_ctx, "Context size (0 = the largest test, at least 256)")->capture_default_str();
  cmd->add_option("--kv-type", o->kv_type, "KV cache type: f16, q8_0")
      ->check(CLI::IsMember({"f16", "q8_0"}))
      ->capture_default_str();
  cmd->add_option("--prefetch-c", o->prefetch_c, "Lookahead candidates (-1 = k+2, 0 = on demand)")
      ->capture_default_str();
  add_io_option(cmd, o->io);
  cmd->add_option("--eviction", o->eviction, "Expert cache eviction: adaptive, next_use, lfu_aged, lru")
      ->check(CLI::IsMember({"adaptive", "next_use", "lfu_aged", "lru"}))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON array on stdout instead of the table");
  cmd->callback([&state, o] { state.exit_code = bench(*o); });
}

}  // namespace les::tool
