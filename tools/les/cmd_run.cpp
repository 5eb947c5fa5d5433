// `les run`: generate text from a GGUF model, streaming it to stdout.
//
//   les run -m MODEL.gguf -p "PROMPT" -n 128 [--temp 0.8 --top-k 40 --top-p 0.95
//           --min-p 0.05 --seed S -t THREADS --ctx N --ignore-eos
//           --repeat-penalty 1.0 --stop STR ...]
//
// Sampling defaults are llama.cpp's (temperature 0.8, top-k 40, top-p 0.95,
// min-p 0.05, no repetition penalty); --temp 0 is greedy. Without -m, the
// embedded default model (a random-weight qwen3moe, les/default_model.h) is
// generated once into the cache and used. Only the generated text goes to
// stdout (invalid UTF-8 bytes shown as U+FFFD, as in the reference fixtures'
// "text"); everything else (what ran, the statistics) goes to stderr:
// prompt tokens, prefill tok/s, decode tok/s and peak RSS (getrusage ru_maxrss).
// Exit codes: 0 success, 1 runtime error (missing or malformed model...),
// 2 bad arguments.
//
// --budget-mb N streams routed experts through an N MiB expert cache
// (les_model_params.expert_budget_bytes; --prefetch-c, --io, --eviction set
// the lookahead and reader; --stats prints les_context_stream_stats and the
// per-layer figures). A dense model has nothing to stream and runs resident
// with a note.
//
// The model, context and generation go through the C ABI (les/les.h), as an
// embedding app would. Two things les.h does not offer stay on the C++ side:
// checking the sampler parameters before any file is opened (so they are usage
// errors, exit 2) and the UTF-8 repair of printed pieces.
#include <les/les.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/sampler.h"
#include "core/tokenizer/utf8.h"
#include "les/commands.h"
#include "les/default_model.h"

namespace les::tool {
namespace {

struct RunOptions {
  std::string model;
  std::string prompt = "Once upon a time";
  int32_t n_predict = 128;
  int32_t n_ctx = 0;
  int n_threads = 0;
  bool ignore_eos = false;
  int64_t seed = -1;  // -1 = random
  int32_t repeat_last_n = 64;
  std::vector<std::string> stop;
  SamplerParams sp;
  // Expert streaming: --budget-mb > 0 turns it on.
  double budget_mb = 0;
  int32_t prefetch_c = -1;
  std::string io = "auto";
  std::string eviction = "lfu_aged";
  bool stats = false;
};

// Peak resident set size of this process in MiB (Linux reports ru_maxrss in KiB).
double peak_rss_mib() {
  struct rusage ru {};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
#if defined(__APPLE__)
  return static_cast<double>(ru.ru_maxrss) / (1024.0 * 1024.0);
#else
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
#endif
}

// Replaces each byte that is not part of valid UTF-8 with U+FFFD, so the
// terminal always receives valid text (random-weight models emit stray byte
// tokens). Safe per piece: the streaming detokenizer only hands out complete
// sequences and bytes that can never become valid.
std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const utf8::Decoded d = utf8::decode(s, i);
    if (d.valid) out.append(s.substr(i, d.len));
    else utf8::append(out, utf8::kReplacement);
    i += d.len;
  }
  return out;
}

int fail(const std::string& what, const Status& s) {
  std::fprintf(stderr, "les run: %s: %s\n", what.c_str(), s.to_string().c_str());
  return 1;
}

// A failed les.h call: its status name and message (`detail`: les_last_error()
// or les_context_last_error()).
int fail_c(const std::string& what, les_status st, const char* detail, int code = 1) {
  std::fprintf(stderr, "les run: %s: %s: %s\n", what.c_str(), les_status_name(st), detail);
  return code;
}

