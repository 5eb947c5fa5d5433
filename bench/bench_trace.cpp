// Replays a recorded expert-routing trace (route_trace v1, e.g.
// ../shared/fixtures/traces/*.route.csv) through LES's own expert cache.
//
// Cache only (default): hit rate and bytes a miss would read, for every budget
// of --budgets-mb, for each of LES's eviction policies (the one `les run` uses
// is marked default), the published per-layer policy (layer_lfu: an equal
// byte share per layer, least frequent first inside a layer;
// trace/layer_lfu_evictor.h) and the offline optimum (optimal: Belady, evict
// the entry used furthest in the future, computed in the same run over the
// same cache and accounting). Accounting: src/trace/cache_replay.h (the traces' README:
// one lookup per distinct expert of a (token, layer), prefill warms, decode
// counted, a group's own entries never evicted, budget = bytes of expert data).
//
//   bench_trace --trace FILE [--budgets-mb 500,1000,2000] [--policy NAME ...]
//               [--recall R [--candidates C] [--seed S] [--prefetch [--prefetch-gate G]]]
//               [--half-life H] [--timing N] [--json]
//
// --recall R: the lookahead predictor's hints are simulated (each true expert
// of the next layer named with probability R, the list filled to C with other
// experts; trace/simulated_lookahead.h); they inform eviction only, unless
// --prefetch: then uncached candidates the engine's prefetch gate admits are
// read ahead as the engine reads them (hit rate = lookups that found their
// expert cached or read ahead; bytes = demand misses + prefetches; JSON adds
// prefetch_hits, prefetch_bytes, prefetch_unused_bytes). --timing N
// replays each (budget, policy) N more times and reports the median wall time
// of the cache bookkeeping and policy per decoded token. --half-life H changes
// next_use's frequency half-life (a sensitivity check; les run always uses
// the built-in constant).
//
// --json prints one object: the trace's shape, then "results": one
// {"budget_mb", "policy", "default", "hit_rate", "bytes_read"} per budget and
// policy (hit rate over decode lookups, bytes over the decode misses).
// Without --json the same as a table. It measures and prints; it asserts nothing.
//
// End to end (--model FILE.gguf, a file of the trace's shape: the
// 30B-A3B-shaped `les synth --preset qwen3-30b-a3b` for the Qwen3-30B-A3B
// trace): a real forward pass computes exactly the trace's experts of every
// (token, layer), reading them from disk under each budget
// (src/trace/e2e_replay.h), for one configuration (--config):
//   ondemand_lru  lru eviction, no lookahead (every miss a demand read)
//   default       LES's default policy, lookahead c and prefetch gate, the
//                 predictor SIMULATED at --recall R (default 0.886), its wrong
//                 candidates drawn by --fillers: popular (default: weighted by
//                 1 + their layer's selections in the trace's prompt, as a real
//                 predictor's near misses are often popular experts) or
//                 uniform (any other expert; the pessimistic variant);
//                 --prefetch-gate G overrides the engine's gate (0 = none)
//   resident      experts from the file's memory map (read into the page
//                 cache first): the compute reference, budgets ignored
// --recall 1.0 with default gives the ceiling of a perfect predictor. Prints
// decode tok/s, bytes read per token, hit rate, I/O wait per token and the
// disk's sequential O_DIRECT rate measured in the same process. Timing: run
// it alone on the machine (bench/trace_e2e.py runs each cell in a fresh
// process, page cache dropped, under `flock -x`).
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench_support.h"
#include "core/model/model.h"
#include "sched/eviction_policy.h"
#include "trace/cache_replay.h"
#include "trace/e2e_replay.h"
#include "trace/route_trace.h"

