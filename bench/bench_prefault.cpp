// Time to a streaming context's first token with the expert cache faulted in
// synchronously (a progress callback given: les_context_create() returns once
// every page is in) against in the background (no callback: it returns at
// once and a thread faults the pages in while the prompt runs; les.h,
// les_context_params.progress_callback).
//
//   bench_prefault --model PATH [--budget-mb 2048] [--threads 2] [--prompt 16]
//                  [--tokens 16] [--reps 3] [--json]
//
// Per repetition and mode (the modes interleaved: sync, background, sync, ...,
// after one untimed warm-up of each), on one loaded model:
//  * create: les_context_create() wall time;
//  * prefill: one les_context_decode() of --prompt tokens (ids spread over the
//    vocabulary, fixed);
//  * first token = create + prefill (the first generated token is sampled from
//    that prefill's logits);
//  * decode: --tokens single-token decodes after it (tok/s), which in the
//    background mode may still share the CPU with the fault-in;
//  * free: les_context_free() wall time (the background mode stops its thread).
// Medians are printed per mode; the synchronous mode is the reference (the
// ratio background / sync). Run it on a quiet machine (flock -x /work/cpu.lock
// here). It measures and prints; it asserts nothing.
#include <les/les.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_support.h"

namespace {

using les::bench::Clock;
using les::bench::load_average;
using les::bench::seconds_since;

struct Options {
  std::string model;
  double budget_mb = 2048;
  int threads = 2;
  int prompt = 16;
  int tokens = 16;
  int reps = 3;
  bool json = false;
};

struct Sample {
  double create_ms = 0, prefill_ms = 0, first_token_ms = 0, decode_tok_s = 0, free_ms = 0;
};

bool keep_going(float, void*) { return true; }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// One repetition; false (with a message) when a call fails.
bool run_once(les_model* model, const Options& o, bool synchronous, Sample& s) {
  les_context_params cp = les_context_default_params();
  cp.n_ctx = 256;
  cp.n_threads = o.threads;
  cp.expert_budget_bytes = static_cast<uint64_t>(o.budget_mb * 1024.0 * 1024.0);
  if (synchronous) cp.progress_callback = keep_going;
  les_context* ctx = nullptr;
  auto t0 = Clock::now();
  if (les_context_create(model, &cp, &ctx) != LES_OK) {
    std::fprintf(stderr, "bench_prefault: creating the context: %s\n", les_last_error());
    return false;
  }
  s.create_ms = 1e3 * seconds_since(t0);
  const int32_t n_vocab = les_model_n_vocab(model);
  std::vector<les_token> ids(static_cast<size_t>(o.prompt));
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = static_cast<les_token>((i * 7919 + 13) % static_cast<size_t>(n_vocab));
  t0 = Clock::now();
  bool ok = les_context_decode(ctx, ids.data(), o.prompt) == LES_OK;
  s.prefill_ms = 1e3 * seconds_since(t0);
  s.first_token_ms = s.create_ms + s.prefill_ms;
  t0 = Clock::now();
  for (int i = 0; ok && i < o.tokens; ++i) {
    const les_token t = static_cast<les_token>((i * 104729 + 7) % n_vocab);
    ok = les_context_decode(ctx, &t, 1) == LES_OK;
  }
  const double dec = seconds_since(t0);
  s.decode_tok_s = dec > 0 ? o.tokens / dec : 0;
  if (!ok) std::fprintf(stderr, "bench_prefault: decoding: %s\n", les_context_last_error(ctx));
  t0 = Clock::now();
  les_context_free(ctx);
  s.free_ms = 1e3 * seconds_since(t0);
  return ok;
}

int parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--model" && has) o.model = argv[++i];
    else if (a == "--budget-mb" && has) o.budget_mb = std::atof(argv[++i]);
    else if (a == "--threads" && has) o.threads = std::atoi(argv[++i]);
    else if (a == "--prompt" && has) o.prompt = std::atoi(argv[++i]);
    else if (a == "--tokens" && has) o.tokens = std::atoi(argv[++i]);
    else if (a == "--reps" && has) o.reps = std::atoi(argv[++i]);
    else if (a == "--json") o.json = true;
    else {
      std::fprintf(stderr,
                   "usage: bench_prefault --model PATH [--budget-mb 2048] [--threads 2] [--prompt 16] [--tokens 16] "
                   "[--reps 3] [--json]\n");
      return 2;
    }
  }
  if (o.model.empty() || o.budget_mb <= 0 || o.threads < 0 || o.prompt < 1 || o.tokens < 0 || o.reps < 1) {
    std::fprintf(stderr, "bench_prefault: --model is required; budget > 0, prompt >= 1, reps >= 1\n");
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (int rc = parse(argc, argv, o)) return rc;
  les_model_params mp = les_model_default_params();
  mp.n_threads = o.threads;
  les_model* model = nullptr;
  if (les_model_load(o.model.c_str(), &mp, &model) != LES_OK) {
    std::fprintf(stderr, "bench_prefault: loading %s: %s\n", o.model.c_str(), les_last_error());
    return 1;
  }
  const double load0 = load_average();
  std::vector<Sample> runs[2];  // [0] synchronous, [1] background
  for (int rep = -1; rep < o.reps; ++rep)
    for (int mode = 0; mode < 2; ++mode) {
      Sample s;
      if (!run_once(model, o, mode == 0, s)) return 1;
      if (rep >= 0) runs[mode].push_back(s);
    }
  les_model_free(model);
  nlohmann::json out = {{"model", o.model},    {"budget_mib", o.budget_mb}, {"threads", o.threads},
                        {"prompt", o.prompt},  {"tokens", o.tokens},        {"reps", o.reps},
                        {"load_average", load0}};
  const char* names[2] = {"synchronous", "background"};
  auto med = [&](int mode, double Sample::*f) {
    std::vector<double> v;
    for (const Sample& s : runs[mode]) v.push_back(s.*f);
    return median(v);
  };
  for (int mode = 0; mode < 2; ++mode) {
    nlohmann::json m = {{"create_ms", med(mode, &Sample::create_ms)},
                        {"prefill_ms", med(mode, &Sample::prefill_ms)},
                        {"first_token_ms", med(mode, &Sample::first_token_ms)},
                        {"decode_tok_s", med(mode, &Sample::decode_tok_s)},
                        {"free_ms", med(mode, &Sample::free_ms)}};
    nlohmann::json all = nlohmann::json::array();
    for (const Sample& s : runs[mode])
      all.push_back({s.create_ms, s.prefill_ms, s.first_token_ms, s.decode_tok_s, s.free_ms});
    m["runs_create_prefill_first_decode_free"] = all;
    out[names[mode]] = m;
  }
  if (o.json) {
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("bench_prefault: %s, budget %.0f MiB, %d threads, prompt %d, %d decode tokens, median of %d "
              "(load average %.2f)\n",
              o.model.c_str(), o.budget_mb, o.threads, o.prompt, o.tokens, o.reps, load0);
  std::printf("%-12s %10s %11s %14s %12s %9s\n", "mode", "create ms", "prefill ms", "first token ms", "decode tok/s",
              "free ms");
  for (int mode = 0; mode < 2; ++mode) {
    const auto& m = out[names[mode]];
    std::printf("%-12s %10.1f %11.1f %14.1f %12.2f %9.1f\n", names[mode], m["create_ms"].get<double>(),
                m["prefill_ms"].get<double>(), m["first_token_ms"].get<double>(), m["decode_tok_s"].get<double>(),
                m["free_ms"].get<double>());
  }
  const double s_ft = out["synchronous"]["first_token_ms"].get<double>();
  const double b_ft = out["background"]["first_token_ms"].get<double>();
  if (s_ft > 0) std::printf("first token: background / synchronous = %.3f\n", b_ft / s_ft);
  return 0;
}
