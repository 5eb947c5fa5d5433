// AVX2 tier: table builder plus the dot products of the plain types and the
// 32-element block formats. K-quants are in avx2_kquants.cpp.
//
// Integer parts are exact (same int32 block sums as ref.h); float parts use
// FMA and 8-lane accumulators, so they differ from the reference only in
// summation order (bounds in tests/kernels/test_simd_vs_scalar.cpp).
#include "kernels/tiers.h"
#include "kernels/x86/avx2_common.h"
#include "kernels/x86/avx2_kernels.h"
#include "kernels/x86/gemm_tiers.h"
#include "kernels/x86/vision_op_tiers.h"

namespace les::kernels {
namespace avx2 {
namespace {

// BF16 -> F32 is a 16-bit left shift of the bits.
inline __m256 bf16x8_to_ps(const bf16_t* p) {
  const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

// Block b of activation row t (rows x_stride bytes apart).
template <typename XBlock>
inline const XBlock& xrow_block(const uint8_t* x, size_t x_stride, int t, int64_t b) {
  return reinterpret_cast<const XBlock*>(x + static_cast<size_t>(t) * x_stride)[b];
}

// The F32 scale of a symmetric 32-block: its F16 d, or MXFP4's halved E8M0 exponent.
template <typename Block>
inline float weight_scale(const Block& b) { return f16(b.d); }
inline float weight_scale(const block_mxfp4& b) { return e8m0_half_to_fp32(b.e); }

// Common loop of the symmetric 32-blocks against Q8_0 for NX activation rows:
// `codes(block)` returns the 32 signed int8 codes, decoded once per block and
// met by every row; row t's block sum (the int32 lanes of dot_s8s8_epi32) is
// scaled by dw * dx_t into row t's own accumulator, so each row gets the bits
// of NX = 1 (the vec_dot).
template <typename Block, int NX, typename Codes>
inline void dot_rows_q8_0(int64_t n, float* s, int64_t s_stride, const void* vw, const void* vx, size_t x_stride,
                          Codes codes) {
  const Block* w = static_cast<const Block*>(vw);
  const uint8_t* x = static_cast<const uint8_t*>(vx);
  __m256 acc[NX];
  for (int t = 0; t < NX; ++t) acc[t] = _mm256_setzero_ps();
  const int64_t nb = n / 32;
  for (int64_t b = 0; b < nb; ++b) {
    const __m256i q = codes(w[b]);
    const __m256i aq = _mm256_sign_epi8(q, q);  // |q|; the sign moves to x (dot_s8s8_epi32)
    const float dw = weight_scale(w[b]);
    for (int t = 0; t < NX; ++t) {
      const block_q8_0& xb = xrow_block<block_q8_0>(x, x_stride, t, b);
      const __m256i isum = dot_u8s8_epi32(aq, _mm256_sign_epi8(loadu(xb.qs), q));
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dw * f16(xb.d)), _mm256_cvtepi32_ps(isum), acc[t]);
    }
  }
  for (int t = 0; t < NX; ++t) s[t * s_stride] = hsum_ps(acc[t]);
}

// Affine 32-blocks (d, m) against Q8_1 for NX rows: isum * (dw * dx) + mw * sx
// per block, codes decoded once per block; per row as NX = 1.
template <typename Block, int NX, typename Codes>
inline void dot_rows_q8_1(int64_t n, float* s, int64_t s_stride, const void* vw, const void* vx, size_t x_stride,
                          Codes codes) {
  const Block* w = static_cast<const Block*>(vw);
  const uint8_t* x = static_cast<const uint8_t*>(vx);
  __m256 acc[NX];
  float acc_m[NX];
  for (int t = 0; t < NX; ++t) {
    acc[t] = _mm256_setzero_ps();
    acc_m[t] = 0.0f;
  }
  const int64_t nb = n / 32;
  for (int64_t b = 0; b < nb; ++b) {
    const __m256i q = codes(w[b]);  // unsigned 0..31
    const float dw = f16(w[b].d), mw = f16(w[b].m);
    for (int t = 0; t < NX; ++t) {
      const block_q8_1& xb = xrow_block<block_q8_1>(x, x_stride, t, b);
      const __m256i isum = dot_u8s8_epi32(q, loadu(xb.qs));
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dw * f16(xb.d)), _mm256_cvtepi32_ps(isum), acc[t]);
      acc_m[t] += mw * f16(xb.s);
    }
  }
  for (int t = 0; t < NX; ++t) s[t * s_stride] = hsum_ps(acc[t]) + acc_m[t];
}

