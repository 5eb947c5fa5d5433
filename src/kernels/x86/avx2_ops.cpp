// AVX2 OpKernels (kernels.h): each 16-lane accumulator of the contract is a
// pair of ymm registers (lanes 0-7, 8-15). Bit-identical to the scalar
// references in ref_ops.cpp: the same operations per lane in the same order (a
// fused multiply-add of two exact halves' product rounds like the reference's
// separate multiply and add, the product being exact).
#include <immintrin.h>

#include <cstring>

#include "kernels/fp16.h"
#include "kernels/ops.h"
#include "kernels/x86/avx2_common.h"
#include "kernels/x86/avx2_kernels.h"

namespace les::kernels::avx2 {
namespace {

// Up to 16 halves (count `left`, more is clamped) at any address, missing ones 0.
inline V16 load_f16(const uint8_t* p, int64_t left) {
  if (left >= 16) {
    return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)))};
  }
  alignas(32) uint16_t h[16] = {};
  std::memcpy(h, p, static_cast<size_t>(left) * 2);
  return {_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h))),
          _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h + 8)))};
}

// Up to 8 halves (count `left`, more is clamped) at any address, missing ones 0.
inline __m256 load_f16x8(const uint8_t* p, int64_t left) {
  if (left >= 8) return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  alignas(16) uint16_t h[8] = {};
  std::memcpy(h, p, static_cast<size_t>(left) * 2);
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h)));
}

inline V16 load_f32(const float* p, int64_t left) {
  if (left >= 16) return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)};
  alignas(32) float f[16] = {};
  std::memcpy(f, p, static_cast<size_t>(left) * 4);
  return {_mm256_load_ps(f), _mm256_load_ps(f + 8)};
}

inline void store_f32(float* p, V16 v, int64_t left) {
  if (left >= 16) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
    return;
  }
  alignas(32) float f[16];
  _mm256_store_ps(f, v.lo);
  _mm256_store_ps(f + 8, v.hi);
  std::memcpy(p, f, static_cast<size_t>(left) * 4);
}

}  // namespace

void exp16(const float* xp, float* yp) {
  // ops::expf_ggml lane by lane with the same fused multiply-adds. 2^n is built
  // from its exponent bits, so j * 2^n rounds like ldexp while 2^n is a normal
  // float (-126 <= n <= 127); a chunk with any other n goes lane by lane.
  const __m256 shift = _mm256_set1_ps(0x1.8p23f);
  __m256 r[2];
  for (int h = 0; h < 2; ++h) {
    const __m256 x = _mm256_loadu_ps(xp + 8 * h);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), shift);
    const __m256 n = _mm256_sub_ps(z, shift);
    const __m256 in_range = _mm256_and_ps(_mm256_cmp_ps(n, _mm256_set1_ps(-126.0f), _CMP_GE_OQ),
                                          _mm256_cmp_ps(n, _mm256_set1_ps(127.0f), _CMP_LE_OQ));
    if (_mm256_movemask_ps(in_range) != 0xFF) {
      for (int i = 0; i < 16; ++i) yp[i] = ops::expf_ggml(xp[i]);
      return;
    }
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                      _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 hi = _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)),
                                      u, _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f)));
    const __m256 j = _mm256_fmadd_ps(hi, u, _mm256_fmadd_ps(_mm256_set1_ps(0x1.ffffecp-1f), b, _mm256_set1_ps(1.0f)));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    r[h] = _mm256_mul_ps(j, _mm256_castsi256_ps(e));
  }
  _mm256_storeu_ps(yp, r[0]);
  _mm256_storeu_ps(yp + 8, r[1]);
}

