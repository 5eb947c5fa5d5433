// NEON dot products of float rows: F16 x F16, BF16 x BF16 and F32 x F32.
//
// Both operands are widened exactly to F32 and multiplied-accumulated with FMA
// into four independent F32x4 accumulators (16 elements per step); a tail of
// fewer than 16 elements is handled by a scalar loop. The baseline armv8-a F16
// conversion (FCVTL) is used, not FP16 arithmetic, so no precision is lost to
// F16 accumulators.
#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/neon_kernels.h"
#include "kernels/arm/neon_simd.h"
#include "kernels/fp16.h"

namespace les::kernels {
namespace {

// Load 4 F32, or widen 4 binary16 / bfloat16 values, from byte address p
// (any alignment: rows may start anywhere).
inline float32x4_t load_f32x4(const uint8_t* p) { return vreinterpretq_f32_u8(vld1q_u8(p)); }
inline uint16x4_t load_u16x4(const uint8_t* p) { return vreinterpret_u16_u8(vld1_u8(p)); }
inline float32x4_t load_f16x4(const uint8_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(load_u16x4(p))); }
inline float32x4_t load_bf16x4(const uint8_t* p) { return vreinterpretq_f32_u32(vshll_n_u16(load_u16x4(p), 16)); }

// One element of type T at byte address p, widened to F32.
inline float scalar_f32(const uint8_t* p) { return neon::load_f32(p); }
inline float scalar_f16(const uint8_t* p) { return neon::load_f16(p); }
inline float scalar_bf16(const uint8_t* p) {
  bf16_t h;
  std::memcpy(&h, p, sizeof h);
  return bf16_to_fp32(h);
}

// Shared loop over rows of n elements of T bytes each: Load(p) widens the 4
// elements at p to F32; Scalar(p) widens one.
template <typename T, typename Load, typename Scalar>
float dot_rows(int64_t n, const void* w, const void* x, Load load, Scalar scalar) {
  const auto* a = static_cast<const uint8_t*>(w);
  const auto* b = static_cast<const uint8_t*>(x);
  constexpr int64_t kStep = 4 * sizeof(T);  // bytes per 4 elements
  float32x4_t acc[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const int64_t o = i * static_cast<int64_t>(sizeof(T));
    for (int k = 0; k < 4; ++k) acc[k] = vfmaq_f32(acc[k], load(a + o + k * kStep), load(b + o + k * kStep));
  }
  float sum = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3])));
  for (; i < n; ++i) sum += scalar(a + i * sizeof(T)) * scalar(b + i * sizeof(T));
  return sum;
}

}  // namespace

void vec_dot_f16_f16_neon(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_rows<fp16_t>(n, w, x, load_f16x4, scalar_f16);
}

void vec_dot_bf16_bf16_neon(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_rows<bf16_t>(n, w, x, load_bf16x4, scalar_bf16);
}

void vec_dot_f32_f32_neon(int64_t n, float* s, const void* w, const void* x) {
  *s = dot_rows<float>(n, w, x, load_f32x4, scalar_f32);
}

}  // namespace les::kernels