// The int8 codes of each 32-block format.
struct CodesQ8_0 {
  __m256i operator()(const block_q8_0& b) const { return loadu(b.qs); }
};
struct CodesQ4_0 {
  __m256i operator()(const block_q4_0& b) const { return _mm256_sub_epi8(unpack_nibbles32(b.qs), _mm256_set1_epi8(8)); }
};
struct CodesQ5_0 {
  // code = nibble + 16 * bit - 16: with the bit set it is the nibble, with it
  // clear the nibble minus 16, i.e. the nibble with bits 4..7 set (as int8).
  __m256i operator()(const block_q5_0& b) const {
    const __m256i hi = bits_to_bytes(load_u32(b.qh));
    return _mm256_or_si256(unpack_nibbles32(b.qs), _mm256_andnot_si256(hi, _mm256_set1_epi8(static_cast<char>(0xF0))));
  }
};
struct CodesIQ4NL {
  __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4NLValues)));
  __m256i operator()(const block_iq4_nl& b) const { return _mm256_shuffle_epi8(table, unpack_nibbles32(b.qs)); }
};
struct CodesMXFP4 {
  __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kMXFP4Values)));
  __m256i operator()(const block_mxfp4& b) const { return _mm256_shuffle_epi8(table, unpack_nibbles32(b.qs)); }
};
struct CodesQ4_1 {
  __m256i operator()(const block_q4_1& b) const { return unpack_nibbles32(b.qs); }
};
struct CodesQ5_1 {
  __m256i operator()(const block_q5_1& b) const {
    const __m256i hi = bits_to_bytes(load_u32(b.qh));
    return _mm256_or_si256(unpack_nibbles32(b.qs), _mm256_and_si256(hi, _mm256_set1_epi8(0x10)));
  }
};

// VecDotFn and VecDotMultiFn of one 32-block format over dot_rows_q8_0 (Q8 =
// false: dot_rows_q8_1).
template <typename Block, typename Codes, bool Q8_0>
struct Blocks32 {
  template <int NX>
  static void rows(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs) {
    if constexpr (Q8_0) {
      dot_rows_q8_0<Block, NX>(n, s, ss, w, x, xs, Codes{});
    } else {
      dot_rows_q8_1<Block, NX>(n, s, ss, w, x, xs, Codes{});
    }
  }
  static void dot(int64_t n, float* s, const void* w, const void* x) { rows<1>(n, s, 1, w, x, 0); }
  static void multi(int64_t n, float* s, int64_t ss, const void* w, const void* x, size_t xs, int nx) {
    switch (nx) {
      case 1: rows<1>(n, s, ss, w, x, xs); break;
      case 2: rows<2>(n, s, ss, w, x, xs); break;
      case 3: rows<3>(n, s, ss, w, x, xs); break;
      default: rows<4>(n, s, ss, w, x, xs); break;
    }
  }
};
using Q8_0Blocks = Blocks32<block_q8_0, CodesQ8_0, true>;
using Q4_0Blocks = Blocks32<block_q4_0, CodesQ4_0, true>;
using Q5_0Blocks = Blocks32<block_q5_0, CodesQ5_0, true>;
using IQ4NLBlocks = Blocks32<block_iq4_nl, CodesIQ4NL, true>;
using MXFP4Blocks = Blocks32<block_mxfp4, CodesMXFP4, true>;
using Q4_1Blocks = Blocks32<block_q4_1, CodesQ4_1, false>;
using Q5_1Blocks = Blocks32<block_q5_1, CodesQ5_1, false>;

}  // namespace

void vec_dot_f32(int64_t n, float* s, const void* w, const void* x) {
  const float* a = static_cast<const float*>(w);
  const float* b = static_cast<const float*>(x);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  float sum = hsum_ps(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) sum += a[i] * b[i];
  *s = sum;
}

void vec_dot_f16(int64_t n, float* s, const void* w, const void* x) {
  const fp16_t* a = static_cast<const fp16_t*>(w);
  const fp16_t* b = static_cast<const fp16_t*>(x);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      const __m256 va = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i + 8 * k)));
      const __m256 vb = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i + 8 * k)));
      acc[k] = _mm256_fmadd_ps(va, vb, acc[k]);
    }
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 va = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256 vb = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    acc[0] = _mm256_fmadd_ps(va, vb, acc[0]);
  }
  float sum = hsum_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  for (; i < n; ++i) sum += f16(a[i]) * f16(b[i]);
  *s = sum;
}