// --stats: the streaming totals and the per-layer cache and predictor figures.
int print_stream_stats(const les_model* model, const les_context* ctx, const std::string& io) {
  les_stream_stats s{};
  s.struct_size = sizeof s;
  if (les_status st = les_context_stream_stats(ctx, &s); st != LES_OK)
    return fail_c("streaming statistics", st, les_last_error());
  const double mib = 1024.0 * 1024.0;
  const double per_tok = s.tokens ? 1.0 / static_cast<double>(s.tokens) : 0.0;
  // Without lookahead (c = 0) there is no prediction to score.
  auto fmt3 = [&](double v) {
    char b[16];
    std::snprintf(b, sizeof b, "%.3f", v);
    return s.prefetch_candidates > 0 ? std::string(b) : std::string("-");
  };
  const std::string recall = fmt3(s.mean_recall);
  std::fprintf(stderr,
               "les run: experts streamed (--io %s), budget %.2f MiB = %d slots, prefetch c = %d\n"
               "les run: bytes read %.2f MiB (%.1f KiB/token), reads %llu, experts demand-read %llu, prefetched %llu\n"
               "les run: cache hits %llu, in-flight hits %llu, misses %llu (hit rate %.3f), prefetched never used "
               "%.2f MiB, read errors %llu, mean recall %s\n"
               "les run: time in forward passes %.1f ms, compute waited on I/O %.1f ms (%.1f%%), I/O idle %.1f ms\n",
               io.c_str(), static_cast<double>(s.budget_bytes) / mib, s.n_slots, s.prefetch_candidates,
               static_cast<double>(s.bytes_read) / mib, static_cast<double>(s.bytes_read) * per_tok / 1024.0,
               static_cast<unsigned long long>(s.reads_issued), static_cast<unsigned long long>(s.demand_experts),
               static_cast<unsigned long long>(s.prefetch_experts), static_cast<unsigned long long>(s.cache_hits),
               static_cast<unsigned long long>(s.inflight_hits), static_cast<unsigned long long>(s.cache_misses),
               s.hit_rate, static_cast<double>(s.prefetch_unused_bytes) / mib,
               static_cast<unsigned long long>(s.read_errors), recall.c_str(), s.wall_seconds * 1e3,
               s.io_wait_seconds * 1e3, s.wall_seconds > 0 ? 100.0 * s.io_wait_seconds / s.wall_seconds : 0.0,
               s.io_idle_seconds * 1e3);
  std::fprintf(stderr, "les run: layer | hits | in-flight | misses | recall | precision\n");
  for (int32_t l = 0; l < les_model_n_layer(model); ++l) {
    les_stream_layer_stats L{};
    L.struct_size = sizeof L;
    if (les_context_stream_layer_stats(ctx, l, &L) != LES_OK) continue;  // a dense layer
    std::fprintf(stderr, "les run: %5d | %4llu | %9llu | %6llu | %-6s | %s\n", l,
                 static_cast<unsigned long long>(L.cache_hits), static_cast<unsigned long long>(L.inflight_hits),
                 static_cast<unsigned long long>(L.cache_misses), fmt3(L.recall).c_str(), fmt3(L.precision).c_str());
  }
  return 0;
}

// The library's log lines: warnings go to stderr; errors are dropped because
// every failing call's status and message are printed by this tool itself.
void log_to_stderr(les_log_level level, const char* msg, void* /*user_data*/) {
  if (level == LES_LOG_WARN) std::fprintf(stderr, "les run: warning: %s\n", msg);
}

bool print_piece(les_token /*token*/, const char* piece, size_t len, void* /*user_data*/) {
  const std::string text = valid_utf8(std::string_view(piece, len));
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return true;
}

// Owners of the les.h handles (freed in reverse order of creation).
struct ModelHandle {
  les_model* p = nullptr;
  ~ModelHandle() { les_model_free(p); }
};
struct ContextHandle {
  les_context* p = nullptr;
  ~ContextHandle() { les_context_free(p); }
};

