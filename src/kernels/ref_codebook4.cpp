// Scalar reference kernels of the 4-bit codebook formats IQ4_XS (IQ4_NL's 16
// levels under 6-bit sub-block scales) and MXFP4 (doubled E2M1 levels under an
// E8M0 block scale): dequantisation and dot products (ref.h states the order
// of every float operation; products and sums are separate statements so no
// compiler may fuse them into an FMA).
//
// Source: block layouts of ggml's ggml-common.h and the formulas of
// ggml-quants.c's dequantize_row_iq4_xs / dequantize_row_mxfp4 (read, not
// copied); element layouts in block_elements.h.

#include "kernels/block_elements.h"
#include "kernels/ref.h"
#include "kernels/unaligned.h"

namespace les::kernels {

using namespace les::blocks;

void dequantize_row_iq4_xs_ref(const block_iq4_xs* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const block_iq4_xs blk = load_unaligned<block_iq4_xs>(x, b);
    const float d = fp16_to_fp32(blk.d);
    for (int j = 0; j < kQKK / 32; ++j) {
      const float dl = d * static_cast<float>(iq4_xs_scale(blk, j));
      for (int e = 32 * j; e < 32 * j + 32; ++e) y[b * kQKK + e] = dl * static_cast<float>(iq4_xs_code(blk, e));
    }
  }
}

void dequantize_row_mxfp4_ref(const block_mxfp4* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQKMXFP4; ++b) {
    const block_mxfp4 blk = load_unaligned<block_mxfp4>(x, b);
    const float d = e8m0_half_to_fp32(blk.e);
    for (int e = 0; e < kQKMXFP4; ++e) y[b * kQKMXFP4 + e] = static_cast<float>(mxfp4_code(blk, e)) * d;
  }
}

KQuantBlockSums block_sums_iq4_xs_q8_K_ref(const block_iq4_xs& w, const block_q8_K& x) {
  KQuantBlockSums s;
  for (int j = 0; j < kQKK / 32; ++j) {
    int32_t sub = 0;
    for (int e = 32 * j; e < 32 * j + 32; ++e) sub += iq4_xs_code(w, e) * x.qs[e];
    s.isum += iq4_xs_scale(w, j) * sub;
  }
  return s;
}

void vec_dot_iq4_xs_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const block_iq4_xs wb = load_unaligned<block_iq4_xs>(w, b);
    const block_q8_K xb = load_unaligned<block_q8_K>(x, b);
    const float d = xb.d * fp16_to_fp32(wb.d);
    const float term = static_cast<float>(block_sums_iq4_xs_q8_K_ref(wb, xb).isum) * d;
    acc += term;
  }
  *s = acc;
}

void vec_dot_mxfp4_q8_0_ref(int64_t n, float* s, const void* w, const void* x) {
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQKMXFP4; ++b) {
    const block_mxfp4 wb = load_unaligned<block_mxfp4>(w, b);
    const block_q8_0 xb = load_unaligned<block_q8_0>(x, b);
    int32_t isum = 0;
    for (int e = 0; e < kQKMXFP4; ++e) isum += mxfp4_code(wb, e) * xb.qs[e];
    const float scale = e8m0_half_to_fp32(wb.e) * fp16_to_fp32(xb.d);
    const float term = static_cast<float>(isum) * scale;
    acc += term;
  }
  *s = acc;
}

}  // namespace les::kernels
