// AVX-512 packed GEMM block (gemm.h): panels of 32 weight rows x up to 512
// columns converted to F32 once ([k][32], k-major), then tiles of 32 rows x
// 12 tokens held in 24 accumulators: for each k, two vectors of 16 rows meet
// each token's X[t][k] broadcast, one fused multiply-add per lane, so every
// output is gemm.h's fma chain in increasing k (bit-identical to
// gemm_block_ref). Partial sums cross panel-column blocks through y exactly.
#include "kernels/x86/avx512_common.h"
#include "kernels/x86/gemm_tiers.h"

#include <algorithm>
#include <cstring>

namespace les::kernels::avx512 {
namespace {

constexpr int kMr = 32;                          // rows per panel (two vectors)
constexpr int kNt = 12;                          // tokens per tile
constexpr int64_t kKc = kGemmPackFloats / kMr;   // columns per panel

// Rows [r0, r0 + mrows) x columns [k0, k0 + kc) of W into pack[k * 32 + r];
// lanes r >= mrows up to the vector count in use are zero.
void pack_panel(const GemmBlock& b, int64_t r0, int mrows, int64_t k0, int64_t kc, float* pack) {
  const int lanes = mrows > 16 ? 32 : 16;
  alignas(64) float tmp[16];
  for (int r = 0; r < mrows; ++r) {
    const uint8_t* row = b.w + static_cast<size_t>(r0 + r) * b.w_stride;
    int64_t k = 0;
    for (; k < kc; k += 16) {
      const int64_t len = std::min<int64_t>(16, kc - k);
      const __mmask16 m = static_cast<__mmask16>((1u << len) - 1u);
      __m512 v;
      if (b.wtype == GgmlType::F16) {
        const auto* h = reinterpret_cast<const fp16_t*>(row) + k0 + k;
        v = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, h));
      } else {
        v = _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(row) + k0 + k);
      }
      _mm512_store_ps(tmp, v);
      for (int64_t j = 0; j < len; ++j) pack[(k + j) * kMr + r] = tmp[j];
    }
  }
  for (int r = mrows; r < lanes; ++r)
    for (int64_t k = 0; k < kc; ++k) pack[k * kMr + r] = 0.0f;
}

// NV vectors of rows (mask `m` on the last) x NT tokens over kc columns.
template <int NV, int NT>
void tile(const float* pack, int64_t kc, const float* x, int64_t xs, float* y, int64_t ys, __mmask16 m, bool first) {
  __m512 acc[NT][NV];
  for (int t = 0; t < NT; ++t)
    for (int v = 0; v < NV; ++v) {
      const __mmask16 mv = v == NV - 1 ? m : static_cast<__mmask16>(0xFFFF);
      acc[t][v] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mv, y + t * ys + 16 * v);
    }
  for (int64_t k = 0; k < kc; ++k) {
    __m512 w[NV];
    for (int v = 0; v < NV; ++v) w[v] = _mm512_loadu_ps(pack + k * kMr + 16 * v);
    for (int t = 0; t < NT; ++t) {
      const __m512 xb = _mm512_set1_ps(x[t * xs + k]);
      for (int v = 0; v < NV; ++v) acc[t][v] = _mm512_fmadd_ps(w[v], xb, acc[t][v]);
    }
  }
  for (int t = 0; t < NT; ++t)
    for (int v = 0; v < NV; ++v) {
      const __mmask16 mv = v == NV - 1 ? m : static_cast<__mmask16>(0xFFFF);
      _mm512_mask_storeu_ps(y + t * ys + 16 * v, mv, acc[t][v]);
    }
}

template <int NV>
void tile_n(int nt, const float* pack, int64_t kc, const float* x, int64_t xs, float* y, int64_t ys, __mmask16 m,
            bool first) {
  switch (nt) {
    case 1: tile<NV, 1>(pack, kc, x, xs, y, ys, m, first); break;
    case 2: tile<NV, 2>(pack, kc, x, xs, y, ys, m, first); break;
    case 3: tile<NV, 3>(pack, kc, x, xs, y, ys, m, first); break;
    case 4: tile<NV, 4>(pack, kc, x, xs, y, ys, m, first); break;
    case 5: tile<NV, 5>(pack, kc, x, xs, y, ys, m, first); break;
    case 6: tile<NV, 6>(pack, kc, x, xs, y, ys, m, first); break;
    case 7: tile<NV, 7>(pack, kc, x, xs, y, ys, m, first); break;
    case 8: tile<NV, 8>(pack, kc, x, xs, y, ys, m, first); break;
    case 9: tile<NV, 9>(pack, kc, x, xs, y, ys, m, first); break;
    case 10: tile<NV, 10>(pack, kc, x, xs, y, ys, m, first); break;
    case 11: tile<NV, 11>(pack, kc, x, xs, y, ys, m, first); break;
    default: tile<NV, kNt>(pack, kc, x, xs, y, ys, m, first); break;
  }
}

}  // namespace

void gemm_block(const GemmBlock& b) {
  for (int64_t k0 = 0; k0 < b.cols; k0 += kKc) {
    const int64_t kc = std::min(kKc, b.cols - k0);
    for (int64_t r0 = 0; r0 < b.rows; r0 += kMr) {
      const int mrows = static_cast<int>(std::min<int64_t>(kMr, b.rows - r0));
      pack_panel(b, r0, mrows, k0, kc, b.pack);
      const int last = (mrows - 1) % 16 + 1;  // rows in the last vector
      const __mmask16 m = static_cast<__mmask16>((1u << last) - 1u);
      for (int64_t t = 0; t < b.n; t += kNt) {
        const int nt = static_cast<int>(std::min<int64_t>(kNt, b.n - t));
        const float* x = b.x + t * b.x_stride + k0;
        float* y = b.y + t * b.y_stride + r0;
        if (mrows > 16) {
          tile_n<2>(nt, b.pack, kc, x, b.x_stride, y, b.y_stride, m, k0 == 0);
        } else {
          tile_n<1>(nt, b.pack, kc, x, b.x_stride, y, b.y_stride, m, k0 == 0);
        }
      }
    }
  }
}

}  // namespace les::kernels::avx512
