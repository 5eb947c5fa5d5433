// AVX2 packed GEMM block (gemm.h): panels of 16 weight rows x up to 1024
// columns converted to F32 once ([k][16], k-major), then tiles of 16 rows x 6
// tokens held in 12 accumulators: for each k, two vectors of 8 rows meet each
// token's X[t][k] broadcast, one fused multiply-add per lane, so every output
// is gemm.h's fma chain in increasing k (bit-identical to gemm_block_ref).
// Partial sums cross panel-column blocks through y exactly.
#include <immintrin.h>

#include <algorithm>

#include "kernels/fp16.h"
#include "kernels/x86/gemm_tiers.h"

namespace les::kernels::avx2 {
namespace {

constexpr int kMr = 16;                          // rows per panel (two vectors)
constexpr int kNt = 6;                           // tokens per tile
constexpr int64_t kKc = kGemmPackFloats / kMr;   // columns per panel

// Rows [r0, r0 + mrows) x columns [k0, k0 + kc) of W into pack[k * 16 + r];
// lanes r >= mrows are zero.
void pack_panel(const GemmBlock& b, int64_t r0, int mrows, int64_t k0, int64_t kc, float* pack) {
  alignas(32) float tmp[8];
  for (int r = 0; r < mrows; ++r) {
    const uint8_t* row = b.w + static_cast<size_t>(r0 + r) * b.w_stride;
    int64_t k = 0;
    if (b.wtype == GgmlType::F16) {
      const auto* h = reinterpret_cast<const fp16_t*>(row) + k0;
      for (; k + 8 <= kc; k += 8) {
        _mm256_store_ps(tmp, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + k))));
        for (int j = 0; j < 8; ++j) pack[(k + j) * kMr + r] = tmp[j];
      }
      for (; k < kc; ++k) pack[k * kMr + r] = _cvtsh_ss(h[k]);
    } else {
      const auto* f = reinterpret_cast<const float*>(row) + k0;
      for (; k < kc; ++k) pack[k * kMr + r] = f[k];
    }
  }
  for (int r = mrows; r < kMr; ++r)
    for (int64_t k = 0; k < kc; ++k) pack[k * kMr + r] = 0.0f;
}

// Lane mask of the first `count` of 8 floats (count 0..8).
inline __m256i lane_mask(int count) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), idx);
}

// 16 rows (masks m0, m1 for the two vectors of 8) x NT tokens over kc columns.
template <int NT>
void tile(const float* pack, int64_t kc, const float* x, int64_t xs, float* y, int64_t ys, __m256i m0, __m256i m1,
          bool first) {
  __m256 a0[NT], a1[NT];
  for (int t = 0; t < NT; ++t) {
    a0[t] = first ? _mm256_setzero_ps() : _mm256_maskload_ps(y + t * ys, m0);
    a1[t] = first ? _mm256_setzero_ps() : _mm256_maskload_ps(y + t * ys + 8, m1);
  }
  for (int64_t k = 0; k < kc; ++k) {
    const __m256 w0 = _mm256_loadu_ps(pack + k * kMr), w1 = _mm256_loadu_ps(pack + k * kMr + 8);
    for (int t = 0; t < NT; ++t) {
      const __m256 xb = _mm256_broadcast_ss(x + t * xs + k);
      a0[t] = _mm256_fmadd_ps(w0, xb, a0[t]);
      a1[t] = _mm256_fmadd_ps(w1, xb, a1[t]);
    }
  }
  for (int t = 0; t < NT; ++t) {
    _mm256_maskstore_ps(y + t * ys, m0, a0[t]);
    _mm256_maskstore_ps(y + t * ys + 8, m1, a1[t]);
  }
}

void tile_n(int nt, const float* pack, int64_t kc, const float* x, int64_t xs, float* y, int64_t ys, __m256i m0,
            __m256i m1, bool first) {
  switch (nt) {
    case 1: tile<1>(pack, kc, x, xs, y, ys, m0, m1, first); break;
    case 2: tile<2>(pack, kc, x, xs, y, ys, m0, m1, first); break;
    case 3: tile<3>(pack, kc, x, xs, y, ys, m0, m1, first); break;
    case 4: tile<4>(pack, kc, x, xs, y, ys, m0, m1, first); break;
    case 5: tile<5>(pack, kc, x, xs, y, ys, m0, m1, first); break;
    default: tile<kNt>(pack, kc, x, xs, y, ys, m0, m1, first); break;
  }
}

}  // namespace

void gemm_block(const GemmBlock& b) {
  for (int64_t k0 = 0; k0 < b.cols; k0 += kKc) {
    const int64_t kc = std::min(kKc, b.cols - k0);
    for (int64_t r0 = 0; r0 < b.rows; r0 += kMr) {
      const int mrows = static_cast<int>(std::min<int64_t>(kMr, b.rows - r0));
      pack_panel(b, r0, mrows, k0, kc, b.pack);
      const __m256i m0 = lane_mask(std::min(mrows, 8)), m1 = lane_mask(std::max(mrows - 8, 0));
      for (int64_t t = 0; t < b.n; t += kNt) {
        const int nt = static_cast<int>(std::min<int64_t>(kNt, b.n - t));
        tile_n(nt, b.pack, kc, b.x + t * b.x_stride + k0, b.x_stride, b.y + t * b.y_stride + r0, b.y_stride, m0, m1,
               k0 == 0);
      }
    }
  }
}

}  // namespace les::kernels::avx2
