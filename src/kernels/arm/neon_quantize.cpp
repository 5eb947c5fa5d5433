// NEON activation quantisers: F32 rows to Q8_0, Q8_1 and Q8_K blocks.
//
// Each produces the same bytes as the scalar reference quantiser of ref.h (same
// scale formulas, computed in the same F32 operations, and the same rounding:
// half to even, FCVTNS, saturated to int8 with NaN -> -128), for NaN, inf and
// subnormal inputs too.
#include <arm_neon.h>

#include <cmath>
#include <cstddef>
#include <cstring>

#include "kernels/arm/neon_kernels.h"
#include "kernels/arm/neon_simd.h"
#include "kernels/block_formats.h"

namespace les::kernels {
namespace {

// max |x[i]| over 32 floats, ignoring NaN (FMAXNM) like the reference's
// std::max; 0 when all 32 are NaN.
float abs_max_32(const float* x) {
  float32x4_t m = vabsq_f32(vld1q_f32(x));
  for (int i = 4; i < 32; i += 4) m = vmaxnmq_f32(m, vabsq_f32(vld1q_f32(x + i)));
  const float amax = vmaxnmvq_f32(m);
  return std::isnan(amax) ? 0.0f : amax;
}

// 16 floats x * scale rounded half to even to int8, saturated to -128..127,
// NaN to -128: the reference's round_half_even. FCVTNS saturates to int32 and
// gives 0 for NaN, so NaN lanes are replaced before the saturating narrows.
int8x16_t round_s8x16(const float* x, float scale) {
  const int32x4_t nan_code = vdupq_n_s32(-128);
  int32x4_t r[4];
  for (int k = 0; k < 4; ++k) {
    const float32x4_t v = vmulq_n_f32(vld1q_f32(x + 4 * k), scale);
    r[k] = vbslq_s32(vceqq_f32(v, v), vcvtnq_s32_f32(v), nan_code);
  }
  const int16x8_t r01 = vcombine_s16(vqmovn_s32(r[0]), vqmovn_s32(r[1]));
  const int16x8_t r23 = vcombine_s16(vqmovn_s32(r[2]), vqmovn_s32(r[3]));
  return vcombine_s8(vqmovn_s16(r01), vqmovn_s16(r23));
}

// Rounds 32 floats x * id into q (round_s8x16) and returns the sum of the codes.
int32_t round_to_s8_32(const float* x, float id, int8_t* q) {
  const int8x16_t lo = round_s8x16(x, id);
  const int8x16_t hi = round_s8x16(x + 16, id);
  vst1q_s8(q, lo);
  vst1q_s8(q + 16, hi);
  return vaddlvq_s8(lo) + vaddlvq_s8(hi);
}

// Stores F16(v) at any address.
void store_f16(uint8_t* p, float v) {
  const fp16_t h = fp32_to_fp16(v);
  std::memcpy(p, &h, sizeof h);
}

}  // namespace

void quantize_row_q8_0_neon(const float* x, void* y, int64_t n) {
  auto* out = static_cast<uint8_t*>(y);  // any alignment
  for (int64_t b = 0; b < n / kQK8_0; ++b, x += kQK8_0, out += sizeof(block_q8_0)) {
    const float amax = abs_max_32(x);
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    store_f16(out + offsetof(block_q8_0, d), d);
    round_to_s8_32(x, id, reinterpret_cast<int8_t*>(out + offsetof(block_q8_0, qs)));
  }
}

void quantize_row_q8_1_neon(const float* x, void* y, int64_t n) {
  auto* out = static_cast<uint8_t*>(y);
  for (int64_t b = 0; b < n / kQK8_1; ++b, x += kQK8_1, out += sizeof(block_q8_1)) {
    const float amax = abs_max_32(x);
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    store_f16(out + offsetof(block_q8_1, d), d);
    const int32_t sum = round_to_s8_32(x, id, reinterpret_cast<int8_t*>(out + offsetof(block_q8_1, qs)));
    store_f16(out + offsetof(block_q8_1, s), static_cast<float>(sum) * d);
  }
}

void quantize_row_q8_K_neon(const float* x, void* y, int64_t n) {
  auto* out = static_cast<uint8_t*>(y);
  for (int64_t b = 0; b < n / kQKK; ++b, x += kQKK, out += sizeof(block_q8_K)) {
    // The scale comes from the signed value of largest magnitude (the first
    // one if +a and -a tie), so that value maps to -127 exactly.
    float32x4_t vmax = vld1q_f32(x);
    float32x4_t vmin = vmax;
    for (int i = 4; i < kQKK; i += 4) {
      const float32x4_t v = vld1q_f32(x + i);
      vmax = vmaxnmq_f32(vmax, v);  // NaN ignored, as in the reference
      vmin = vminnmq_f32(vmin, v);
    }
    const float hi = vmaxnmvq_f32(vmax);
    const float lo = vminnmvq_f32(vmin);
    const float amax = std::fmax(hi, -lo);
    if (!(amax > 0.0f)) {  // all zero (or NaN)
      std::memset(out, 0, sizeof(block_q8_K));
      continue;
    }
    float max = hi > -lo ? hi : lo;
    if (hi == -lo) {
      for (int i = 0; i < kQKK; ++i) {
        if (std::fabs(x[i]) == amax) {
          max = x[i];
          break;
        }
      }
    }
    const float iscale = -127.0f / max;
    for (int g = 0; g < kQKK / 16; ++g) {
      // round_s8x16 saturates at 127: the reference's min(127, q) (only -max
      // can round up to +127.x, and only when max is negative).
      const int8x16_t v = round_s8x16(x + 16 * g, iscale);
      vst1q_s8(reinterpret_cast<int8_t*>(out + offsetof(block_q8_K, qs)) + 16 * g, v);
      const int16_t bsum = vaddlvq_s8(v);
      std::memcpy(out + offsetof(block_q8_K, bsums) + 2 * g, &bsum, sizeof bsum);
    }
    const float d = 1.0f / iscale;
    std::memcpy(out + offsetof(block_q8_K, d), &d, sizeof d);
  }
}

}  // namespace les::kernels
