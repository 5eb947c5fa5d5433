// Decode-shaped matvec throughput per weight type and kernel tier, in GB/s of
// weight bytes read, next to the memory-read bandwidth measured in the same
// run with the same thread count.
//
//   bench_kernels [--json] [--types Q4_K,Q3_K,...] [--tiers scalar,avx2,avx512]
//                 [--threads 1,2] [--iters N] [--cols N] [--rows N]
//
// Each weight matrix has `cols` (default 16384) columns and at least 16384
// rows, more if needed so that it is at least 4x the last-level cache (read
// from sysconf / sysfs), so every matvec streams its weights from DRAM. The
// weights are random blocks with small F16 scales (values do not change the
// kernels' speed); --rows fixes the row count instead (e.g. a cache-resident
// matrix, to see the kernels' compute bound). Each (type, tier, threads) does one warm-up matvec and then
// `iters` (default 5) timed ones; gbps is weight bytes / best time.
// bandwidth_gbps is bench_support.h's ReadBandwidthProbe (a vectorised
// load-and-sum) over 1 GiB split across the same number of threads, best of max(5, iters) passes run
// interleaved with that row's timed matvecs, so a shared, loaded machine
// affects both alike; ratio = gbps / bandwidth_gbps.
// It measures and prints; it asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "bench_support.h"
#include "bench_tiers.h"
#include "kernels/block_formats.h"
#include "kernels/cpu_features.h"
#include "kernels/kernels.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;
using les::bench::split;
using namespace les;
using namespace les::kernels;

// Last-level cache size in bytes (L3, else L2), 0 if unknown.
size_t llc_bytes() {
  long v = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  v = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  if (v > 0) return static_cast<size_t>(v);
  for (const char* path : {"/sys/devices/system/cpu/cpu0/cache/index3/size", "/sys/devices/system/cpu/cpu0/cache/index2/size"}) {
    std::ifstream f(path);
    std::string s;
    if (f >> s && !s.empty()) {
      size_t mult = 1;
      if (s.back() == 'K') mult = 1024;
      if (s.back() == 'M') mult = 1024 * 1024;
      return std::strtoull(s.c_str(), nullptr, 10) * mult;
    }
  }
  return 0;
}

