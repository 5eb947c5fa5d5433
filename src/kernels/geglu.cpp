// Built with -ffp-contract=off (cmake/LesKernels.cmake): the one contraction
// of ggml's build is the explicit std::fma below.
#include "kernels/geglu.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/fp16.h"

namespace les::ops {
namespace {

const std::vector<float>& gelu_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h)
      t[h] = fp16_to_fp32(fp32_to_fp16(gelu_tanh_ggml(fp16_to_fp32(static_cast<fp16_t>(h)))));
    return t;
  }();
  return table;
}

}  // namespace

float gelu_tanh_ggml(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCoefA = 0.044715f;
  // ggml: 0.5f*x*(1.0f + tanhf(SQRT_2_OVER_PI*x*(1.0f + GELU_COEF_A*x*x))), (A x) x + 1 fused.
  const float inner = kSqrt2OverPi * x * std::fma(kCoefA * x, x, 1.0f);
  return 0.5f * x * (1.0f + std::tanh(inner));
}

void geglu_f16_table(const float* gate, const float* up, int64_t n, float* out) {
  const std::vector<float>& t = gelu_table();
  for (int64_t i = 0; i < n; ++i) {
    const float x = gate[i];
    if (x <= -10.0f) {
      out[i] = 0.0f;
    } else if (x >= 10.0f) {
      out[i] = x * up[i];
    } else {
      out[i] = t[fp32_to_fp16(x)] * up[i];
    }
  }
}

}  // namespace les::ops
