// Throughput of the scalar reference kernels (src/kernels/ref.h): weight
// quantisation (MB/s of F32 input), dequantisation (MB/s of F32 output), and
// the scalar-tier vec_dot (GB/s of weight bytes, plus elements/s).
//
// Working set: one 4096-element row of N(0,1) weights (16 KiB of F32, in L1/L2),
// repeated; these are reference-speed numbers, the baseline the SIMD tiers and
// `les quantize` are compared against. No correctness checks here (see
// tests/kernels/). Run: bench_quantize_ref [--json] [--benchmark_filter=Q4_K] (Google
// Benchmark's options; --json = --benchmark_format=json).

#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/tiers.h"
#include "kernels/weight_quantizers.h"

namespace {

using les::GgmlType;
using namespace les::kernels;

constexpr int64_t kN = 4096;

std::vector<float> gaussian_row(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(kN);
  for (float& v : x) v = g(rng);
  return x;
}

const KernelTable& scalar_table() {
  static const KernelTable t = [] {
    KernelTable k;
    fill_scalar_table(k);
    return k;
  }();
  return t;
}

void BM_quantize_weights(benchmark::State& state, GgmlType type, bool importance) {
  const auto x = gaussian_row(1);
  const auto imp = gaussian_row(2);
  std::vector<float> w(kN);
  for (int64_t i = 0; i < kN; ++i) w[i] = imp[i] * imp[i];
  std::vector<uint8_t> q(*les::ggml_row_bytes(type, kN));
  const QuantizeWeightsFn f = reference_weight_quantizer(type);
  for (auto _ : state) {
    f(x.data(), q.data(), kN, importance ? w.data() : nullptr);
    benchmark::DoNotOptimize(q.data());
  }
  state.SetBytesProcessed(state.iterations() * kN * static_cast<int64_t>(sizeof(float)));
}

void BM_dequantize(benchmark::State& state, GgmlType type) {
  const auto x = gaussian_row(1);
  std::vector<uint8_t> q(*les::ggml_row_bytes(type, kN));
  reference_weight_quantizer(type)(x.data(), q.data(), kN, nullptr);
  std::vector<float> y(kN);
  const auto deq = scalar_table().of(type).dequantize_row;
  for (auto _ : state) {
    deq(q.data(), y.data(), kN);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * kN * static_cast<int64_t>(sizeof(float)));
}

void BM_vec_dot(benchmark::State& state, GgmlType type) {
  const auto w = gaussian_row(1);
  const auto x = gaussian_row(3);
  const TypeKernels& k = scalar_table().of(type);
  std::vector<uint8_t> wq(*les::ggml_row_bytes(type, kN));
  reference_weight_quantizer(type)(w.data(), wq.data(), kN, nullptr);
  std::vector<uint8_t> xq(*les::ggml_row_bytes(k.vec_dot_type, kN));
  scalar_table().of(k.vec_dot_type).quantize_row(x.data(), xq.data(), kN);
  float s = 0;
  for (auto _ : state) {
    k.vec_dot(kN, &s, wq.data(), xq.data());
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(wq.size()));
  state.SetItemsProcessed(state.iterations() * kN);
}

constexpr GgmlType kTypes[] = {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                               GgmlType::Q8_0, GgmlType::IQ4_NL, GgmlType::Q2_K, GgmlType::Q3_K,
                               GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::F16,
                               GgmlType::BF16, GgmlType::F32};

void register_all() {
  for (GgmlType t : kTypes) {
    const std::string name = les::ggml_type_name(t);
    benchmark::RegisterBenchmark(("quantize_weights/" + name).c_str(), BM_quantize_weights, t, false);
    benchmark::RegisterBenchmark(("quantize_weights_imatrix/" + name).c_str(), BM_quantize_weights, t, true);
    benchmark::RegisterBenchmark(("dequantize/" + name).c_str(), BM_dequantize, t);
    benchmark::RegisterBenchmark(("vec_dot_scalar/" + name).c_str(), BM_vec_dot, t);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // --json (the option every bench binary takes) is Google Benchmark's
  // --benchmark_format=json; the banner then goes to stderr so stdout is JSON.
  std::vector<std::string> args(argv, argv + argc);
  bool json = false;
  for (auto& a : args)
    if (a == "--json") {
      a = "--benchmark_format=json";
      json = true;
    }
  std::vector<char*> av;
  for (auto& a : args) av.push_back(a.data());
  av.push_back(nullptr);
  int ac = argc;
  std::fprintf(json ? stderr : stdout,
               "bench_quantize_ref: scalar reference kernels, row of %lld elements, single thread\n",
               static_cast<long long>(kN));
  register_all();
  benchmark::Initialize(&ac, av.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