void attn_f16_kq(const float* q, const uint8_t* k, int64_t k_stride, int64_t n_kv, int head_dim, bool vec_dot,
                 float* scores) {
  const int nc = (head_dim + 15) / 16;
  int64_t j = 0;
  if (!vec_dot) {
    // One accumulator per row is one chain of nc dependent FMAs: four rows at
    // a time keep four independent chains in flight and share each q load.
    // Each row's own sums are unchanged.
    for (; j + 4 <= n_kv; j += 4) {
      const uint8_t* kj = k + j * k_stride;
      V16 a0 = zero16(), a1 = zero16(), a2 = zero16(), a3 = zero16();
      for (int c = 0; c < nc; ++c) {
        const int64_t left = head_dim - 16 * c;
        const V16 qc = load_f32(q + 16 * c, left);
        a0 = fma16(qc, load_f16(kj + 32 * c, left), a0);
        a1 = fma16(qc, load_f16(kj + k_stride + 32 * c, left), a1);
        a2 = fma16(qc, load_f16(kj + 2 * k_stride + 32 * c, left), a2);
        a3 = fma16(qc, load_f16(kj + 3 * k_stride + 32 * c, left), a3);
      }
      scores[j] = reduce16(a0);
      scores[j + 1] = reduce16(a1);
      scores[j + 2] = reduce16(a2);
      scores[j + 3] = reduce16(a3);
    }
  }
  for (; j < n_kv; ++j) {
    const uint8_t* kj = k + j * k_stride;
    V16 acc[4] = {zero16(), zero16(), zero16(), zero16()};
    for (int c = 0; c < nc; ++c) {
      const int64_t left = head_dim - 16 * c;
      V16& a = acc[vec_dot ? c & 3 : 0];
      a = fma16(load_f32(q + 16 * c, left), load_f16(kj + 32 * c, left), a);
    }
    if (vec_dot) acc[0] = add16(add16(acc[0], acc[2]), add16(acc[1], acc[3]));
    scores[j] = reduce16(acc[0]);
  }
}

void attn_f16_kqv(const float* p, const uint8_t* v, int64_t v_stride, int64_t n_kv, int head_dim_v, bool vec_dot,
                  float* out, float* scratch) {
  // scratch: one row of head_dim_v (padded to 16) floats per lane index j % R,
  // R = 64 (vec_dot: lane j % 16 of accumulator (j / 16) % 4) or 16. Row r
  // sums p[j] * V_j over j = r, r + R, ... in ascending j; rows are
  // independent, so each group of 4 rows is summed in registers, 16 output
  // columns at a time, and stored once.
  const int R = vec_dot ? 64 : 16;
  const int nc = (head_dim_v + 15) / 16;
  const int64_t w = static_cast<int64_t>(nc) * 16;
  for (int g = 0; g < R; g += 4) {
    for (int col = 0; col < 2 * nc; col += 2) {
      // acc[2 * r + h]: row g + r, output columns 8 * (col + h) .. + 7.
      const int64_t left0 = head_dim_v - 8 * col, left1 = left0 - 8;  // <= 0: padding, summed as 0
      __m256 acc[8];
      for (__m256& a : acc) a = _mm256_setzero_ps();
      for (int64_t jb = g; jb < n_kv; jb += R) {
        const uint8_t* vj = v + jb * v_stride + 16 * col;
        const int m = n_kv - jb < 4 ? static_cast<int>(n_kv - jb) : 4;
        if (m == 4 && left1 >= 8) {
          for (int r = 0; r < 4; ++r) {
            const __m256 pj = _mm256_set1_ps(p[jb + r]);
            acc[2 * r] = _mm256_fmadd_ps(pj, load_f16x8(vj + r * v_stride, 8), acc[2 * r]);
            acc[2 * r + 1] = _mm256_fmadd_ps(pj, load_f16x8(vj + r * v_stride + 16, 8), acc[2 * r + 1]);
          }
        } else {
          for (int r = 0; r < m; ++r) {
            const __m256 pj = _mm256_set1_ps(p[jb + r]);
            if (left0 > 0) acc[2 * r] = _mm256_fmadd_ps(pj, load_f16x8(vj + r * v_stride, left0), acc[2 * r]);
            if (left1 > 0)
              acc[2 * r + 1] = _mm256_fmadd_ps(pj, load_f16x8(vj + r * v_stride + 16, left1), acc[2 * r + 1]);
          }
        }
      }
      for (int r = 0; r < 4; ++r) {
        _mm256_storeu_ps(scratch + (g + r) * w + 8 * col, acc[2 * r]);
        _mm256_storeu_ps(scratch + (g + r) * w + 8 * col + 8, acc[2 * r + 1]);
      }
    }
  }
  auto row = [&](int r, int c) { return load_f32(scratch + r * w + 16 * c, 16); };
  for (int c = 0; c < nc; ++c) {
    V16 l[16];
    for (int i = 0; i < 16; ++i)
      l[i] = vec_dot ? add16(add16(row(i, c), row(i + 32, c)), add16(row(i + 16, c), row(i + 48, c))) : row(i, c);
    for (int i = 0; i < 8; ++i) l[i] = add16(l[i], l[i + 8]);
    for (int i = 0; i < 4; ++i) l[i] = add16(l[i], l[i + 4]);
    store_f32(out + 16 * c, add16(add16(l[0], l[2]), add16(l[1], l[3])), head_dim_v - 16 * c);
  }
}

