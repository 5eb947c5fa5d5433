// OpKernels (kernels.h): every SIMD tier this machine runs equals the scalar
// reference bit for bit (ggml's vectorised exp and the F16 attention sums in
// ggml's lane orders), including tails (head dims not multiples of 16),
// n_kv below and above the 16 / 64 lane rows, unaligned K/V rows, exp
// inputs down to the underflow range and up to overflow, and the F16 rounding
// of floats (ties, subnormals, overflow, inf, NaN).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernel_tiers.h"
#include "kernels/fp16.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"

using namespace les;
using namespace les::kernels;

namespace {

bool same_bits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

float half_exact(float x) { return fp16_to_fp32(fp32_to_fp16(x)); }

}  // namespace

TEST_CASE("scalar exp16 is expf_ggml and close to exp", "[op_kernels]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  REQUIRE(s != nullptr);
  float x[16], y[16];
  for (int i = 0; i < 16; ++i) x[i] = -20.0f + 2.5f * static_cast<float>(i);
  s->ops.exp16(x, y);
  for (int i = 0; i < 16; ++i) {
    CHECK(y[i] == ops::expf_ggml(x[i]));
    CHECK(std::fabs(y[i] - std::exp(x[i])) <= 4e-7f * std::exp(x[i]));
  }
}

TEST_CASE("SIMD exp16 equals the scalar reference bit for bit", "[op_kernels]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> wide(-110.0f, 95.0f), softmax_range(-30.0f, 0.0f);
  for (const KernelTable* t : les::test::simd_tables()) {
    INFO(kernel_tier_name(t->tier));
    for (int rep = 0; rep < 4000; ++rep) {
      float x[16], a[16], b[16];
      for (float& v : x) v = rep % 2 ? wide(rng) : softmax_range(rng);
      if (rep == 0) {  // edges: 0, underflow to subnormals and 0, overflow, -inf (masked lanes)
        const float e[16] = {0.0f, -0.0f, -87.0f, -87.4f, -88.0f, -100.0f, -103.9f, -104.0f,
                             -200.0f, 88.5f, 88.8f, 89.0f, 200.0f, -INFINITY, 1e-8f, -1e-8f};
        std::memcpy(x, e, sizeof x);
      }
      s->ops.exp16(x, a);
      t->ops.exp16(x, b);
      INFO("rep " << rep);
      REQUIRE(same_bits(a, b, 16));
    }
    float x[16];  // in place
    for (float& v : x) v = softmax_range(rng);
    float ref[16];
    s->ops.exp16(x, ref);
    t->ops.exp16(x, x);
    CHECK(same_bits(x, ref, 16));
  }
}

TEST_CASE("round_f16 is fp32_to_fp16 and back in every tier, specials included", "[op_kernels]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  REQUIRE(s != nullptr);
  std::mt19937 rng(5);
  std::uniform_int_distribution<uint32_t> bits;  // every float bit pattern, NaNs included
  std::vector<float> x;
  // Edges: signed zeros, F16 max and the first float that rounds to inf, ties
  // between halves (even and odd mantissa), F16 subnormals and their ties,
  // below half the smallest subnormal, inf, quiet and signalling NaN.
  for (uint32_t w : {0x00000000u, 0x80000000u, 0x477FE000u, 0x477FEFFFu, 0x477FF000u, 0x3F801000u, 0x3F803000u,
                     0x33800000u, 0x33C00000u, 0x34200000u, 0x33000000u, 0x32FFFFFFu, 0x387FC000u, 0x7F800000u,
                     0xFF800000u, 0x7FC00001u, 0x7F800001u, 0xFFA12345u})
    x.push_back(fp32_from_bits(w));
  for (int i = 0; i < 4000; ++i) x.push_back(fp32_from_bits(bits(rng)));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int i = 0; i < 1000; ++i) x.push_back(nd(rng));
  std::vector<float> want(x);
  for (float& v : want) v = fp16_to_fp32(fp32_to_fp16(v));
  std::vector<float> got(x);
  s->ops.round_f16(got.data(), static_cast<int64_t>(got.size()));
  CHECK(same_bits(got.data(), want.data(), got.size()));
  for (const KernelTable* t : les::test::simd_tables()) {
    INFO(kernel_tier_name(t->tier));
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{8}, int64_t{9}, int64_t{23},
                      static_cast<int64_t>(x.size())}) {
      INFO("n " << n);
      std::vector<float> a(x), b(x);  // elements past n stay untouched
      s->ops.round_f16(a.data(), n);
      t->ops.round_f16(b.data(), n);
      CHECK(same_bits(a.data(), b.data(), a.size()));
    }
  }
}

