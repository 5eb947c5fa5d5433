// AVX2 OpKernels (kernels.h): each 16-lane accumulator of the contract is a
// pair of ymm registers (lanes 0-7, 8-15). Bit-identical to the scalar
// references in ref_ops.cpp: the same operations per lane in the same order (a
// fused multiply-add of two exact halves' product rounds like the reference's
// separate multiply and add, the product being exact).
#include <immintrin.h>

#include <cstring>

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
  for (int64_t j = 0; j < n_kv; ++j) {
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
  // R = 64 (vec_dot: lane j % 16 of accumulator (j / 16) % 4) or 16.
  const int R = vec_dot ? 64 : 16;
  const int nc = (head_dim_v + 15) / 16;
  const int64_t w = static_cast<int64_t>(nc) * 16;
  for (int64_t j = 0; j < n_kv; ++j) {
    const uint8_t* vj = v + j * v_stride;
    float* a = scratch + (j % R) * w;
    const V16 pj = {_mm256_set1_ps(p[j]), _mm256_set1_ps(p[j])};
    for (int c = 0; c < nc; ++c) {
      const V16 prev = j < R ? zero16() : load_f32(a + 16 * c, 16);
      store_f32(a + 16 * c, fma16(pj, load_f16(vj + 32 * c, head_dim_v - 16 * c), prev), 16);
    }
  }
  for (int64_t r = n_kv; r < R; ++r)
    for (int64_t i = 0; i < w; ++i) scratch[r * w + i] = 0.0f;
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

}  // namespace les::kernels::avx2
