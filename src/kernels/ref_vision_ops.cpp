// Scalar references of the vision encoder's element-wise OpKernels
// (kernels.h): LayerNorm as ggml_norm + mul + add, and the two GELUs. Plain
// loops in index order; the test oracle of any SIMD version.
//
// Sources of the math: ggml's CPU norm op (mean and variance summed in double,
// scale 1/sqrt(var + eps) in float), the GELU definitions of Hendrycks &
// Gimpel (2016) in their tanh-approximate and erf forms, as named in
// docs/model-graphs.md section 6 ("Two different GELUs").
#include <cmath>

#include "kernels/ref.h"

namespace les::kernels {

void layer_norm_ref(const float* x, const float* w, const float* b, int64_t n, float eps, float* y) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]);
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  double sum2 = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float c = x[i] - mean;
    sum2 += static_cast<double>(c * c);
  }
  const float var = static_cast<float>(sum2 / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(var + eps);
  for (int64_t i = 0; i < n; ++i) {
    float v = (x[i] - mean) * scale;
    if (w != nullptr) v = v * w[i];
    if (b != nullptr) v = v + b[i];
    y[i] = v;
  }
}

void gelu_tanh_ref(const float* x, int64_t n, float* y) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  constexpr float kCoef = 0.044715f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float inner = kSqrt2OverPi * v * (1.0f + kCoef * v * v);
    y[i] = 0.5f * v * (1.0f + std::tanh(inner));
  }
}

void gelu_erf_ref(const float* x, int64_t n, float* y) {
  constexpr float kInvSqrt2 = 0.70710678118654752440f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::erf(v * kInvSqrt2));
  }
}

}  // namespace les::kernels