// Random weight bytes with every scale field set to a small value (so no
// kernel meets inf/NaN); fast xorshift fill.
void fill_weights(GgmlType t, uint8_t* p, size_t bytes) {
  uint64_t s = 0x9E3779B97F4A7C15ULL;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    std::memcpy(p + i, &s, 8);
  }
  for (; i < bytes; ++i) p[i] = static_cast<uint8_t>(i);
  const auto tr = ggml_type_traits(t);
  const fp16_t small = fp32_to_fp16(0.01f);
  if (!tr.is_quantized) {
    if (t == GgmlType::F16)
      for (size_t k = 0; k + 2 <= bytes; k += 2) {
        const fp16_t v = static_cast<fp16_t>((p[k] & 0x3F) | 0x2000);  // small normal F16
        std::memcpy(p + k, &v, 2);
      }
    return;
  }
  // Offsets of the F16 scale fields inside one block.
  std::vector<size_t> offs;
  switch (t) {
    case GgmlType::Q4_0: case GgmlType::Q5_0: case GgmlType::Q8_0: case GgmlType::IQ4_NL: case GgmlType::IQ4_XS:
      offs = {0};
      break;
    case GgmlType::MXFP4:  // no F16 scale: the E8M0 exponent byte, 2^-8
      for (size_t b = 0; b + tr.block_bytes <= bytes; b += tr.block_bytes) p[b + offsetof(block_mxfp4, e)] = 119;
      break;
    case GgmlType::Q4_1: case GgmlType::Q5_1: case GgmlType::Q4_K: case GgmlType::Q5_K: offs = {0, 2}; break;
    case GgmlType::Q2_K: offs = {offsetof(block_q2_K, d), offsetof(block_q2_K, dmin)}; break;
    case GgmlType::Q3_K: offs = {offsetof(block_q3_K, d)}; break;
    case GgmlType::Q6_K: offs = {offsetof(block_q6_K, d)}; break;
    case GgmlType::IQ2_XXS: case GgmlType::IQ2_XS: case GgmlType::IQ2_S: case GgmlType::IQ3_XXS:
    case GgmlType::IQ3_S: case GgmlType::IQ1_S: offs = {0}; break;
    case GgmlType::IQ1_M:  // d is the top nibbles of the four scale words (bytes 49, 51, 53, 55)
      for (size_t b = 0; b + tr.block_bytes <= bytes; b += tr.block_bytes)
        for (int k = 0; k < 4; ++k) p[b + 49 + 2 * k] = static_cast<uint8_t>((p[b + 49 + 2 * k] & 0x0F) | (((small >> (4 * k)) & 0xF) << 4));
      break;
    default: break;
  }
  for (size_t b = 0; b + tr.block_bytes <= bytes; b += tr.block_bytes)
    for (size_t o : offs) std::memcpy(p + b + o, &small, 2);
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  std::vector<std::string> type_names = {"Q4_K", "Q3_K", "Q8_0", "Q6_K", "Q5_0", "Q4_0", "F16",
                                         "IQ3_XXS", "IQ3_S", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ1_S", "IQ1_M"};
  std::vector<std::string> tier_names;
  const int hw = std::max(1u, std::thread::hardware_concurrency());
  std::vector<int> thread_counts = {1};
  if (hw > 1) thread_counts.push_back(hw);
  int iters = 5;
  int64_t cols = 16384;
  int64_t rows_override = 0;  // --rows: fixed row count (e.g. a cache-resident matrix for profiling)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--json") json = true;
    else if (a == "--types") type_names = split(next());
    else if (a == "--tiers") tier_names = split(next());
    else if (a == "--threads") { thread_counts.clear(); for (auto& s : split(next())) thread_counts.push_back(std::atoi(s.c_str())); }
    else if (a == "--iters") iters = std::max(1, std::atoi(next().c_str()));
    else if (a == "--cols") cols = std::atoll(next().c_str());
    else if (a == "--rows") rows_override = std::atoll(next().c_str());
    else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
  }
  const std::vector<const KernelTable*> tables = les::bench::selected_tiers(tier_names);
  if (tables.empty()) {
    std::fprintf(stderr, "bench_kernels: no tier named by --tiers runs on this CPU\n");
    return 2;
  }
  const size_t llc = llc_bytes();
  const CpuFeatures f = detect_cpu_features();
  std::fprintf(stderr, "# cpu features: %s\n# last-level cache: %zu bytes; hardware threads: %d; cols %lld; iters %d\n",
               cpu_features_string(f).c_str(), llc, hw, static_cast<long long>(cols), iters);

  // The bandwidth probe runs interleaved with the timed matvecs of every row
  // (kernel, probe, kernel, probe, ...), so both see the same machine load;
  // best of max(5, iters) passes.
  les::bench::ReadBandwidthProbe bwbuf(size_t{1} << 30);

  if (json) std::printf("[\n");
  bool first = true;
  for (const std::string& name : type_names) {
    const auto type = ggml_type_from_name(name.c_str());
    if (!type || !weight_type_supported(*type)) { std::fprintf(stderr, "skipping type %s\n", name.c_str()); continue; }
    const auto rb_opt = ggml_row_bytes(*type, cols);
    if (!rb_opt) { std::fprintf(stderr, "cols %lld not valid for %s\n", static_cast<long long>(cols), name.c_str()); continue; }
    const size_t rb = *rb_opt;
    const int64_t rows = rows_override > 0 ? rows_override
                                           : std::max<int64_t>(16384, static_cast<int64_t>((4 * llc + rb - 1) / rb));
    const size_t bytes = rb * static_cast<size_t>(rows);
    std::vector<uint8_t> w(bytes);
    fill_weights(*type, w.data(), bytes);
    std::vector<float> x(static_cast<size_t>(cols)), y(static_cast<size_t>(rows));
    std::mt19937 rng(1);
    std::normal_distribution<float> nd;
    for (auto& v : x) v = nd(rng);
    std::vector<uint8_t> scratch;
    for (const KernelTable* table : tables) {
      for (size_t k = 0; k < thread_counts.size(); ++k) {
        ThreadPool pool(thread_counts[k]);
        matvec(*table, &pool, *type, w.data(), rows, cols, x.data(), y.data(), scratch);  // warm-up
        double best = 1e30, total = 0, bw = 0;
        for (int it = 0; it < std::max(iters, 5); ++it) {
          if (it < iters) {
            const auto t0 = Clock::now();
            matvec(*table, &pool, *type, w.data(), rows, cols, x.data(), y.data(), scratch);
            const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
            best = std::min(best, secs);
            total += secs;
          }
          bw = std::max(bw, bwbuf.pass(thread_counts[k]) / 1e9);
        }
        const double gbps = double(bytes) / best / 1e9;
        const double mean_gbps = double(bytes) * iters / total / 1e9;
        const double ratio = gbps / bw;
        if (json) {
          std::printf("%s  {\"type\": \"%s\", \"path\": \"%s\", \"threads\": %d, \"gbps\": %.3f, \"mean_gbps\": %.3f, "
                      "\"bandwidth_gbps\": %.3f, \"ratio\": %.3f, \"rows\": %lld, \"cols\": %lld, \"weight_bytes\": %zu, "
                      "\"iters\": %d}",
                      first ? "" : ",\n", name.c_str(), kernel_tier_name(table->tier), thread_counts[k], gbps, mean_gbps,
                      bw, ratio, static_cast<long long>(rows), static_cast<long long>(cols), bytes, iters);
        } else {
          std::printf("%-5s %-7s threads %d: %7.2f GB/s (mean %7.2f), bandwidth %7.2f GB/s, ratio %.3f  [%lld x %lld, %.0f MB]\n",
                      name.c_str(), kernel_tier_name(table->tier), thread_counts[k], gbps, mean_gbps, bw, ratio,
                      static_cast<long long>(rows), static_cast<long long>(cols), bytes / 1e6);
        }
        std::fflush(stdout);
        first = false;
      }
    }
  }
  if (json) std::printf("\n]\n");
  return 0;
}
