// Internal: the vision encoder's LayerNorm (kernels.h OpKernels::layer_norm) in
// a form each x86 tier compiles in its own translation unit, so the 8- and
// 16-element loops vectorise with that tier's instructions. Include only from
// src/kernels/x86/*_vision_ops.cpp (or another tier's file).
//
// Math as layer_norm_ref (ggml_norm, then the weight and bias): mean and
// variance summed in double, c = x - mean in float, y = (c * s) * w + b with
// s = 1 / sqrt(var + eps). Only the order of the two double sums differs from
// the reference (8 partial sums, then the tail): each sum is then within
// 2 n 2^-53 sum|.| of the reference's, far below one float ulp of the mean or
// variance, so mean and variance round to the same float or to its
// neighbour. The element-wise part performs the reference's operations in
// the same order; the tier files are built with -ffp-contract=off so no
// multiply-add is fused. Bound against the reference: derived in
// tests/kernels/test_vision_op_kernels.cpp. y may alias x. n >= 1.
#pragma once

#include <cmath>
#include <cstdint>

namespace les::kernels {

inline void layer_norm_chunks(const float* x, const float* w, const float* b, int64_t n, float eps, float* y) {
  double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) part[j] += static_cast<double>(x[i + j]);
  double sum = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  for (; i < n; ++i) sum += static_cast<double>(x[i]);
  const float mean = static_cast<float>(sum / static_cast<double>(n));

  double part2[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) {
      const float c = x[i + j] - mean;
      part2[j] += static_cast<double>(c * c);
    }
  double sum2 = ((part2[0] + part2[1]) + (part2[2] + part2[3])) + ((part2[4] + part2[5]) + (part2[6] + part2[7]));
  for (; i < n; ++i) {
    const float c = x[i] - mean;
    sum2 += static_cast<double>(c * c);
  }
  const float var = static_cast<float>(sum2 / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(var + eps);

  if (w != nullptr && b != nullptr) {
    for (i = 0; i < n; ++i) y[i] = ((x[i] - mean) * scale) * w[i] + b[i];
  } else {
    for (i = 0; i < n; ++i) {
      float v = (x[i] - mean) * scale;
      if (w != nullptr) v = v * w[i];
      if (b != nullptr) v = v + b[i];
      y[i] = v;
    }
  }
}

}  // namespace les::kernels
