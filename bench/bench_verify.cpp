// Cost of a speculative verify pass of n rows against a one-token decode, on a
// resident model (issue 13: does a k-row pass cost ~k one-row passes?).
//
//   bench_verify --model PATH [--past 128] [--rows 1,2,3,4,5,6,8] [--reps 200] [--threads 2] [--prefill] [--json]
//
// The context first decodes --past tokens (fixed ids spread over the
// vocabulary); then, for every n of --rows, interleaved in rounds, one
// Context::decode of n fixed tokens at that position exactly as the verifier
// runs it (all rows' logits, rows_as_decode) followed by trim() back, so
// every pass starts at the same position. Per n: the median and minimum
// milliseconds per pass over --reps repetitions (after 10 warm-up rounds), and
// the ratio of the median to the one-row median (n = 1 is a plain decode: the
// last row's logits only). Also the expert union of each n (distinct (layer,
// expert) pairs), since routed-expert work grows with the union, not with n.
// --prefill times the same passes as a prefill chunk runs them instead (the
// last row's logits only, attention in batch order), to separate what a
// verify pass pays per row for every row's logits and the one-token order.
// It measures and prints; it asserts nothing. Time it under an exclusive hold
// of the machine (flock -x /work/cpu.lock).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_support.h"
#include "core/model/context.h"
#include "core/model/model.h"

namespace {

using les::bench::Clock;
using les::bench::seconds_since;

std::vector<int> parse_list(const char* s) {
  std::vector<int> out;
  for (const char* p = s; *p;) {
    out.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

int fail(const les::Status& s) {
  std::fprintf(stderr, "bench_verify: %s\n", s.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_path;
  int n_past = 128, reps = 200, threads = 2;
  std::vector<int> rows{1, 2, 3, 4, 5, 6, 8};
  bool json = false, prefill = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") json = true;
    else if (a == "--prefill") prefill = true;
    else if (a == "--model" && i + 1 < argc) model_path = argv[++i];
    else if (a == "--past" && i + 1 < argc) n_past = std::atoi(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--rows" && i + 1 < argc) rows = parse_list(argv[++i]);
    else {
      std::fprintf(stderr, "usage: bench_verify --model PATH [--past N] [--rows 1,2,4] [--reps N] [--threads N] [--prefill] [--json]\n");
      return 2;
    }
  }
  if (model_path.empty() || n_past < 1 || reps < 1 || rows.empty() ||
      std::any_of(rows.begin(), rows.end(), [](int n) { return n < 1 || n > 64; })) {
    std::fprintf(stderr, "bench_verify: --model is required; --past, --reps >= 1; --rows in 1..64\n");
    return 2;
  }
  les::ModelParams mp;
  mp.n_threads = threads;
  auto model = les::Model::load(model_path, mp);
  if (!model.ok()) return fail(model.status());
  const int32_t n_vocab = (*model)->hparams().n_vocab;
  const int max_rows = *std::max_element(rows.begin(), rows.end());
  les::ContextParams cp;
  cp.n_ctx = n_past + max_rows + 1;
  cp.n_threads = threads;
  auto ctx = les::Context::create(**model, cp);
  if (!ctx.ok()) return fail(ctx.status());
  les::Context& c = **ctx;
  std::vector<int32_t> ids(static_cast<size_t>(n_past + max_rows));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7919 + 13) % static_cast<size_t>(n_vocab));
  if (auto s = c.decode(std::span<const int32_t>(ids.data(), static_cast<size_t>(n_past))); !s.ok()) return fail(s);

  std::vector<std::vector<double>> ms(rows.size());
  std::vector<int64_t> union_experts(rows.size());
  const std::span<const int32_t> tail(ids.data() + n_past, static_cast<size_t>(max_rows));
  for (int round = -10; round < reps; ++round) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const int n = rows[i];
      const auto t0 = Clock::now();
      if (auto s = c.decode(tail.first(static_cast<size_t>(n)), /*all_logits=*/n > 1 && !prefill,
                              /*rows_as_decode=*/!prefill);
          !s.ok())
        return fail(s);
      const double sec = seconds_since(t0);
      union_experts[i] = c.last_expert_union().experts;
      if (auto s = c.trim(n_past); !s.ok()) return fail(s);
      if (round >= 0) ms[i].push_back(sec * 1e3);
    }
  }
  const double base = median(ms[0]);
  nlohmann::json out = nlohmann::json::array();
  if (!json)
    std::printf("%s, %d threads, position %d, %d reps%s\n| rows | median ms | min ms | / 1-row median | expert union |\n"
                "|---:|---:|---:|---:|---:|\n",
                model_path.c_str(), threads, n_past, reps, prefill ? ", prefill passes" : ", verify passes");
  for (size_t i = 0; i < rows.size(); ++i) {
    const double med = median(ms[i]), mn = *std::min_element(ms[i].begin(), ms[i].end());
    if (json)
      out.push_back({{"rows", rows[i]}, {"median_ms", med}, {"min_ms", mn}, {"ratio", med / base},
                     {"union_experts", union_experts[i]}});
    else
      std::printf("| %d | %.3f | %.3f | %.2f | %lld |\n", rows[i], med, mn, med / base,
                  static_cast<long long>(union_experts[i]));
  }
  if (json) std::printf("%s\n", out.dump(1).c_str());
  return 0;
}
