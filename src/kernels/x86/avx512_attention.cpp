// AVX-512 multi-query F16 attention sums (kernels.h OpKernels::attn_f16_kq_multi
// and attn_f16_kqv_multi): several query vectors of one KV head meet each K or
// V row once, where attn_f16_kq / attn_f16_kqv (avx512_ops.cpp) read and
// convert every row again for each query. Only the gemm summation order
// (a prefill or verify batch); each query's sums are the single-query kernel's
// operations in the same order, so the results are the same bits:
//  * a score is one chain of fused multiply-adds over the 16-lane chunks of
//    head_dim, reduced like reduce16 (lanes i + (i + 8), then + 4, + 2, + 1);
//    16 scores are reduced at once by a butterfly of shuffles that performs
//    exactly those additions, operands in the same order;
//  * an output sums p[j] * V_j into lane row j % 16 in ascending j, then folds
//    the 16 rows like attn_f16_kqv.
// GCC 12's AVX-512 intrinsics trip -Wuninitialized (see avx512_ops.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>

#include "kernels/x86/avx512_common.h"
#include "kernels/x86/avx512_kernels.h"

namespace les::kernels::avx512 {
namespace {

inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? 0xFFFF : left <= 0 ? 0 : static_cast<__mmask16>((1u << left) - 1);
}

// Lane s of the result = reduce16(acc[s]), bit for bit, for s < 16. Level by
// level the butterfly adds the same lane pairs as reduce16 with the lower
// operand first: (i, i + 8) across 256-bit halves, (i, i + 4) across 128-bit
// quarters, then (i, i + 2) and (i, i + 1) within quarters. After the four
// levels lane 4k + m holds the sum of input 4m + k, so the inputs are taken in
// that transposed order.
inline __m512 reduce16x16(const __m512* acc) {
  __m512 v[16];
  for (int i = 0; i < 16; ++i) v[i] = acc[(i & 3) * 4 + (i >> 2)];
  __m512 w[8];
  for (int m = 0; m < 8; ++m)
    w[m] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * m], v[2 * m + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_f32x4(v[2 * m], v[2 * m + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  __m512 z[4];
  for (int n = 0; n < 4; ++n)
    z[n] = _mm512_add_ps(_mm512_shuffle_f32x4(w[2 * n], w[2 * n + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(w[2 * n], w[2 * n + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  __m512 y[2];
  for (int n = 0; n < 2; ++n)
    y[n] = _mm512_add_ps(_mm512_shuffle_ps(z[2 * n], z[2 * n + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_ps(z[2 * n], z[2 * n + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  return _mm512_add_ps(_mm512_shuffle_ps(y[0], y[1], _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_ps(y[0], y[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

// Lane rows r < 16 of NQ queries for one 16-column chunk c: row r of query i
// sums p_i[j] * V_j[16c ..] over j = r, r + 16, ... < n_kv[i], in ascending j.
template <int NQ>
void kqv_rows(const float* p, int64_t p_stride, const int64_t* n_kv, const uint8_t* v, int64_t v_stride, int c,
              __mmask16 m, int64_t n_min, int64_t n_max, float* rows, int64_t w) {
  for (int r = 0; r < 16; ++r) {
    __m512 acc[NQ];
    for (int i = 0; i < NQ; ++i) acc[i] = _mm512_setzero_ps();
    int64_t j = r;
    for (; j < n_min; j += 16) {
      const __m512 vv = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, v + j * v_stride + 32 * c));
      for (int i = 0; i < NQ; ++i) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(p[i * p_stride + j]), vv, acc[i]);
    }
    for (; j < n_max; j += 16) {
      const __m512 vv = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, v + j * v_stride + 32 * c));
      for (int i = 0; i < NQ; ++i)
        if (j < n_kv[i]) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(p[i * p_stride + j]), vv, acc[i]);
    }
    for (int i = 0; i < NQ; ++i) _mm512_storeu_ps(rows + (static_cast<int64_t>(i) * 16 + r) * w + 16 * c, acc[i]);
  }
}

}  // namespace

void attn_f16_kq_multi(const float* q, int64_t q_stride, int nq, const uint8_t* k, int64_t k_stride, int64_t n_kv,
                       int head_dim, float* scores, int64_t s_stride, float* scratch) {
  const int nc = (head_dim + 15) / 16;
  const int64_t w = static_cast<int64_t>(nc) * 16;
  for (int64_t j0 = 0; j0 < n_kv; j0 += 16) {
    const int64_t m = std::min<int64_t>(16, n_kv - j0);
    // K rows j0 .. j0 + 15 as floats (missing rows 0: their sums are dropped).
    for (int jj = 0; jj < 16; ++jj)
      for (int c = 0; c < nc; ++c) {
        const __m512 kv = jj < m ? _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(tail_mask(head_dim - 16 * c),
                                                                            k + (j0 + jj) * k_stride + 32 * c))
                                 : _mm512_setzero_ps();
        _mm512_storeu_ps(scratch + jj * w + 16 * c, kv);
      }
    for (int i = 0; i < nq; ++i) {
      const float* qi = q + i * q_stride;
      __m512 acc[16];
      for (__m512& a : acc) a = _mm512_setzero_ps();
      for (int c = 0; c < nc; ++c) {
        const __m512 qv = _mm512_maskz_loadu_ps(tail_mask(head_dim - 16 * c), qi + 16 * c);
        for (int jj = 0; jj < 16; ++jj) acc[jj] = _mm512_fmadd_ps(qv, _mm512_loadu_ps(scratch + jj * w + 16 * c), acc[jj]);
      }
      _mm512_mask_storeu_ps(scores + i * s_stride + j0, tail_mask(m), reduce16x16(acc));
    }
  }
}

void attn_f16_kqv_multi(const float* p, int64_t p_stride, const int64_t* n_kv, int nq, const uint8_t* v,
                        int64_t v_stride, int head_dim_v, float* out, int64_t out_stride, float* scratch) {
  if (nq <= 0) return;
  const int nc = (head_dim_v + 15) / 16;
  const int64_t w = static_cast<int64_t>(nc) * 16;
  const int64_t n_min = *std::min_element(n_kv, n_kv + nq), n_max = *std::max_element(n_kv, n_kv + nq);
  for (int c = 0; c < nc; ++c) {
    const __mmask16 m = tail_mask(head_dim_v - 16 * c);
    switch (nq) {
      case 1: kqv_rows<1>(p, p_stride, n_kv, v, v_stride, c, m, n_min, n_max, scratch, w); break;
      case 2: kqv_rows<2>(p, p_stride, n_kv, v, v_stride, c, m, n_min, n_max, scratch, w); break;
      case 3: kqv_rows<3>(p, p_stride, n_kv, v, v_stride, c, m, n_min, n_max, scratch, w); break;
      case 4: kqv_rows<4>(p, p_stride, n_kv, v, v_stride, c, m, n_min, n_max, scratch, w); break;
      case 5: kqv_rows<5>(p, p_stride, n_kv, v, v_stride, c, m, n_min, n_max, scratch, w); break;
      case 6: kqv_rows<6>(p, p_stride, n_kv, v, v_stride, c, m, n_min, n_max, scratch, w); break;
      case 7: kqv_rows<7>(p, p_stride, n_kv, v, v_stride, c, m, n_min, n_max, scratch, w); break;
      default: kqv_rows<8>(p, p_stride, n_kv, v, v_stride, c, m, n_min, n_max, scratch, w); break;
    }
  }
  // Fold each query's 16 lane rows as attn_f16_kqv does (gemm order).
  for (int i = 0; i < nq; ++i) {
    const float* rows = scratch + static_cast<int64_t>(i) * 16 * w;
    for (int c = 0; c < nc; ++c) {
      __m512 l[16];
      for (int r = 0; r < 16; ++r) l[r] = _mm512_loadu_ps(rows + r * w + 16 * c);
      for (int r = 0; r < 8; ++r) l[r] = _mm512_add_ps(l[r], l[r + 8]);
      for (int r = 0; r < 4; ++r) l[r] = _mm512_add_ps(l[r], l[r + 4]);
      const __m512 s = _mm512_add_ps(_mm512_add_ps(l[0], l[2]), _mm512_add_ps(l[1], l[3]));
      _mm512_mask_storeu_ps(out + i * out_stride + 16 * c, tail_mask(head_dim_v - 16 * c), s);
    }
  }
}

}  // namespace les::kernels::avx512
