// Scalar reference dot products (see ref.h for the exact integer and float
// evaluation order that SIMD kernels are tested against).

#include <cmath>
#include "kernels/block_elements.h"
#include "kernels/ref.h"
#include "kernels/unaligned.h"

namespace les::kernels {

using namespace les::blocks;

namespace {

// Weight blocks of 32 against Q8_0 (isum * (dw * dx) per block).
template <typename Block, typename CodeFn>
float dot_32_q8_0(int64_t n, const void* vw, const void* vx, CodeFn code) {
  float acc = 0.0f;
  for (int64_t b = 0; b < n / 32; ++b) {
    const Block wb = load_unaligned<Block>(vw, b);
    const block_q8_0 xb = load_unaligned<block_q8_0>(vx, b);
    int32_t isum = 0;
    for (int e = 0; e < 32; ++e) isum += code(wb, e) * xb.qs[e];
    const float scale = fp16_to_fp32(wb.d) * fp16_to_fp32(xb.d);
    const float term = static_cast<float>(isum) * scale;
    acc += term;
  }
  return acc;
}

// Affine weight blocks of 32 (d, m) against Q8_1: isum * (dw * dx) + mw * sx.
template <typename Block, typename CodeFn>
float dot_32_q8_1(int64_t n, const void* vw, const void* vx, CodeFn code) {
  float acc = 0.0f;
  for (int64_t b = 0; b < n / 32; ++b) {
    const Block wb = load_unaligned<Block>(vw, b);
    const block_q8_1 xb = load_unaligned<block_q8_1>(vx, b);
    int32_t isum = 0;
    for (int e = 0; e < 32; ++e) isum += code(wb, e) * xb.qs[e];
    const float scale = fp16_to_fp32(wb.d) * fp16_to_fp32(xb.d);
    const float term = static_cast<float>(isum) * scale;
    const float min_term = fp16_to_fp32(wb.m) * fp16_to_fp32(xb.s);
    acc += term;
    acc += min_term;
  }
  return acc;
}

// Sum of Q8_K codes over elements [first, first + count), count a multiple of 16, via bsums.
int32_t q8_K_bsum(const block_q8_K& x, int first, int count) {
  int32_t s = 0;
  for (int i = first / 16; i < (first + count) / 16; ++i) s += x.bsums[i];
  return s;
}

// Per-block float accumulation of a K-quant dot (ref.h): acc += isum * (dx * dw),
// then, for the formats with a dmin field, acc -= msum * (dx * dmin).
template <typename Block, typename SumsFn>
float dot_k_q8_K(int64_t n, const void* vw, const void* vx, SumsFn sums) {
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const Block wb = load_unaligned<Block>(vw, b);
    const block_q8_K xb = load_unaligned<block_q8_K>(vx, b);
    const KQuantBlockSums s = sums(wb, xb);
    const float d = xb.d * fp16_to_fp32(wb.d);
    const float term = static_cast<float>(s.isum) * d;
    acc += term;
    if constexpr (requires { wb.dmin; }) {
      const float dmin = xb.d * fp16_to_fp32(wb.dmin);
      const float min_term = static_cast<float>(s.msum) * dmin;
      acc -= min_term;
    }
  }
  return acc;
}

}  // namespace

// ---- K-quant integer block sums ----

KQuantBlockSums block_sums_q2_K_q8_K_ref(const block_q2_K& w, const block_q8_K& x) {
  KQuantBlockSums r;
  for (int j = 0; j < 16; ++j) {
    int32_t sub = 0;
    for (int e = 16 * j; e < 16 * j + 16; ++e) sub += q2_K_code(w, e) * x.qs[e];
    r.isum += q2_K_scale(w, j) * sub;
    r.msum += q2_K_min(w, j) * q8_K_bsum(x, 16 * j, 16);
  }
  return r;
}

KQuantBlockSums block_sums_q3_K_q8_K_ref(const block_q3_K& w, const block_q8_K& x) {
  KQuantBlockSums r;
  for (int j = 0; j < 16; ++j) {
    int32_t sub = 0;
    for (int e = 16 * j; e < 16 * j + 16; ++e) sub += q3_K_code(w, e) * x.qs[e];
    r.isum += q3_K_scale(w, j) * sub;
  }
  return r;
}

KQuantBlockSums block_sums_q4_K_q8_K_ref(const block_q4_K& w, const block_q8_K& x) {
  KQuantBlockSums r;
  for (int j = 0; j < 8; ++j) {
    int sc = 0, m = 0;
    k4_scale_min(w.scales, j, sc, m);
    int32_t sub = 0;
    for (int e = 32 * j; e < 32 * j + 32; ++e) sub += q4_K_code(w, e) * x.qs[e];
    r.isum += sc * sub;
    r.msum += m * q8_K_bsum(x, 32 * j, 32);
  }
  return r;
}

