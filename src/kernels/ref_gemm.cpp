// Scalar reference of the packed GEMM block (kernels.h GemmBlock, gemm.h):
// each output a chain of fused multiply-adds in increasing k, the arithmetic
// every SIMD tier reproduces bit for bit. std::fma rounds once, as VFMADD does.
#include <cmath>

#include "kernels/fp16.h"
#include "kernels/ref.h"

namespace les::kernels {

void gemm_block_ref(const GemmBlock& b) {
  for (int64_t i = 0; i < b.rows; ++i) {
    const uint8_t* wrow = b.w + static_cast<size_t>(i) * b.w_stride;
    const auto* w16 = reinterpret_cast<const fp16_t*>(wrow);
    const auto* w32 = reinterpret_cast<const float*>(wrow);
    for (int64_t t = 0; t < b.n; ++t) {
      const float* x = b.x + t * b.x_stride;
      float acc = 0.0f;
      if (b.wtype == GgmlType::F16) {
        for (int64_t k = 0; k < b.cols; ++k) acc = std::fma(fp16_to_fp32(w16[k]), x[k], acc);
      } else {
        for (int64_t k = 0; k < b.cols; ++k) acc = std::fma(w32[k], x[k], acc);
      }
      b.y[t * b.y_stride + i] = acc;
    }
  }
}

}  // namespace les::kernels