namespace {

// vec_dot_f16 for NX activation rows at once: each 8-lane group of the weight
// row is converted once and met by every row. Row t keeps vec_dot_f16's four
// accumulators (accumulator k sums lanes 8k..8k+7 of every 32-element chunk,
// then accumulator 0 the 8-element groups after the last whole chunk), each fed
// in vec_dot_f16's order, then the same reduction and tail, so its result has
// vec_dot_f16's bits. The accumulators are filled one k at a time, so only NX
// of them are live (no register spills at NX = 4).
template <int NX>
void dot_f16_rows(int64_t n, float* s, int64_t s_stride, const fp16_t* a, const uint8_t* x, size_t x_stride) {
  const fp16_t* b[NX];
  for (int t = 0; t < NX; ++t) b[t] = reinterpret_cast<const fp16_t*>(x + static_cast<size_t>(t) * x_stride);
  const int64_t n32 = n / 32 * 32;
  __m256 sum[NX][4];
  for (int k = 3; k >= 0; --k) {  // k = 0 last: it goes on with the 8-element groups
    __m256 acc[NX];
    for (int t = 0; t < NX; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t i = 8 * k; i < n32; i += 32) {
      const __m256 va = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
      for (int t = 0; t < NX; ++t)
        acc[t] = _mm256_fmadd_ps(va, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[t] + i))),
                                 acc[t]);
    }
    if (k == 0) {
      for (int64_t i = n32; i + 8 <= n; i += 8) {
        const __m256 va = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
        for (int t = 0; t < NX; ++t)
          acc[t] = _mm256_fmadd_ps(va, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[t] + i))),
                                   acc[t]);
      }
    }
    for (int t = 0; t < NX; ++t) sum[t][k] = acc[t];
  }
  const int64_t tail = n32 + (n - n32) / 8 * 8;
  for (int t = 0; t < NX; ++t) {
    float r = hsum_ps(_mm256_add_ps(_mm256_add_ps(sum[t][0], sum[t][1]), _mm256_add_ps(sum[t][2], sum[t][3])));
    for (int64_t j = tail; j < n; ++j) r += f16(a[j]) * f16(b[t][j]);
    s[t * s_stride] = r;
  }
}

}  // namespace

void vec_dot_multi_f16(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride,
                       int nx) {
  const fp16_t* a = static_cast<const fp16_t*>(w);
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  switch (nx) {
    case 1: dot_f16_rows<1>(n, s, s_stride, a, xb, x_stride); break;
    case 2: dot_f16_rows<2>(n, s, s_stride, a, xb, x_stride); break;
    case 3: dot_f16_rows<3>(n, s, s_stride, a, xb, x_stride); break;
    default: dot_f16_rows<4>(n, s, s_stride, a, xb, x_stride); break;
  }
}

void vec_dot_bf16(int64_t n, float* s, const void* w, const void* x) {
  const bf16_t* a = static_cast<const bf16_t*>(w);
  const bf16_t* b = static_cast<const bf16_t*>(x);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(bf16x8_to_ps(a + i), bf16x8_to_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(bf16x8_to_ps(a + i + 8), bf16x8_to_ps(b + i + 8), acc1);
  }
  float sum = hsum_ps(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) sum += bf16_to_fp32(a[i]) * bf16_to_fp32(b[i]);
  *s = sum;
}

void vec_dot_q8_0_q8_0(int64_t n, float* s, const void* w, const void* x) { Q8_0Blocks::dot(n, s, w, x); }
void vec_dot_q4_0_q8_0(int64_t n, float* s, const void* w, const void* x) { Q4_0Blocks::dot(n, s, w, x); }
void vec_dot_q5_0_q8_0(int64_t n, float* s, const void* w, const void* x) { Q5_0Blocks::dot(n, s, w, x); }
void vec_dot_iq4_nl_q8_0(int64_t n, float* s, const void* w, const void* x) { IQ4NLBlocks::dot(n, s, w, x); }
void vec_dot_mxfp4_q8_0(int64_t n, float* s, const void* w, const void* x) { MXFP4Blocks::dot(n, s, w, x); }
void vec_dot_q4_1_q8_1(int64_t n, float* s, const void* w, const void* x) { Q4_1Blocks::dot(n, s, w, x); }
void vec_dot_q5_1_q8_1(int64_t n, float* s, const void* w, const void* x) { Q5_1Blocks::dot(n, s, w, x); }

}  // namespace avx2