KQuantBlockSums block_sums_q5_K_q8_K_ref(const block_q5_K& w, const block_q8_K& x) {
  KQuantBlockSums r;
  for (int j = 0; j < 8; ++j) {
    int sc = 0, m = 0;
    k4_scale_min(w.scales, j, sc, m);
    int32_t sub = 0;
    for (int e = 32 * j; e < 32 * j + 32; ++e) sub += q5_K_code(w, e) * x.qs[e];
    r.isum += sc * sub;
    r.msum += m * q8_K_bsum(x, 32 * j, 32);
  }
  return r;
}

KQuantBlockSums block_sums_q6_K_q8_K_ref(const block_q6_K& w, const block_q8_K& x) {
  KQuantBlockSums r;
  for (int j = 0; j < 16; ++j) {
    int32_t sub = 0;
    for (int e = 16 * j; e < 16 * j + 16; ++e) sub += q6_K_code(w, e) * x.qs[e];
    r.isum += q6_K_scale(w, j) * sub;
  }
  return r;
}

// ---- dot products ----

void vec_dot_f32_ref(int64_t n, float* s, const void* w, const void* x) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    acc += static_cast<double>(load_unaligned<float>(w, i)) * static_cast<double>(load_unaligned<float>(x, i));
  }
  *s = static_cast<float>(acc);
}

void vec_dot_f16_ref(int64_t n, float* s, const void* w, const void* x) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    acc += static_cast<double>(fp16_to_fp32(load_unaligned<fp16_t>(w, i))) *
           static_cast<double>(fp16_to_fp32(load_unaligned<fp16_t>(x, i)));
  }
  *s = static_cast<float>(acc);
}

void vec_dot_bf16_ref(int64_t n, float* s, const void* w, const void* x) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    acc += static_cast<double>(bf16_to_fp32(load_unaligned<bf16_t>(w, i))) *
           static_cast<double>(bf16_to_fp32(load_unaligned<bf16_t>(x, i)));
  }
  *s = static_cast<float>(acc);
}

void vec_dot_q4_0_q8_0_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_32_q8_0<block_q4_0>(n, w, x, q4_0_code);
}

void vec_dot_q5_0_q8_0_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_32_q8_0<block_q5_0>(n, w, x, q5_0_code);
}

// Q8_0 x Q8_0 in the float order of ggml's x86 kernel (and of our AVX2 and
// AVX-512 tiers): 8 lanes, lane l holding the integer sum of elements
// 4l..4l+3 of each block, accumulated acc[l] = fma(dw * dx, isum_l, acc[l])
// block after block, then summed as ((a0+a4) + (a2+a6)) + ((a1+a5) + (a3+a7)).
// Q8_0 models re-quantise every matmul input, so the last bit matters here.
void vec_dot_q8_0_q8_0_ref(int64_t n, float* s, const void* vw, const void* vx) {
  float acc[8] = {};
  for (int64_t b = 0; b < n / 32; ++b) {
    const block_q8_0 wb = load_unaligned<block_q8_0>(vw, b);
    const block_q8_0 xb = load_unaligned<block_q8_0>(vx, b);
    const float d = fp16_to_fp32(wb.d) * fp16_to_fp32(xb.d);
    for (int l = 0; l < 8; ++l) {
      int32_t isum = 0;
      for (int j = 4 * l; j < 4 * l + 4; ++j) isum += int{wb.qs[j]} * int{xb.qs[j]};
      acc[l] = std::fma(d, static_cast<float>(isum), acc[l]);
    }
  }
  *s = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

void vec_dot_iq4_nl_q8_0_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_32_q8_0<block_iq4_nl>(n, w, x, iq4_nl_code);
}

void vec_dot_q4_1_q8_1_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_32_q8_1<block_q4_1>(n, w, x, q4_1_code);
}

void vec_dot_q5_1_q8_1_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_32_q8_1<block_q5_1>(n, w, x, q5_1_code);
}

void vec_dot_q2_K_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_k_q8_K<block_q2_K>(n, w, x, block_sums_q2_K_q8_K_ref);
}

void vec_dot_q3_K_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_k_q8_K<block_q3_K>(n, w, x, block_sums_q3_K_q8_K_ref);
}

void vec_dot_q4_K_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_k_q8_K<block_q4_K>(n, w, x, block_sums_q4_K_q8_K_ref);
}

void vec_dot_q5_K_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_k_q8_K<block_q5_K>(n, w, x, block_sums_q5_K_q8_K_ref);
}

void vec_dot_q6_K_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_k_q8_K<block_q6_K>(n, w, x, block_sums_q6_K_q8_K_ref);
}

}  // namespace les::kernels