int run(RunOptions o) {
  // Arguments first: bad values are usage errors (exit 2) before any file is touched.
  if (o.n_ctx < 0) {
    std::fprintf(stderr, "les run: --ctx must be >= 0 (0 = model default), got %d\n", o.n_ctx);
    return 2;
  }
  if (o.n_threads < 0) {
    std::fprintf(stderr, "les run: -t must be >= 0 (0 = all cores), got %d\n", o.n_threads);
    return 2;
  }
  if (o.n_predict < -1) {
    std::fprintf(stderr, "les run: -n must be >= -1 (-1 = until end of text), got %d\n", o.n_predict);
    return 2;
  }
  // 1 TiB: far beyond any device, and exactly representable in the uint64 byte count.
  constexpr double kMaxBudgetMib = 1024.0 * 1024.0;
  if (!std::isfinite(o.budget_mb) || o.budget_mb < 0 || o.budget_mb > kMaxBudgetMib) {
    std::fprintf(stderr, "les run: --budget-mb must be a number in [0, %.0f] (MiB; 0 = all experts resident), got %g\n",
                 kMaxBudgetMib, o.budget_mb);
    return 2;
  }
  if (o.prefetch_c < -1) {
    std::fprintf(stderr, "les run: --prefetch-c must be -1 (k+2), 0 (on-demand reads) or k..2k, got %d\n",
                 o.prefetch_c);
    return 2;
  }
  if (o.budget_mb == 0 && (o.stats || o.prefetch_c != -1 || o.io != "auto" || o.eviction != "lfu_aged"))
    std::fprintf(stderr, "les run: note: --stats, --prefetch-c, --io and --eviction only apply with --budget-mb > 0\n");
  o.sp.penalty_last_n = o.repeat_last_n;
  o.sp.seed = o.seed >= 0 ? static_cast<uint64_t>(o.seed) : std::random_device{}();
  if (Status s = validate(o.sp); !s.ok()) {
    std::fprintf(stderr, "les run: %s\n", s.message().c_str());
    return 2;
  }

  if (o.model.empty()) {
    auto def = ensure_default_model();
    if (!def.ok()) return fail("embedded default model", def.status());
    std::fprintf(stderr,
                 "les run: no -m given: using the embedded default, a random-weight %s (%d layers, %d experts) at "
                 "%s%s; its output is not meaningful text\n",
                 def->preset.arch.c_str(), def->preset.n_layer, def->preset.n_expert, def->path.c_str(),
                 def->generated ? " (generated now)" : "");
    o.model = def->path;
  }

  les_model_params mp = les_model_default_params();
  mp.n_threads = o.n_threads;
  mp.log_callback = log_to_stderr;
  // A positive budget never rounds down to 0 (which would mean "resident"): it
  // stays positive and is refused below the minimum with the minimum named.
  mp.expert_budget_bytes = static_cast<uint64_t>(std::ceil(o.budget_mb * 1024.0 * 1024.0));
  mp.prefetch_candidates = o.prefetch_c;
  mp.io_backend = o.io == "io_uring" ? LES_IO_IO_URING : o.io == "pread" ? LES_IO_PREAD : LES_IO_AUTO;
  mp.eviction = o.eviction == "lru" ? LES_EVICTION_LRU : LES_EVICTION_LFU_AGED;
  ModelHandle model;
  if (les_status st = les_model_load(o.model.c_str(), &mp, &model.p); st != LES_OK)
    return fail_c("loading " + o.model, st, les_last_error());
  const bool streaming = o.budget_mb > 0 && les_model_n_expert(model.p) > 0;
  if (o.budget_mb > 0 && !streaming)
    std::fprintf(stderr, "les run: note: %s has no routed experts; --budget-mb ignored, all weights resident\n",
                 o.model.c_str());
  les_context_params cp = les_context_default_params();
  cp.n_ctx = o.n_ctx;
  cp.n_threads = o.n_threads;
  ContextHandle ctx;
  if (les_status st = les_context_create(model.p, &cp, &ctx.p); st != LES_OK)
    return fail_c("creating the context", st, les_last_error(),
                  st == LES_ERR_INVALID_ARGUMENT ? 2 : 1);
  std::string desc(static_cast<size_t>(std::max(les_model_desc(model.p, nullptr, 0), 0)) + 1, '\0');
  desc.resize(static_cast<size_t>(std::max(les_model_desc(model.p, desc.data(), desc.size()), 0)));
  char streamed[96] = "";
  if (streaming) std::snprintf(streamed, sizeof streamed, ", experts streamed (budget %.1f MiB)", o.budget_mb);
  std::fprintf(stderr, "les run: %s, n_ctx %d, seed %llu%s\n", desc.c_str(), les_context_n_ctx(ctx.p),
               static_cast<unsigned long long>(o.sp.seed), streamed);

  les_generate_params gp = les_generate_default_params();
  gp.n_predict = o.n_predict;
  gp.ignore_eos = o.ignore_eos;
  gp.sampler.temperature = o.sp.temperature;
  gp.sampler.top_k = o.sp.top_k;
  gp.sampler.top_p = o.sp.top_p;
  gp.sampler.min_p = o.sp.min_p;
  gp.sampler.repeat_penalty = o.sp.repeat_penalty;
  gp.sampler.presence_penalty = o.sp.presence_penalty;
  gp.sampler.frequency_penalty = o.sp.frequency_penalty;
  gp.sampler.penalty_last_n = o.sp.penalty_last_n;
  gp.sampler.seed = o.sp.seed;
  std::vector<const char*> stops;
  for (const std::string& s : o.stop) stops.push_back(s.c_str());
  gp.stop = stops.empty() ? nullptr : stops.data();
  gp.n_stop = static_cast<int32_t>(stops.size());
  const les_status st = les_generate(ctx.p, o.prompt.c_str(), &gp, print_piece, nullptr);
  std::fputc('\n', stderr);
  // A full context ends generation like n_predict does: what fit was printed.
  if (st != LES_OK && st != LES_ERR_CONTEXT_FULL) return fail_c("generation", st, les_context_last_error(ctx.p));
  les_generate_stats stats{};
  stats.struct_size = sizeof stats;
  if (les_status s = les_context_generate_stats(ctx.p, &stats); s != LES_OK)
    return fail_c("statistics", s, les_last_error());
  std::fprintf(stderr,
               "les run: prompt tokens %d, generated %d (stop: %s)\n"
               "les run: prefill %.2f tok/s (%.1f ms), decode %.2f tok/s (%d tokens, %.1f ms)\n"
               "les run: peak RSS %.1f MiB\n",
               stats.n_prompt_tokens, stats.n_generated, les_stop_reason_name(stats.stop_reason),
               stats.prefill_tokens_per_second, stats.prefill_seconds * 1e3, stats.decode_tokens_per_second,
               stats.n_decoded, stats.decode_seconds * 1e3, peak_rss_mib());
  if (o.stats && streaming) return print_stream_stats(model.p, ctx.p, o.io);
  return 0;
}

}  // namespace

