// Internal: the two GELUs of the vision encoder in a form each SIMD tier
// instantiates with its own 16-lane exp (OpKernels::exp16, ops::expf_ggml: at
// most ~1.5 ulp), compiled in the tier's translation unit so the 16-element
// loops vectorise with its instructions. Full chunks of 16 go through these
// formulas, a tail of fewer than 16 through the scalar references (ref.h).
// Include only from src/kernels/x86/*_vision_ops.cpp (or another tier's file).
//
// tanh GELU: 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) x (1 +
//   0.044715 x^2) (the identity (1 + tanh u) / 2 = 1 / (1 + e^-2u)); saturates
//   to x for large x and to -0 / +0 through exp = inf for very negative x.
// erf GELU: 0.5 x (1 + erf(z)), z = x / sqrt(2), with erfc(|z|) from
//   Abramowitz & Stegun 7.1.26 (Hastings): erfc(a) = p(t) exp(-a^2), t = 1 /
//   (1 + 0.3275911 a), p(t) = t (a1 + t (a2 + t (a3 + t (a4 + t a5)))), absolute
//   error at most 1.5e-7 for a >= 0. Then x >= 0: x - 0.5 x erfc, x < 0:
//   0.5 x erfc (no cancellation on the negative side).
// Error bounds against the references are derived in
// tests/kernels/test_vision_op_kernels.cpp.
#pragma once

#include <cstdint>

#include "kernels/ref.h"

namespace les::kernels {

template <void (*Exp16)(const float*, float*)>
void gelu_tanh_chunks(const float* x, int64_t n, float* y) {
  constexpr float kMinus2C = -2.0f * 0.79788456080286535588f;  // -2 sqrt(2/pi)
  constexpr float kCoef = 0.044715f;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    float v[16], e[16];
    for (int j = 0; j < 16; ++j) v[j] = x[i + j];
    for (int j = 0; j < 16; ++j) e[j] = kMinus2C * v[j] * (1.0f + kCoef * v[j] * v[j]);
    Exp16(e, e);
    for (int j = 0; j < 16; ++j) y[i + j] = v[j] / (1.0f + e[j]);
  }
  if (i < n) gelu_tanh_ref(x + i, n - i, y + i);
}

template <void (*Exp16)(const float*, float*)>
void gelu_erf_chunks(const float* x, int64_t n, float* y) {
  constexpr float kInvSqrt2 = 0.70710678118654752440f;
  constexpr float kP = 0.3275911f, kA1 = 0.254829592f, kA2 = -0.284496736f, kA3 = 1.421413741f,
                  kA4 = -1.453152027f, kA5 = 1.061405429f;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    float v[16], a[16], e[16];
    for (int j = 0; j < 16; ++j) v[j] = x[i + j];
    for (int j = 0; j < 16; ++j) {
      const float z = v[j] * kInvSqrt2;
      a[j] = z < 0.0f ? -z : z;
      e[j] = -(a[j] * a[j]);
    }
    Exp16(e, e);
    for (int j = 0; j < 16; ++j) {
      const float t = 1.0f / (1.0f + kP * a[j]);
      const float p = t * (kA1 + t * (kA2 + t * (kA3 + t * (kA4 + t * kA5))));
      const float erfc = p * e[j];
      const float half = 0.5f * v[j];
      y[i + j] = v[j] >= 0.0f ? v[j] - half * erfc : half * erfc;
    }
  }
  if (i < n) gelu_erf_ref(x + i, n - i, y + i);
}

}  // namespace les::kernels
