// Every scalar vec_dot against a float64 dot of the dequantised operands, on
// seeded random blocks and on edge patterns (all-zero and all-one quant bits,
// zero scales), for row lengths of 1, 3 and many blocks.
//
// Tolerance, derived per case from the inputs (u = eps_f32 / 2):
// * Quantised types. The reference sums exact int32 block sums and forms one
//   F32 term per block (<= 3 roundings each) and adds nb terms in order, so it
//   is within ~(nb + 3) u sum_b |t_b| of the exact value of its own formula.
//   The float64 oracle uses dequantised values; each weight w_i = a_i - b_i
//   (scale part minus min part) is rounded <= 3 times relative to
//   |a_i| + |b_i| <= |w_i| + 2 |b_i|. Together:
//     tol = (nb + 4) * eps_f32 * sum_i (|w_i| + 2 |b_i|) |x_i|
//   with b_i the min part (0 for symmetric formats).
// * Q8_1 additionally stores s = F16(d * sum q) with the unrounded F32 d, so
//   the min term m * s differs from m * sum_i x_i by the documented amount
//     sum_b |m_b| * |s_b - F16to32(d_b) * sum q_b|, added to tol.
// * F32/F16/BF16: products are exact in F64 and summed in F64, then rounded
//   once: tol = eps_f32 * sum_i |w_i x_i|.

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/ggml_type.h"
#include "kernels/ref.h"
#include "kernels/tiers.h"

namespace {

using les::GgmlType;
using namespace les::kernels;

constexpr double kEpsF32 = std::numeric_limits<float>::epsilon();

enum class Pattern { random, zeros, ones, zero_scale };

// Overwrites the F16 scale fields of a block of random bytes with sane values.
template <typename B>
void set_scales(B& b, std::mt19937& rng, Pattern p) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  if constexpr (requires { b.d; }) b.d = les::fp32_to_fp16(p == Pattern::zero_scale ? 0.0f : 0.02f * u(rng));
  if constexpr (requires { b.dmin; }) b.dmin = les::fp32_to_fp16(0.01f * std::fabs(u(rng)));
  if constexpr (requires { b.m; }) b.m = les::fp32_to_fp16(0.5f * u(rng));
  if constexpr (requires { b.e; }) b.e = static_cast<uint8_t>(p == Pattern::zero_scale ? 0 : 118 + rng() % 8);  // E8M0
}

// Zeroes the quant bits of an affine block so that dequantising it gives the min part.
template <typename B>
void zero_codes(B& b) {
  if constexpr (requires { b.qs; }) std::memset(b.qs, 0, sizeof(b.qs));
  if constexpr (requires { b.qh; }) std::memset(b.qh, 0, sizeof(b.qh));
}

template <typename B>
constexpr bool kAffine = requires(B b) { b.dmin; } || requires(B b) { b.m; };

struct Operands {
  std::vector<uint8_t> w, x;          // raw rows
  std::vector<float> wdeq, xdeq, wmin;  // dequantised; |min part| per weight element
};

template <typename B>
Operands make_quantised(const KernelTable& t, GgmlType type, int64_t n, std::mt19937& rng, Pattern p) {
  Operands o;
  const int64_t nb = n / les::ggml_type_traits(type).block_size;
  std::vector<B> blocks(nb);
  std::uniform_int_distribution<int> byte(0, 255);
  for (B& b : blocks) {
    auto* raw = reinterpret_cast<uint8_t*>(&b);
    for (size_t i = 0; i < sizeof(B); ++i) {
      raw[i] = p == Pattern::zeros ? 0 : p == Pattern::ones ? 0xFF : static_cast<uint8_t>(byte(rng));
    }
    set_scales(b, rng, p);
  }
  o.w.resize(nb * sizeof(B));
  std::memcpy(o.w.data(), blocks.data(), o.w.size());
  o.wdeq.resize(n);
  t.of(type).dequantize_row(o.w.data(), o.wdeq.data(), n);
  o.wmin.assign(n, 0.0f);
  if constexpr (kAffine<B>) {
    for (B& b : blocks) zero_codes(b);
    t.of(type).dequantize_row(blocks.data(), o.wmin.data(), n);
    for (float& v : o.wmin) v = std::fabs(v);
  }
  return o;
}

// Random activations (N(0,1) with a few x20 outliers) in the vec_dot_type of `type`.
void make_activations(const KernelTable& t, GgmlType type, int64_t n, std::mt19937& rng, Operands& o) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = g(rng) * (i % 97 == 5 ? 20.0f : 1.0f);
  const GgmlType xt = t.of(type).vec_dot_type;
  o.x.resize(*les::ggml_row_bytes(xt, n));
  t.of(xt).quantize_row(x.data(), o.x.data(), n);
  o.xdeq.resize(n);
  t.of(xt).dequantize_row(o.x.data(), o.xdeq.data(), n);
}

// The Q8_1 s-field term of the tolerance (header comment).
double q8_1_s_error(const Operands& o, GgmlType type, int64_t n) {
  if (type != GgmlType::Q4_1 && type != GgmlType::Q5_1) return 0;
  const auto* x = reinterpret_cast<const les::block_q8_1*>(o.x.data());
  double e = 0;
  for (int64_t b = 0; b < n / 32; ++b) {
    int sum = 0;
    for (int i = 0; i < 32; ++i) sum += x[b].qs[i];
    const double exact = static_cast<double>(les::fp16_to_fp32(x[b].d)) * sum;
    e += o.wmin[b * 32] * std::fabs(static_cast<double>(les::fp16_to_fp32(x[b].s)) - exact);
  }
  return e;
}

