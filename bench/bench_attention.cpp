// F16 KV-cache attention of one query head (ops::attention_head_f16: scores
// Q·K, softmax, probabilities · V, in ggml's rounding) per kernel tier, next to
// the bound of reading the same K and V bytes measured in the same run.
//
//   bench_attention [--json] [--tiers scalar,avx2,avx512] [--head-dims 64,128]
//                   [--n-kv 64,512,2048] [--iters N]
//
// One head's K and V rows (head_dim halves each, the row stride of a cache with
// two KV heads, as the trained fixture has) stay cache-resident, as they do in
// a prefill where every query row of a chunk walks the same cache. Each case
// (tier, head_dim, n_kv, summation order: "gemm" is a prefill or verify batch,
// "vec_dot" a one-token decode) times `iters` (default 200) calls after one
// warm-up, best of 5 repetitions; interleaved with them, the bound: a
// load-and-sum pass over the same K and V rows (bench_support.h load_sum,
// best of as many passes). gbps = K+V bytes per call / best time; ratio =
// gbps / bound_gbps. Single-threaded: the forward pass splits attention by
// (row, head), one head per thread. It measures and prints; it asserts nothing.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_support.h"
#include "bench_tiers.h"
#include "kernels/fp16.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"

namespace {

using les::bench::Clock;
using les::bench::seconds_since;
using les::bench::split;
using namespace les;
using namespace les::kernels;

std::vector<int64_t> int_list(const std::string& s, const char* flag) {
  std::vector<int64_t> out;
  for (const std::string& e : split(s)) {
    char* end = nullptr;
    const long long v = std::strtoll(e.c_str(), &end, 10);
    if (e.empty() || *end != '\0' || v <= 0 || v > (1 << 20)) {
      std::fprintf(stderr, "bench_attention: %s wants positive integers, got '%s'\n", flag, e.c_str());
      std::exit(2);
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  std::vector<std::string> tier_names;
  std::vector<int64_t> head_dims = {64, 128}, n_kvs = {64, 512, 2048};
  int iters = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--json") json = true;
    else if (a == "--tiers") tier_names = split(next());
    else if (a == "--head-dims") head_dims = int_list(next(), "--head-dims");
    else if (a == "--n-kv") n_kvs = int_list(next(), "--n-kv");
    else if (a == "--iters") iters = static_cast<int>(int_list(next(), "--iters").front());
    else { std::fprintf(stderr, "bench_attention: unknown argument %s\n", a.c_str()); return 2; }
  }
  const std::vector<const KernelTable*> tables = les::bench::selected_tiers(tier_names);
  if (tables.empty()) {
    std::fprintf(stderr, "bench_attention: no tier named by --tiers runs on this CPU\n");
    return 2;
  }
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  if (json) std::printf("[\n");
  bool first = true;
  for (int64_t head_dim : head_dims) {
    for (int64_t n_kv : n_kvs) {
      const int64_t row = 2 * head_dim;  // halves per cache row: two KV heads
      std::vector<fp16_t> k(static_cast<size_t>(n_kv * row)), v(k.size());
      for (auto& h : k) h = fp32_to_fp16(0.3f * nd(rng));
      for (auto& h : v) h = fp32_to_fp16(nd(rng));
      std::vector<float> q(static_cast<size_t>(head_dim)), out(static_cast<size_t>(head_dim));
      for (float& x : q) x = nd(rng);
      std::vector<float> scratch(static_cast<size_t>(ops::attention_head_f16_scratch(n_kv, static_cast<int>(head_dim),
                                                                                     static_cast<int>(head_dim))));
      const double bytes = static_cast<double>(2 * n_kv * head_dim * 2);
      for (const KernelTable* t : tables) {
        for (ops::F16DotOrder order : {ops::F16DotOrder::gemm, ops::F16DotOrder::vec_dot}) {
          auto call = [&] {
            ops::attention_head_f16(q.data(), reinterpret_cast<const uint8_t*>(k.data()), row * 2,
                                    reinterpret_cast<const uint8_t*>(v.data()), row * 2, n_kv,
                                    static_cast<int>(head_dim), static_cast<int>(head_dim), 0.125f, out.data(),
                                    scratch.data(), order, &t->ops);
          };
          auto bound_pass = [&] {  // exactly the head's K and V halves, row by row
            uint64_t s = 0;
            const auto* kw = reinterpret_cast<const uint64_t*>(k.data());
            const auto* vw = reinterpret_cast<const uint64_t*>(v.data());
            const size_t words = static_cast<size_t>(head_dim * 2 / 8);
            for (int64_t j = 0; j < n_kv; ++j) {
              s += les::bench::load_sum(kw + static_cast<size_t>(j * row * 2 / 8), words);
              s += les::bench::load_sum(vw + static_cast<size_t>(j * row * 2 / 8), words);
            }
            return s;
          };
          call();
          volatile uint64_t sink = bound_pass();
          double best = 1e30, best_bound = 1e30;
          for (int rep = 0; rep < 5; ++rep) {
            auto t0 = Clock::now();
            for (int it = 0; it < iters; ++it) call();
            best = std::min(best, seconds_since(t0) / iters);
            t0 = Clock::now();
            for (int it = 0; it < iters; ++it) sink = sink + bound_pass();
            best_bound = std::min(best_bound, seconds_since(t0) / iters);
          }
          (void)sink;
          const double gbps = bytes / best / 1e9, bound = bytes / best_bound / 1e9;
          const char* order_name = order == ops::F16DotOrder::gemm ? "gemm" : "vec_dot";
          if (json) {
            std::printf("%s  {\"tier\": \"%s\", \"head_dim\": %lld, \"n_kv\": %lld, \"order\": \"%s\", "
                        "\"ns_per_call\": %.1f, \"gbps\": %.3f, \"bound_gbps\": %.3f, \"ratio\": %.4f}",
                        first ? "" : ",\n", kernel_tier_name(t->tier), static_cast<long long>(head_dim),
                        static_cast<long long>(n_kv), order_name, best * 1e9, gbps, bound, gbps / bound);
          } else {
            if (first) std::printf("%-7s %8s %6s %-8s %12s %9s %11s %7s\n", "tier", "head_dim", "n_kv", "order",
                                   "ns/call", "GB/s", "bound GB/s", "ratio");
            std::printf("%-7s %8lld %6lld %-8s %12.1f %9.2f %11.2f %7.3f\n", kernel_tier_name(t->tier),
                        static_cast<long long>(head_dim), static_cast<long long>(n_kv), order_name, best * 1e9, gbps,
                        bound, gbps / bound);
          }
          first = false;
        }
      }
    }
  }
  if (json) std::printf("\n]\n");
  return 0;
}