namespace {

using les::trace::ReplayPolicy;

struct Args {
  std::string trace;
  std::string budgets = "500,1000,2000,3000,4000,6000,8000";
  std::vector<std::string> policies;
  double recall = -1;
  int32_t candidates = 0;
  uint64_t seed = 1;
  double half_life = les::sched::kNextUseHalfLife;
  int timing = 0;
  bool json = false;
  bool prefetch = false;
  // end to end
  std::string model;
  std::string config = "default";
  std::string fillers = "popular";
  double prefetch_gate = les::sched::kDefaultPrefetchGate;
  int threads = 2;
  int tokens = 0;
  double disk_probe_mib = 1024;
};

struct Row {
  double budget_mb;
  ReplayPolicy policy;
  les::trace::ReplayResult r;
  double ns_per_token = 0;
};

int fail(const std::string& what) {
  std::fprintf(stderr, "bench_trace: %s\n", what.c_str());
  return 1;
}

// End-to-end mode: one configuration, every budget (or one resident run).
int run_end_to_end(const Args& a, const les::trace::RouteTrace& trace, const std::vector<double>& budgets) {
  const bool resident = a.config == "resident";
  les::ModelParams mp;
  mp.n_threads = a.threads;
  auto model = les::Model::load(a.model, mp);
  if (!model.ok()) return fail("loading " + a.model + ": " + model.status().to_string());
  const les::Status shape = les::trace::check_trace_shape(**model, trace);
  if (!shape.ok()) return fail(a.trace + " cannot drive " + a.model + ": " + shape.to_string());
  if (resident && les::bench::warm_page_cache(a.model) < 0) return fail("cannot read " + a.model);
  const double disk =
      les::bench::sequential_read_bandwidth(a.model, static_cast<uint64_t>(a.disk_probe_mib * 1024 * 1024), 1);
  if (disk <= 0) return fail("disk probe: cannot read " + a.model + " with O_DIRECT");
  nlohmann::ordered_json j;
  j["trace"] = a.trace;
  j["mode"] = "end_to_end";
  j["model"] = a.model.substr(a.model.find_last_of('/') + 1);
  j["config"] = a.config;
  j["threads"] = a.threads;
  char recall[32];
  std::snprintf(recall, sizeof recall, "%.3f", a.recall);
  j["hints"] = a.config == "default" ? std::string("SIMULATED (each true expert of the next layer named with "
                                                   "probability r = ") +
                                           recall + ", the rest of its c candidates other experts drawn " +
                                           (a.fillers == "uniform" ? "uniformly"
                                                                   : "by their layer's popularity in the trace's prompt") +
                                           "; the real predictor still runs for its cost, its candidates are replaced)"
                                     : "none (on-demand reads)";
  if (a.config == "resident") j["hints"] = "none (resident experts)";
  j["disk_seq_bytes_per_s"] = disk;
  if (!a.json)
    std::printf("end to end: %s, %s, %d threads; lookahead predictor: %s\n", j["model"].get<std::string>().c_str(),
                a.config.c_str(), a.threads, j["hints"].get<std::string>().c_str());
  nlohmann::ordered_json res = nlohmann::ordered_json::array();
  for (double b : resident ? std::vector<double>{0} : budgets) {
    les::trace::E2eOptions o;
    o.budget_bytes = static_cast<size_t>(b * 1024.0 * 1024.0);
    o.n_threads = a.threads;
    o.decode_tokens = a.tokens;
    o.seed = a.seed;
    if (a.config == "ondemand_lru") {
      o.policy = les::sched::EvictionPolicy::lru;
      o.prefetch_c = 0;
    } else {
      o.recall = a.recall;
      o.prefetch_c = a.candidates > 0 ? a.candidates : -1;
      o.fillers = a.fillers == "uniform" ? les::trace::FillerDraw::uniform : les::trace::FillerDraw::prompt_popularity;
      o.prefetch_gate = a.prefetch_gate;
    }
    auto r = les::trace::replay_end_to_end(**model, trace, o);
    if (!r.ok()) return fail(r.status().to_string());
    const double n = std::max(r->decode_tokens, 1);
    nlohmann::ordered_json e;
    e["budget_mb"] = resident ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(b);
    e["config"] = a.config;
    e["policy"] = resident ? "-" : les::sched::eviction_policy_name(o.policy);
    e["prefetch_c"] = r->prefetch_c;
    e["recall"] = a.config == "default" ? nlohmann::ordered_json(a.recall) : nlohmann::ordered_json(nullptr);
    e["measured_recall"] = r->mean_recall;
    e["fillers"] = a.config == "default" ? nlohmann::ordered_json(a.fillers) : nlohmann::ordered_json(nullptr);
    e["prefetch_gate"] = a.config == "default" ? nlohmann::ordered_json(a.prefetch_gate) : nlohmann::ordered_json(nullptr);
    e["prefetch_gated_per_token"] = static_cast<double>(r->prefetch_gated) / n;
    e["prompt_tokens"] = r->prompt_tokens;
    e["decode_tokens"] = r->decode_tokens;
    e["decode_tok_per_s"] = r->decode_tok_per_s();
    e["bytes_read_per_token"] = static_cast<double>(r->bytes_read) / n;
    e["hit_rate"] = r->hit_rate;
    e["cache_hits"] = r->hits;
    e["inflight_hits"] = r->inflight_hits;
    e["misses"] = r->misses;
    e["prefetch_unused_bytes_per_token"] = static_cast<double>(r->prefetch_unused_bytes) / n;
    e["io_wait_s_per_token"] = r->io_wait_seconds / n;
    e["compute_s_per_token"] = (r->decode_seconds - r->io_wait_seconds) / n;
    e["disk_term_s_per_token"] = static_cast<double>(r->bytes_read) / n / disk;
    e["user_cpu_s_per_token"] = r->user_cpu_seconds / n;
    e["sys_cpu_s_per_token"] = r->sys_cpu_seconds / n;
    e["major_faults_per_token"] = static_cast<double>(r->major_faults) / n;
    e["run_queue_wait_s_per_token"] = r->run_queue_wait_seconds / n;
    e["other_cpu_s_per_token"] = r->other_cpu_seconds / n;
    e["involuntary_switches_per_token"] = static_cast<double>(r->involuntary_switches) / n;
    e["prefetch_experts"] = r->prefetch_experts;
    e["demand_experts"] = r->demand_experts;
    res.push_back(e);
    if (!a.json)
      std::printf("%-12s %8s MiB  %7.3f tok/s  %8.1f MiB/token  hit %5.1f%%  I/O wait %6.3f s/token  recall %.3f\n",
                  a.config.c_str(), resident ? "-" : std::to_string(static_cast<int>(b)).c_str(),
                  r->decode_tok_per_s(), static_cast<double>(r->bytes_read) / n / (1024.0 * 1024.0),
                  100.0 * r->hit_rate, r->io_wait_seconds / n, r->mean_recall);
  }
  j["results"] = res;
  if (a.json) std::printf("%s\n", j.dump(2).c_str());
  return 0;
}

bool parse_budgets(const std::string& s, std::vector<double>& out) {
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end == nullptr || *end != '\0' || !(v > 0) || v > 1024.0 * 1024.0) return false;
    out.push_back(v);
  }
  return !out.empty();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Replay a route trace through LES's expert cache"};
  app.add_option("--trace", a.trace, "route_trace v1 file")->required();
  app.add_option("--budgets-mb", a.budgets, "Comma-separated budgets in MiB of expert data");
  app.add_option("--policy", a.policies, "Policy to replay (repeatable): adaptive, next_use, lfu_aged, lru, layer_lfu, optimal; default all");
  app.add_option("--recall", a.recall, "Simulate lookahead hints of this recall (0..1)")->check(CLI::Range(0.0, 1.0));
  app.add_option("--candidates", a.candidates, "Hint list length c (default k + 2)")->check(CLI::Range(1, 1 << 16));
  app.add_option("--seed", a.seed, "Seed of the simulated predictor");
  app.add_option("--half-life", a.half_life, "next_use frequency half-life in tokens (sensitivity check)")
      ->check(CLI::Range(0.01, 1e6));
  app.add_option("--timing", a.timing, "Replay each cell N more times and report ns per token")->check(CLI::Range(0, 1000));
  app.add_flag("--json", a.json, "Print one JSON object");
  app.add_flag("--prefetch", a.prefetch, "Cache only, with --recall: read admitted candidates ahead as the engine does");
  app.add_option("--model", a.model, "End to end: a GGUF of the trace's shape (e.g. les synth --preset qwen3-30b-a3b)");
  app.add_option("--config", a.config, "End to end: ondemand_lru, default or resident")
      ->check(CLI::IsMember({"ondemand_lru", "default", "resident"}));
  app.add_option("--fillers", a.fillers, "End to end: the simulated predictor's wrong candidates, popular or uniform")
      ->check(CLI::IsMember({"popular", "uniform"}));
  app.add_option("--prefetch-gate", a.prefetch_gate, "The engine's prefetch gate (0 = read every candidate; end to end, or cache only with --prefetch)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--threads", a.threads, "End to end: compute threads")->check(CLI::Range(1, 256));
  app.add_option("--tokens", a.tokens, "End to end: decode tokens (0 = all of the trace)")->check(CLI::Range(0, 1 << 20));
  app.add_option("--disk-probe-mib", a.disk_probe_mib, "End to end: MiB read by the disk-rate probe")
      ->check(CLI::Range(8.0, 1e6));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::vector<double> budgets;
  if (!parse_budgets(a.budgets, budgets)) {
    std::fprintf(stderr, "bench_trace: --budgets-mb wants positive numbers separated by commas, got '%s'\n",
                 a.budgets.c_str());
    return 2;
  }
  std::vector<ReplayPolicy> policies;
  if (a.policies.empty()) {
    for (auto p : les::sched::all_eviction_policies()) policies.push_back(p);
    for (const ReplayPolicy& p : les::trace::reference_replay_policies()) policies.push_back(p);
  }
  for (const std::string& name : a.policies) {
    auto p = les::trace::parse_replay_policy(name);
    if (!p.ok()) {
      std::fprintf(stderr, "bench_trace: --policy: %s\n", p.status().message().c_str());
      return 2;
    }
    policies.push_back(*p);
  }
  if (a.prefetch && a.recall < 0) {
    std::fprintf(stderr, "bench_trace: --prefetch needs --recall (the simulated hints it reads ahead)\n");
    return 2;
  }
  auto trace = les::trace::read_route_trace(a.trace);
  if (!trace.ok()) return fail(trace.status().to_string());
  if (!a.model.empty()) {
    if (a.config == "default" && a.recall < 0) a.recall = 0.886;
    return run_end_to_end(a, *trace, budgets);
  }

  std::vector<Row> rows;
  for (double b : budgets) {
    for (const ReplayPolicy& p : policies) {
      les::trace::ReplayOptions o;
      o.budget_bytes = static_cast<size_t>(b * 1024.0 * 1024.0);
      o.policy = p;
      o.recall = a.recall;
      o.candidates = a.candidates;
      o.seed = a.seed;
      o.next_use_half_life = a.half_life;
      o.prefetch = a.prefetch;
      o.prefetch_gate = a.prefetch_gate;
      auto r = les::trace::replay_cache(*trace, o);
      if (!r.ok()) return fail(r.status().to_string());
      Row row{b, p, *r, 0};
      if (a.timing > 0) {
        std::vector<double> ns;
        for (int i = 0; i < a.timing; ++i) {
          auto again = les::trace::replay_cache(*trace, o);
          if (!again.ok()) return fail(again.status().to_string());
          ns.push_back(again->seconds * 1e9 / static_cast<double>(std::max<uint64_t>(again->decode_tokens, 1)));
        }
        row.ns_per_token = median(ns);
      }
      rows.push_back(row);
    }
  }

  const ReplayPolicy def = les::sched::kDefaultEvictionPolicy;
  if (a.json) {
    nlohmann::ordered_json j;
    j["trace"] = a.trace;
    j["mode"] = "cache";
    j["arch"] = trace->arch;
    j["n_layer"] = trace->n_layer;
    j["n_expert"] = trace->n_expert;
    j["n_expert_used"] = trace->n_expert_used;
    j["decode_tokens"] = trace->n_decode_tokens();
    j["decode_lookups"] = trace->n_decode_lookups();
    j["one_token_bytes"] = trace->one_token_bytes();
    j["next_use_half_life"] = a.half_life;
    if (a.recall >= 0) {
      j["recall"] = a.recall;
      j["hints"] = "simulated";
      j["candidates"] = a.candidates > 0 ? a.candidates
                                         : std::min(trace->n_expert_used + 2, std::min(2 * trace->n_expert_used, trace->n_expert));
      j["seed"] = a.seed;
      j["prefetch"] = a.prefetch;
      if (a.prefetch) j["prefetch_gate"] = a.prefetch_gate;
    }
    nlohmann::ordered_json res = nlohmann::ordered_json::array();
    for (const Row& r : rows) {
      nlohmann::ordered_json e;
      e["budget_mb"] = r.budget_mb;
      e["policy"] = les::trace::replay_policy_name(r.policy);
      e["default"] = r.policy == def;
      e["hit_rate"] = r.r.hit_rate();
      e["bytes_read"] = r.r.bytes_read;
      if (a.prefetch) {
        e["prefetch_hits"] = r.r.prefetch_hits;
        e["prefetch_bytes"] = r.r.prefetch_bytes;
        e["prefetch_unused_bytes"] = r.r.prefetch_unused_bytes;
      }
      res.push_back(e);
    }
    j["results"] = res;
    if (a.timing > 0) {
      nlohmann::ordered_json t = nlohmann::ordered_json::array();
      for (const Row& r : rows)
        t.push_back({{"budget_mb", r.budget_mb}, {"policy", les::trace::replay_policy_name(r.policy)},
                     {"ns_per_token", r.ns_per_token}, {"repeats", a.timing}});
      j["timing"] = t;
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("trace %s: %s, %d layers, %d experts, top-%d, %d decode tokens (%zu lookups); one token's experts %.0f MiB\n",
              a.trace.c_str(), trace->arch.c_str(), trace->n_layer, trace->n_expert, trace->n_expert_used,
              trace->n_decode_tokens(), trace->n_decode_lookups(),
              static_cast<double>(trace->one_token_bytes()) / (1024.0 * 1024.0));
  if (a.recall >= 0)
    std::printf("hints: SIMULATED lookahead predictor, recall %.3f, seed %llu (%s)\n", a.recall,
                static_cast<unsigned long long>(a.seed),
                a.prefetch ? "read ahead through the prefetch gate; hits include entries read ahead"
                           : "they inform eviction only");
  std::printf("%10s", "budget MiB");
  for (const ReplayPolicy& p : policies)
    std::printf("  %16s", (les::trace::replay_policy_name(p) + (p == def ? "*" : "")).c_str());
  std::printf("\n");
  for (size_t i = 0; i < rows.size(); i += policies.size()) {
    std::printf("%10.0f", rows[i].budget_mb);
    for (size_t j = 0; j < policies.size(); ++j) {
      const Row& r = rows[i + j];
      std::printf("  %6.1f%% %6.0fMiB", 100.0 * r.r.hit_rate(), static_cast<double>(r.r.bytes_read) / (1024.0 * 1024.0));
    }
    std::printf("\n");
  }
  std::printf("(hit rate of decode lookups, MiB read by decode %s; * = the default policy)\n",
              a.prefetch ? "misses and prefetches" : "misses");
  if (a.timing > 0) {
    std::printf("cache + policy bookkeeping, ns per decoded token (median of %d replays):\n", a.timing);
    for (const Row& r : rows)
      std::printf("  %6.0f MiB %-10s %8.0f ns\n", r.budget_mb, les::trace::replay_policy_name(r.policy).c_str(),
                  r.ns_per_token);
  }
  return 0;
}
