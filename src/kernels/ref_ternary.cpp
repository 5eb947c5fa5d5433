// Scalar reference kernels of the ternary formats TQ1_0 and TQ2_0 (ref.h
// states the order of every float operation): x = code * d with code in
// -1..1 (TQ2_0's fourth code stands for 2), d the block's F16 scale; the dot
// products with Q8_K sum code * q8 exactly in int32 per super-block, then
// acc += float(isum) * (dx * dw).
//
// Source: block layouts of ggml's ggml-common.h and the formulas of
// ggml-quants.c's dequantize_row_tq1_0 / tq2_0 (read, not copied); element
// layouts in block_elements.h.

#include "kernels/block_elements.h"
#include "kernels/ref.h"
#include "kernels/unaligned.h"

namespace les::kernels {

using namespace les::blocks;

namespace {

template <typename Block, typename CodeFn>
void dequantize_ternary(const void* x, float* y, int64_t n, CodeFn code) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const Block blk = load_unaligned<Block>(x, b);
    const float d = fp16_to_fp32(blk.d);
    for (int e = 0; e < kQKK; ++e) y[b * kQKK + e] = static_cast<float>(code(blk, e)) * d;
  }
}

template <typename Block, typename CodeFn>
float dot_ternary_q8_K(int64_t n, const void* w, const void* x, CodeFn code) {
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const Block wb = load_unaligned<Block>(w, b);
    const block_q8_K xb = load_unaligned<block_q8_K>(x, b);
    int32_t isum = 0;
    for (int e = 0; e < kQKK; ++e) isum += code(wb, e) * xb.qs[e];
    const float d = xb.d * fp16_to_fp32(wb.d);
    const float term = static_cast<float>(isum) * d;
    acc += term;
  }
  return acc;
}

}  // namespace

void dequantize_row_tq1_0_ref(const block_tq1_0* x, float* y, int64_t n) {
  dequantize_ternary<block_tq1_0>(x, y, n, tq1_0_code);
}

void dequantize_row_tq2_0_ref(const block_tq2_0* x, float* y, int64_t n) {
  dequantize_ternary<block_tq2_0>(x, y, n, tq2_0_code);
}

void vec_dot_tq1_0_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_ternary_q8_K<block_tq1_0>(n, w, x, tq1_0_code);
}

void vec_dot_tq2_0_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_ternary_q8_K<block_tq2_0>(n, w, x, tq2_0_code);
}

}  // namespace les::kernels