void register_run(CLI::App& app, ToolState& state) {
  auto* cmd = app.add_subcommand("run", "Generate text from a GGUF model (streams to stdout)");
  auto o = std::make_shared<RunOptions>();
  cmd->add_option("-m,--model", o->model, "GGUF model file (default: the embedded random-weight tiny qwen3moe)");
  cmd->add_option("-p,--prompt", o->prompt, "Prompt text")->capture_default_str();
  cmd->add_option("-n,--n-predict", o->n_predict, "Tokens to generate (-1 = until end of text)")->capture_default_str();
  cmd->add_option("--temp", o->sp.temperature, "Temperature (0 = greedy)")->capture_default_str();
  cmd->add_option("--top-k", o->sp.top_k, "Top-k (0 = off)")->capture_default_str();
  cmd->add_option("--top-p", o->sp.top_p, "Top-p in (0, 1] (1 = off)")->capture_default_str();
  cmd->add_option("--min-p", o->sp.min_p, "Min-p in [0, 1] (0 = off)")->capture_default_str();
  cmd->add_option("--repeat-penalty", o->sp.repeat_penalty, "Repetition penalty (1 = off)")->capture_default_str();
  cmd->add_option("--repeat-last-n", o->repeat_last_n, "Tokens the penalties look back over")->capture_default_str();
  cmd->add_option("--presence-penalty", o->sp.presence_penalty, "Presence penalty (0 = off)")->capture_default_str();
  cmd->add_option("--frequency-penalty", o->sp.frequency_penalty, "Frequency penalty (0 = off)")->capture_default_str();
  cmd->add_option("-s,--seed", o->seed, "RNG seed (-1 = random)")->capture_default_str();
  cmd->add_option("-t,--threads", o->n_threads, "Compute threads (0 = all cores)")->capture_default_str();
  cmd->add_option("-c,--ctx", o->n_ctx, "Context size in tokens (0 = min(model's, 4096))")->capture_default_str();
  cmd->add_flag("--ignore-eos", o->ignore_eos, "Keep generating past end-of-text tokens");
  cmd->add_option("--budget-mb", o->budget_mb,
                  "Stream routed experts from the file within this memory budget in MiB (cache + read buffers + "
                  "scheduler scratch; 0 = all resident)")
      ->capture_default_str();
  cmd->add_option("--prefetch-c", o->prefetch_c,
                  "Lookahead candidates per token, k..2k (-1 = k+2, 0 = on-demand reads only)")
      ->capture_default_str();
  cmd->add_option("--io", o->io, "I/O backend for streamed experts: auto, pread, io_uring")
      ->check(CLI::IsMember({"auto", "pread", "io_uring"}))
      ->capture_default_str();
  cmd->add_option("--eviction", o->eviction, "Expert cache eviction: lru, lfu_aged")
      ->check(CLI::IsMember({"lru", "lfu_aged"}))
      ->capture_default_str();
  cmd->add_flag("--stats", o->stats, "Print expert-streaming statistics (with --budget-mb)");
  cmd->add_option("--stop", o->stop, "Stop string (repeatable); the text stops before it")->allow_extra_args(false);
  cmd->callback([&state, o] { state.exit_code = run(*o); });
}

}  // namespace les::tool
