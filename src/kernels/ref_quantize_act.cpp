// Scalar reference activation quantisers: Q8_0, Q8_1, Q8_K, F16, BF16, F32 (see ref.h).
//
// These reproduce ggml's CPU from_float byte for byte (x86 build): Q8_0/Q8_1
// scale by 127 / amax and round half to even (ggml's AVX path rounds with
// _MM_ROUND_NEAREST); Q8_K scales by -127 / (signed max-magnitude element) and
// rounds half to even (ggml's nearest_int). Checked against
// ggml's own output (the fixtures' quant/ files) by tests/kernels/test_quantize_q8.cpp.

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/ref.h"
#include "kernels/unaligned.h"

namespace les::kernels {
namespace {

// Round half to even in the default rounding mode, saturated to the int8 range
// (finite inputs never reach it: |v| <= 127 by construction); NaN gives -128,
// so non-finite activations never reach an undefined float-to-int conversion.
int round_half_even(float v) {
  const float r = std::nearbyint(v);
  if (!(r > -128.0f)) return -128;
  return r < 127.0f ? static_cast<int>(r) : 127;
}

// Shared by Q8_0 and Q8_1: quantises 32 values, returns the F32 scale d.
float quantize_block_32(const float* x, int8_t* qs) {
  float amax = 0.0f;
  for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  for (int i = 0; i < 32; ++i) qs[i] = static_cast<int8_t>(round_half_even(x[i] * id));
  return d;
}

}  // namespace

void quantize_row_q8_0_ref(const float* x, block_q8_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK8_0; ++b) {
    block_q8_0 out;
    out.d = fp32_to_fp16(quantize_block_32(x + b * kQK8_0, out.qs));
    store_unaligned(y, b, out);
  }
}

void quantize_row_q8_1_ref(const float* x, block_q8_1* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK8_1; ++b) {
    block_q8_1 out;
    const float d = quantize_block_32(x + b * kQK8_1, out.qs);
    int sum = 0;
    for (int i = 0; i < kQK8_1; ++i) sum += out.qs[i];
    out.d = fp32_to_fp16(d);
    out.s = fp32_to_fp16(d * static_cast<float>(sum));
    store_unaligned(y, b, out);
  }
}

void quantize_row_q8_K_ref(const float* x, block_q8_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* xb = x + b * kQKK;
    block_q8_K out;
    float amax = 0.0f, max = 0.0f;  // max: the element of largest magnitude, signed
    for (int i = 0; i < kQKK; ++i) {
      const float a = std::fabs(xb[i]);
      if (a > amax) {
        amax = a;
        max = xb[i];
      }
    }
    if (amax == 0.0f) {
      out.d = 0.0f;
      std::memset(out.qs, 0, sizeof(out.qs));
      std::memset(out.bsums, 0, sizeof(out.bsums));
      store_unaligned(y, b, out);
      continue;
    }
    const float iscale = -127.0f / max;
    for (int i = 0; i < kQKK; ++i) {
      out.qs[i] = static_cast<int8_t>(std::min(127, round_half_even(iscale * xb[i])));
    }
    for (int j = 0; j < kQKK / 16; ++j) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += out.qs[16 * j + i];
      out.bsums[j] = static_cast<int16_t>(sum);
    }
    out.d = 1.0f / iscale;
    store_unaligned(y, b, out);
  }
}

void quantize_row_f16_ref(const float* x, fp16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) store_unaligned(y, i, fp32_to_fp16(x[i]));
}

void quantize_row_bf16_ref(const float* x, bf16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) store_unaligned(y, i, fp32_to_bf16(x[i]));
}

void quantize_row_f32_ref(const float* x, float* y, int64_t n) {
  if (n > 0) std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
}

}  // namespace les::kernels