// Multi-query gemm-order sums (kernels.h OpKernels::attn_f16_kq_multi): the
// K rows of a 16-row block are converted to floats once (zero past head_dim)
// and every query meets them four rows at a time, each score the chain of
// attn_f16_kq(vec_dot = false) and the same reduce16, so the same bits.
void attn_f16_kq_multi(const float* q, int64_t q_stride, int nq, const uint8_t* k, int64_t k_stride, int64_t n_kv,
                       int head_dim, float* scores, int64_t s_stride, float* scratch) {
  const int nc = (head_dim + 15) / 16;
  const int64_t w = static_cast<int64_t>(nc) * 16;
  for (int64_t j0 = 0; j0 < n_kv; j0 += 16) {
    const int64_t m = n_kv - j0 < 16 ? n_kv - j0 : 16;
    for (int64_t jj = 0; jj < m; ++jj)
      for (int c = 0; c < nc; ++c) store_f32(scratch + jj * w + 16 * c, load_f16(k + (j0 + jj) * k_stride + 32 * c, head_dim - 16 * c), 16);
    for (int i = 0; i < nq; ++i) {
      const float* qi = q + i * q_stride;
      float* si = scores + i * s_stride + j0;
      int64_t jj = 0;
      for (; jj + 4 <= m; jj += 4) {
        const float* kj = scratch + jj * w;
        V16 a0 = zero16(), a1 = zero16(), a2 = zero16(), a3 = zero16();
        for (int c = 0; c < nc; ++c) {
          const V16 qc = load_f32(qi + 16 * c, head_dim - 16 * c);
          a0 = fma16(qc, load_f32(kj + 16 * c, 16), a0);
          a1 = fma16(qc, load_f32(kj + w + 16 * c, 16), a1);
          a2 = fma16(qc, load_f32(kj + 2 * w + 16 * c, 16), a2);
          a3 = fma16(qc, load_f32(kj + 3 * w + 16 * c, 16), a3);
        }
        si[jj] = reduce16(a0);
        si[jj + 1] = reduce16(a1);
        si[jj + 2] = reduce16(a2);
        si[jj + 3] = reduce16(a3);
      }
      for (; jj < m; ++jj) {
        V16 a = zero16();
        for (int c = 0; c < nc; ++c)
          a = fma16(load_f32(qi + 16 * c, head_dim - 16 * c), load_f32(scratch + jj * w + 16 * c, 16), a);
        si[jj] = reduce16(a);
      }
    }
  }
}

