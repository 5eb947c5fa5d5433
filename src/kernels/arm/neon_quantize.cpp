// NEON activation quantisers: F32 rows to Q8_0, Q8_1 and Q8_K blocks.
//
// Each produces the same bytes as the scalar reference quantiser of ref.h (same
// scale formulas, computed in the same F32 operations, and the same rounding:
// half to even, FCVTNS, in all three).
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "kernels/arm/neon_kernels.h"
#include "kernels/arm/neon_simd.h"
#include "kernels/block_formats.h"

namespace les::kernels {
namespace {

// max |x[i]| over 32 floats.
float abs_max_32(const float* x) {
  float32x4_t m = vabsq_f32(vld1q_f32(x));
  for (int i = 4; i < 32; i += 4) m = vmaxq_f32(m, vabsq_f32(vld1q_f32(x + i)));
  return vmaxvq_f32(m);
}

// Rounds 32 floats x * id half to even into int8 (|x * id| <= 127 by
// construction) and returns their sum.
int32_t round_to_s8_32(const float* x, float id, int8_t* q) {
  int32_t sum = 0;
  for (int i = 0; i < 32; i += 16) {
    const int32x4_t a = vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + i), id));
    const int32x4_t b = vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + i + 4), id));
    const int32x4_t c = vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + i + 8), id));
    const int32x4_t d = vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + i + 12), id));
    const int16x8_t ab = vcombine_s16(vmovn_s32(a), vmovn_s32(b));
    const int16x8_t cd = vcombine_s16(vmovn_s32(c), vmovn_s32(d));
    const int8x16_t v = vcombine_s8(vmovn_s16(ab), vmovn_s16(cd));
    vst1q_s8(q + i, v);
    sum += vaddlvq_s8(v);
  }
  return sum;
}

}  // namespace

void quantize_row_q8_0_neon(const float* x, void* y, int64_t n) {
  auto* out = static_cast<block_q8_0*>(y);
  const int64_t nb = n / kQK8_0;
  for (int64_t b = 0; b < nb; ++b, x += kQK8_0) {
    const float amax = abs_max_32(x);
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    out[b].d = fp32_to_fp16(d);
    round_to_s8_32(x, id, out[b].qs);
  }
}

void quantize_row_q8_1_neon(const float* x, void* y, int64_t n) {
  auto* out = static_cast<block_q8_1*>(y);
  const int64_t nb = n / kQK8_1;
  for (int64_t b = 0; b < nb; ++b, x += kQK8_1) {
    const float amax = abs_max_32(x);
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    out[b].d = fp32_to_fp16(d);
    const int32_t sum = round_to_s8_32(x, id, out[b].qs);
    out[b].s = fp32_to_fp16(static_cast<float>(sum) * d);
  }
}

void quantize_row_q8_K_neon(const float* x, void* y, int64_t n) {
  auto* out = static_cast<block_q8_K*>(y);
  const int64_t nb = n / kQKK;
  for (int64_t b = 0; b < nb; ++b, x += kQKK) {
    // The scale comes from the signed value of largest magnitude (the first
    // one if +a and -a tie), so that value maps to -127 exactly.
    float32x4_t vmax = vld1q_f32(x);
    float32x4_t vmin = vmax;
    for (int i = 4; i < kQKK; i += 4) {
      const float32x4_t v = vld1q_f32(x + i);
      vmax = vmaxq_f32(vmax, v);
      vmin = vminq_f32(vmin, v);
    }
    const float hi = vmaxvq_f32(vmax);
    const float lo = vminvq_f32(vmin);
    const float amax = std::fmax(hi, -lo);
    if (!(amax > 0.0f)) {  // all zero
      std::memset(&out[b], 0, sizeof(block_q8_K));
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
    const int32x4_t cap = vdupq_n_s32(127);
    for (int g = 0; g < kQKK / 16; ++g) {
      const float* xg = x + 16 * g;
      int32x4_t q[4];
      for (int k = 0; k < 4; ++k) {
        q[k] = vminq_s32(vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(xg + 4 * k), iscale)), cap);
      }
      const int16x8_t q01 = vcombine_s16(vmovn_s32(q[0]), vmovn_s32(q[1]));
      const int16x8_t q23 = vcombine_s16(vmovn_s32(q[2]), vmovn_s32(q[3]));
      const int8x16_t v = vcombine_s8(vmovn_s16(q01), vmovn_s16(q23));
      vst1q_s8(out[b].qs + 16 * g, v);
      out[b].bsums[g] = vaddlvq_s8(v);
    }
    out[b].d = 1.0f / iscale;
  }
}

}  // namespace les::kernels