void check_dot(const KernelTable& t, GgmlType type, const Operands& o, int64_t n, bool is_float) {
  double exact = 0, mag = 0, mag_affine = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double w = o.wdeq[i], x = o.xdeq[i];
    exact += w * x;
    mag += std::fabs(w * x);
    mag_affine += (std::fabs(w) + 2.0 * o.wmin[i]) * std::fabs(x);
  }
  const double nb = static_cast<double>(n / les::ggml_type_traits(type).block_size);
  const double tol = is_float ? kEpsF32 * mag : (nb + 4) * kEpsF32 * mag_affine + q8_1_s_error(o, type, n);
  float s = std::nanf("");
  t.of(type).vec_dot(n, &s, o.w.data(), o.x.data());
  INFO(les::ggml_type_name(type) << " n=" << n << " got " << s << " exact " << exact << " tol " << tol);
  CHECK(std::fabs(static_cast<double>(s) - exact) <= tol);
}

template <typename B>
void run_quantised(const KernelTable& t, GgmlType type) {
  const int64_t bs = les::ggml_type_traits(type).block_size;
  const int64_t lengths[] = {bs, 3 * bs, bs == 32 ? 1024 : 2048};
  const Pattern patterns[] = {Pattern::random, Pattern::random, Pattern::random,
                              Pattern::zeros, Pattern::ones, Pattern::zero_scale};
  uint32_t seed = 1234;
  for (int64_t n : lengths) {
    for (Pattern p : patterns) {
      std::mt19937 rng(seed++);
      Operands o = make_quantised<B>(t, type, n, rng, p);
      make_activations(t, type, n, rng, o);
      check_dot(t, type, o, n, false);
    }
  }
}

void run_float(const KernelTable& t, GgmlType type) {
  for (int64_t n : {1, 7, 33, 1000}) {
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::vector<float> wf(n);
    for (float& v : wf) v = g(rng);
    Operands o;
    o.w.resize(*les::ggml_row_bytes(type, n));
    t.of(type).quantize_row(wf.data(), o.w.data(), n);  // same format for weights and activations
    o.wdeq.resize(n);
    t.of(type).dequantize_row(o.w.data(), o.wdeq.data(), n);
    o.wmin.assign(n, 0.0f);
    make_activations(t, type, n, rng, o);
    check_dot(t, type, o, n, true);
  }
}

}  // namespace

TEST_CASE("every scalar vec_dot matches a float64 dot of the dequantised operands", "[kernels][vec_dot]") {
  KernelTable t;
  fill_scalar_table(t);
  SECTION("Q4_0") { run_quantised<les::block_q4_0>(t, GgmlType::Q4_0); }
  SECTION("Q4_1") { run_quantised<les::block_q4_1>(t, GgmlType::Q4_1); }
  SECTION("Q5_0") { run_quantised<les::block_q5_0>(t, GgmlType::Q5_0); }
  SECTION("Q5_1") { run_quantised<les::block_q5_1>(t, GgmlType::Q5_1); }
  SECTION("Q8_0") { run_quantised<les::block_q8_0>(t, GgmlType::Q8_0); }
  SECTION("IQ4_NL") { run_quantised<les::block_iq4_nl>(t, GgmlType::IQ4_NL); }
  SECTION("Q2_K") { run_quantised<les::block_q2_K>(t, GgmlType::Q2_K); }
  SECTION("Q3_K") { run_quantised<les::block_q3_K>(t, GgmlType::Q3_K); }
  SECTION("Q4_K") { run_quantised<les::block_q4_K>(t, GgmlType::Q4_K); }
  SECTION("Q5_K") { run_quantised<les::block_q5_K>(t, GgmlType::Q5_K); }
  SECTION("Q6_K") { run_quantised<les::block_q6_K>(t, GgmlType::Q6_K); }
  SECTION("IQ4_XS") { run_quantised<les::block_iq4_xs>(t, GgmlType::IQ4_XS); }
  SECTION("MXFP4") { run_quantised<les::block_mxfp4>(t, GgmlType::MXFP4); }
  SECTION("TQ1_0") { run_quantised<les::block_tq1_0>(t, GgmlType::TQ1_0); }
  SECTION("TQ2_0") { run_quantised<les::block_tq2_0>(t, GgmlType::TQ2_0); }
  SECTION("F32") { run_float(t, GgmlType::F32); }
  SECTION("F16") { run_float(t, GgmlType::F16); }
  SECTION("BF16") { run_float(t, GgmlType::BF16); }
}

TEST_CASE("scalar table: every weight type with a vec_dot has its activation quantiser", "[kernels][vec_dot]") {
  KernelTable t;
  fill_scalar_table(t);
  CHECK(t.tier == KernelTier::scalar);
  int with_dot = 0;
  for (uint32_t id = 0; id < les::kGgmlTypeCount; ++id) {
    const TypeKernels& k = t.types[id];
    if (k.vec_dot == nullptr) continue;
    ++with_dot;
    INFO("type id " << id);
    CHECK(k.dequantize_row != nullptr);
    CHECK(t.of(k.vec_dot_type).quantize_row != nullptr);
    CHECK(t.of(k.vec_dot_type).dequantize_row != nullptr);
  }
  CHECK(with_dot == 25);  // 16 + the 7 lattice i-quants + TQ1_0, TQ2_0
}