TEST_CASE("SIMD F16 attention sums equal the scalar reference bit for bit", "[op_kernels]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_real_distribution<float> ud(0.0f, 1.0f);
  for (const KernelTable* t : les::test::simd_tables()) {
    INFO(kernel_tier_name(t->tier));
    for (int head_dim : {16, 40, 64, 128, 200}) {
      for (int64_t n_kv : {1, 5, 16, 17, 63, 64, 65, 130, 300}) {
        for (bool vec_dot : {false, true}) {
          INFO("head_dim " << head_dim << " n_kv " << n_kv << " vec_dot " << vec_dot);
          // K/V rows of head_dim halves, 1 byte off any alignment, 6 spare halves per row
          const int64_t stride = 2 * head_dim + 12;
          std::vector<uint8_t> k(static_cast<size_t>(n_kv * stride + 1)), v(k.size());
          for (int64_t j = 0; j < n_kv; ++j)
            for (int d = 0; d < head_dim; ++d) {
              const fp16_t hk = fp32_to_fp16(nd(rng)), hv = fp32_to_fp16(nd(rng));
              std::memcpy(k.data() + 1 + j * stride + 2 * d, &hk, 2);
              std::memcpy(v.data() + 1 + j * stride + 2 * d, &hv, 2);
            }
          std::vector<float> q(static_cast<size_t>(head_dim)), p(static_cast<size_t>(n_kv));
          for (float& x : q) x = half_exact(nd(rng));
          for (int64_t j = 0; j < n_kv; ++j)  // probabilities incl. exact zeros and F16 subnormals
            p[static_cast<size_t>(j)] = j % 7 == 3 ? 0.0f : half_exact(j % 5 == 1 ? 1e-7f * ud(rng) : ud(rng));
          std::vector<float> sa(static_cast<size_t>(n_kv)), sb(sa.size());
          s->ops.attn_f16_kq(q.data(), k.data() + 1, stride, n_kv, head_dim, vec_dot, sa.data());
          t->ops.attn_f16_kq(q.data(), k.data() + 1, stride, n_kv, head_dim, vec_dot, sb.data());
          CHECK(same_bits(sa.data(), sb.data(), sa.size()));
          std::vector<float> oa(static_cast<size_t>(head_dim) + 1, NAN), ob(oa);
          std::vector<float> scratch(static_cast<size_t>(op_kernels_kqv_scratch(head_dim)), NAN);
          s->ops.attn_f16_kqv(p.data(), v.data() + 1, stride, n_kv, head_dim, vec_dot, oa.data(), scratch.data());
          t->ops.attn_f16_kqv(p.data(), v.data() + 1, stride, n_kv, head_dim, vec_dot, ob.data(), scratch.data());
          CHECK(same_bits(oa.data(), ob.data(), oa.size()));  // incl. the untouched element past the end
          CHECK(std::isnan(ob.back()));
        }
      }
    }
  }
}

TEST_CASE("scalar F16 attention sums are the plain dot products up to rounding", "[op_kernels]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  const int head_dim = 128;
  const int64_t n_kv = 100;
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<fp16_t> k(static_cast<size_t>(n_kv * head_dim));
  for (auto& h : k) h = fp32_to_fp16(nd(rng));
  std::vector<float> q(head_dim), sc(static_cast<size_t>(n_kv)), out(head_dim),
      scratch(static_cast<size_t>(op_kernels_kqv_scratch(head_dim)));
  for (float& x : q) x = half_exact(nd(rng));
  for (bool vec_dot : {false, true}) {
    s->ops.attn_f16_kq(q.data(), reinterpret_cast<const uint8_t*>(k.data()), 2 * head_dim, n_kv, head_dim, vec_dot,
                       sc.data());
    for (int64_t j = 0; j < n_kv; ++j) {
      double e = 0, a = 0;
      for (int d = 0; d < head_dim; ++d) {
        const double pr = double(q[d]) * fp16_to_fp32(k[static_cast<size_t>(j * head_dim + d)]);
        e += pr;
        a += std::fabs(pr);
      }
      CHECK(std::fabs(sc[static_cast<size_t>(j)] - e) <= 1e-6 * a + 1e-30);
    }
    // V = K, p = ones / n_kv rounded to F16: out[d] ~ column mean
    std::vector<float> p(static_cast<size_t>(n_kv), half_exact(1.0f / 128.0f));
    s->ops.attn_f16_kqv(p.data(), reinterpret_cast<const uint8_t*>(k.data()), 2 * head_dim, n_kv, head_dim, vec_dot,
                        out.data(), scratch.data());
    for (int d = 0; d < head_dim; ++d) {
      double e = 0, a = 0;
      for (int64_t j = 0; j < n_kv; ++j) {
        const double pr = double(p[0]) * fp16_to_fp32(k[static_cast<size_t>(j * head_dim + d)]);
        e += pr;
        a += std::fabs(pr);
      }
      CHECK(std::fabs(out[d] - e) <= 1e-6 * a + 1e-30);
    }
  }
}