void fill_avx2_table(KernelTable& t) {
  // A vec_dot_multi set below pairs with the vec_dot set here (bit-identical per row).
  auto set = [&t](GgmlType type, VecDotFn fn) {
    t.types[static_cast<uint32_t>(type)].vec_dot = fn;
    t.types[static_cast<uint32_t>(type)].vec_dot_multi = nullptr;
  };
  using G = GgmlType;
  set(G::F32, avx2::vec_dot_f32);
  set(G::F16, avx2::vec_dot_f16);
  set(G::BF16, avx2::vec_dot_bf16);
  set(G::Q4_0, avx2::vec_dot_q4_0_q8_0);
  set(G::Q4_1, avx2::vec_dot_q4_1_q8_1);
  set(G::Q5_0, avx2::vec_dot_q5_0_q8_0);
  set(G::Q5_1, avx2::vec_dot_q5_1_q8_1);
  set(G::Q8_0, avx2::vec_dot_q8_0_q8_0);
  set(G::IQ4_NL, avx2::vec_dot_iq4_nl_q8_0);
  set(G::Q2_K, avx2::vec_dot_q2_K_q8_K);
  set(G::Q3_K, avx2::vec_dot_q3_K_q8_K);
  set(G::Q4_K, avx2::vec_dot_q4_K_q8_K);
  set(G::Q5_K, avx2::vec_dot_q5_K_q8_K);
  set(G::Q6_K, avx2::vec_dot_q6_K_q8_K);
  set(G::IQ4_XS, avx2::vec_dot_iq4_xs_q8_K);
  set(G::MXFP4, avx2::vec_dot_mxfp4_q8_0);
  set(G::TQ1_0, avx2::vec_dot_tq1_0_q8_K);
  set(G::TQ2_0, avx2::vec_dot_tq2_0_q8_K);
  auto set_multi = [&t](GgmlType type, VecDotMultiFn fn) { t.types[static_cast<uint32_t>(type)].vec_dot_multi = fn; };
  set_multi(G::F16, avx2::vec_dot_multi_f16);
  set_multi(G::Q8_0, avx2::Q8_0Blocks::multi);
  set_multi(G::Q4_0, avx2::Q4_0Blocks::multi);
  set_multi(G::Q5_0, avx2::Q5_0Blocks::multi);
  set_multi(G::IQ4_NL, avx2::IQ4NLBlocks::multi);
  set_multi(G::Q4_1, avx2::Q4_1Blocks::multi);
  set_multi(G::Q5_1, avx2::Q5_1Blocks::multi);
  set_multi(G::Q3_K, avx2::vec_dot_multi_q3_K_q8_K);
  set_multi(G::Q4_K, avx2::vec_dot_multi_q4_K_q8_K);
  set_multi(G::Q6_K, avx2::vec_dot_multi_q6_K_q8_K);
  set_multi(G::IQ4_XS, avx2::vec_dot_multi_iq4_xs_q8_K);
  set_multi(G::MXFP4, avx2::MXFP4Blocks::multi);
  avx2::install_iquant_kernels(t);  // avx2_iquants.cpp
  t.types[static_cast<uint32_t>(G::IQ4_XS)].dequantize_row = avx2::dequantize_row_iq4_xs;
  t.types[static_cast<uint32_t>(G::MXFP4)].dequantize_row = avx2::dequantize_row_mxfp4;
  auto set_quant = [&t](GgmlType type, QuantizeRowFn fn) { t.types[static_cast<uint32_t>(type)].quantize_row = fn; };
  set_quant(G::Q8_0, avx2::quantize_row_q8_0);
  set_quant(G::Q8_1, avx2::quantize_row_q8_1);
  set_quant(G::Q8_K, avx2::quantize_row_q8_K);
  t.ops.exp16 = avx2::exp16;
  t.ops.attn_f16_kq = avx2::attn_f16_kq;
  t.ops.attn_f16_kqv = avx2::attn_f16_kqv;
  t.ops.attn_f16_kq_multi = avx2::attn_f16_kq_multi;
  t.ops.attn_f16_kqv_multi = avx2::attn_f16_kqv_multi;
  t.ops.round_f16 = avx2::round_f16;
  t.gemm.block = avx2::gemm_block;
  t.ops.layer_norm = avx2::layer_norm;
  t.ops.gelu_tanh = avx2::gelu_tanh;
  t.ops.gelu_erf = avx2::gelu_erf;
  t.ops.ssm_conv = avx2::ssm_conv;
  t.ops.l2_norm = avx2::l2_norm;
  t.ops.rms_norm_gated = avx2::rms_norm_gated;
  t.ops.delta_rule = avx2::delta_rule;
  t.fit.eval_symmetric = avx2::fit_eval_symmetric;
  t.fit.eval_symmetric_table16 = avx2::fit_eval_symmetric_table16;
  t.fit.eval_affine = avx2::fit_eval_affine;
}

}  // namespace les::kernels