namespace {

// Lane rows r < 16 of NQ queries for the 8 output columns at byte offset
// 16 * col8 of a V row (`left` of them real): row r of query i sums p_i[j] *
// V_j over j = r, r + 16, ... < n_kv[i] in ascending j, as attn_f16_kqv.
template <int NQ>
void kqv_rows8(const float* p, int64_t p_stride, const int64_t* n_kv, const uint8_t* v, int64_t v_stride, int col8,
               int64_t left, int64_t n_min, int64_t n_max, float* rows, int64_t w) {
  for (int r = 0; r < 16; ++r) {
    __m256 acc[NQ];
    for (int i = 0; i < NQ; ++i) acc[i] = _mm256_setzero_ps();
    if (left > 0) {
      int64_t j = r;
      for (; j < n_min; j += 16) {
        const __m256 vv = load_f16x8(v + j * v_stride + 16 * col8, left);
        for (int i = 0; i < NQ; ++i) acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(p[i * p_stride + j]), vv, acc[i]);
      }
      for (; j < n_max; j += 16) {
        const __m256 vv = load_f16x8(v + j * v_stride + 16 * col8, left);
        for (int i = 0; i < NQ; ++i)
          if (j < n_kv[i]) acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(p[i * p_stride + j]), vv, acc[i]);
      }
    }
    for (int i = 0; i < NQ; ++i) _mm256_storeu_ps(rows + (static_cast<int64_t>(i) * 16 + r) * w + 8 * col8, acc[i]);
  }
}

}  // namespace

void attn_f16_kqv_multi(const float* p, int64_t p_stride, const int64_t* n_kv, int nq, const uint8_t* v,
                        int64_t v_stride, int head_dim_v, float* out, int64_t out_stride, float* scratch) {
  if (nq <= 0) return;
  const int nc = (head_dim_v + 15) / 16;
  const int64_t w = static_cast<int64_t>(nc) * 16;
  int64_t n_min = n_kv[0], n_max = n_kv[0];
  for (int i = 1; i < nq; ++i) {
    n_min = n_kv[i] < n_min ? n_kv[i] : n_min;
    n_max = n_kv[i] > n_max ? n_kv[i] : n_max;
  }
  for (int col8 = 0; col8 < 2 * nc; ++col8) {
    const int64_t left = head_dim_v - 8 * col8;
    switch (nq) {
      case 1: kqv_rows8<1>(p, p_stride, n_kv, v, v_stride, col8, left, n_min, n_max, scratch, w); break;
      case 2: kqv_rows8<2>(p, p_stride, n_kv, v, v_stride, col8, left, n_min, n_max, scratch, w); break;
      case 3: kqv_rows8<3>(p, p_stride, n_kv, v, v_stride, col8, left, n_min, n_max, scratch, w); break;
      case 4: kqv_rows8<4>(p, p_stride, n_kv, v, v_stride, col8, left, n_min, n_max, scratch, w); break;
      case 5: kqv_rows8<5>(p, p_stride, n_kv, v, v_stride, col8, left, n_min, n_max, scratch, w); break;
      case 6: kqv_rows8<6>(p, p_stride, n_kv, v, v_stride, col8, left, n_min, n_max, scratch, w); break;
      case 7: kqv_rows8<7>(p, p_stride, n_kv, v, v_stride, col8, left, n_min, n_max, scratch, w); break;
      default: kqv_rows8<8>(p, p_stride, n_kv, v, v_stride, col8, left, n_min, n_max, scratch, w); break;
    }
  }
  // Fold each query's 16 lane rows as attn_f16_kqv does (gemm order).
  for (int i = 0; i < nq; ++i) {
    const float* rows = scratch + static_cast<int64_t>(i) * 16 * w;
    for (int c = 0; c < nc; ++c) {
      V16 l[16];
      for (int r = 0; r < 16; ++r) l[r] = load_f32(rows + r * w + 16 * c, 16);
      for (int r = 0; r < 8; ++r) l[r] = add16(l[r], l[r + 8]);
      for (int r = 0; r < 4; ++r) l[r] = add16(l[r], l[r + 4]);
      store_f32(out + i * out_stride + 16 * c, add16(add16(l[0], l[2]), add16(l[1], l[3])), head_dim_v - 16 * c);
    }
  }
}

void round_f16(float* x, int64_t n) {
  // VCVTPS2PH with rounding mode 0 is fp32_to_fp16 (fp16.h), and the widening is exact.
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(x + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) x[i] = fp16_to_fp32(fp32_to_fp16(x[i]));
}

}  // namespace les::kernels::avx2
