// NEON dot products of float rows: F16 x F16, BF16 x BF16 and F32 x F32.
//
// Both operands are widened exactly to F32 and multiplied-accumulated with FMA
// into four independent F32x4 accumulators (16 elements per step); a tail of
// fewer than 16 elements is handled by a scalar loop. The baseline armv8-a F16
// conversion (FCVTL) is used, not FP16 arithmetic, so no precision is lost to
// F16 accumulators.
#include <arm_neon.h>

#include "kernels/arm/neon_kernels.h"
#include "kernels/arm/neon_simd.h"
#include "kernels/fp16.h"

namespace les::kernels {
namespace {

// Widen 4 binary16 / bfloat16 values at p to F32.
inline float32x4_t load_f16x4(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
inline float32x4_t load_bf16x4(const uint16_t* p) {
  return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16));
}

// Shared loop: Load(p) widens 4 elements at p to F32; Scalar(v) widens one.
template <typename T, typename Load, typename Scalar>
float dot_rows(int64_t n, const T* a, const T* b, Load load, Scalar scalar) {
  float32x4_t acc[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int k = 0; k < 4; ++k) acc[k] = vfmaq_f32(acc[k], load(a + i + 4 * k), load(b + i + 4 * k));
  }
  float sum = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3])));
  for (; i < n; ++i) sum += scalar(a[i]) * scalar(b[i]);
  return sum;
}

}  // namespace

void vec_dot_f16_f16_neon(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_rows(n, static_cast<const uint16_t*>(w), static_cast<const uint16_t*>(x), load_f16x4,
                neon::f16_to_f32);
}

void vec_dot_bf16_bf16_neon(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_rows(n, static_cast<const uint16_t*>(w), static_cast<const uint16_t*>(x), load_bf16x4,
                bf16_to_fp32);
}

void vec_dot_f32_f32_neon(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_rows(n, static_cast<const float*>(w), static_cast<const float*>(x), vld1q_f32,
                [](float v) { return v; });
}

}  // namespace les::kernels
