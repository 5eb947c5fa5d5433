// Scalar reference dequantisation of ggml's block formats (see ref.h).
//
// Each value is computed as ggml's to_float computes it, one rounded F32
// operation at a time in the order given in ref.h; products and sums are
// separate statements so that no compiler may fuse them into an FMA.

#include <cstring>

#include "kernels/block_elements.h"
#include "kernels/ref.h"
#include "kernels/unaligned.h"

namespace les::kernels {

using namespace les::blocks;

void dequantize_row_f32_ref(const float* x, float* y, int64_t n) {
  if (n > 0) std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
}

void dequantize_row_f16_ref(const fp16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fp16_to_fp32(load_unaligned<fp16_t>(x, i));
}

void dequantize_row_bf16_ref(const bf16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = bf16_to_fp32(load_unaligned<bf16_t>(x, i));
}

void dequantize_row_q4_0_ref(const block_q4_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK4_0; ++b) {
    const block_q4_0 blk = load_unaligned<block_q4_0>(x, b);
    const float d = fp16_to_fp32(blk.d);
    for (int e = 0; e < kQK4_0; ++e) y[b * kQK4_0 + e] = static_cast<float>(q4_0_code(blk, e)) * d;
  }
}

void dequantize_row_q4_1_ref(const block_q4_1* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK4_1; ++b) {
    const block_q4_1 blk = load_unaligned<block_q4_1>(x, b);
    const float d = fp16_to_fp32(blk.d);
    const float m = fp16_to_fp32(blk.m);
    for (int e = 0; e < kQK4_1; ++e) {
      const float scaled = static_cast<float>(q4_1_code(blk, e)) * d;
      y[b * kQK4_1 + e] = scaled + m;
    }
  }
}

void dequantize_row_q5_0_ref(const block_q5_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK5_0; ++b) {
    const block_q5_0 blk = load_unaligned<block_q5_0>(x, b);
    const float d = fp16_to_fp32(blk.d);
    for (int e = 0; e < kQK5_0; ++e) y[b * kQK5_0 + e] = static_cast<float>(q5_0_code(blk, e)) * d;
  }
}

void dequantize_row_q5_1_ref(const block_q5_1* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK5_1; ++b) {
    const block_q5_1 blk = load_unaligned<block_q5_1>(x, b);
    const float d = fp16_to_fp32(blk.d);
    const float m = fp16_to_fp32(blk.m);
    for (int e = 0; e < kQK5_1; ++e) {
      const float scaled = static_cast<float>(q5_1_code(blk, e)) * d;
      y[b * kQK5_1 + e] = scaled + m;
    }
  }
}

void dequantize_row_q8_0_ref(const block_q8_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK8_0; ++b) {
    const block_q8_0 blk = load_unaligned<block_q8_0>(x, b);
    const float d = fp16_to_fp32(blk.d);
    for (int e = 0; e < kQK8_0; ++e) y[b * kQK8_0 + e] = static_cast<float>(blk.qs[e]) * d;
  }
}

void dequantize_row_q8_1_ref(const block_q8_1* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK8_1; ++b) {
    const block_q8_1 blk = load_unaligned<block_q8_1>(x, b);
    const float d = fp16_to_fp32(blk.d);
    for (int e = 0; e < kQK8_1; ++e) y[b * kQK8_1 + e] = static_cast<float>(blk.qs[e]) * d;
  }
}

void dequantize_row_iq4_nl_ref(const block_iq4_nl* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK4_NL; ++b) {
    const block_iq4_nl blk = load_unaligned<block_iq4_nl>(x, b);
    const float d = fp16_to_fp32(blk.d);
    for (int e = 0; e < kQK4_NL; ++e) y[b * kQK4_NL + e] = d * static_cast<float>(iq4_nl_code(blk, e));
  }
}

void dequantize_row_q2_K_ref(const block_q2_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const block_q2_K blk = load_unaligned<block_q2_K>(x, b);
    const float d = fp16_to_fp32(blk.d);
    const float dmin = fp16_to_fp32(blk.dmin);
    for (int e = 0; e < kQKK; ++e) {
      const float dl = d * static_cast<float>(q2_K_scale(blk, e / 16));
      const float ml = dmin * static_cast<float>(q2_K_min(blk, e / 16));
      const float scaled = dl * static_cast<float>(q2_K_code(blk, e));
      y[b * kQKK + e] = scaled - ml;
    }
  }
}

void dequantize_row_q3_K_ref(const block_q3_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const block_q3_K blk = load_unaligned<block_q3_K>(x, b);
    const float d = fp16_to_fp32(blk.d);
    for (int e = 0; e < kQKK; ++e) {
      const float dl = d * static_cast<float>(q3_K_scale(blk, e / 16));
      y[b * kQKK + e] = dl * static_cast<float>(q3_K_code(blk, e));
    }
  }
}

void dequantize_row_q4_K_ref(const block_q4_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const block_q4_K blk = load_unaligned<block_q4_K>(x, b);
    const float d = fp16_to_fp32(blk.d);
    const float dmin = fp16_to_fp32(blk.dmin);
    for (int e = 0; e < kQKK; ++e) {
      int sc = 0, m = 0;
      k4_scale_min(blk.scales, e / 32, sc, m);
      const float d1 = d * static_cast<float>(sc);
      const float m1 = dmin * static_cast<float>(m);
      const float scaled = d1 * static_cast<float>(q4_K_code(blk, e));
      y[b * kQKK + e] = scaled - m1;
    }
  }
}

void dequantize_row_q5_K_ref(const block_q5_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const block_q5_K blk = load_unaligned<block_q5_K>(x, b);
    const float d = fp16_to_fp32(blk.d);
    const float dmin = fp16_to_fp32(blk.dmin);
    for (int e = 0; e < kQKK; ++e) {
      int sc = 0, m = 0;
      k4_scale_min(blk.scales, e / 32, sc, m);
      const float d1 = d * static_cast<float>(sc);
      const float m1 = dmin * static_cast<float>(m);
      const float scaled = d1 * static_cast<float>(q5_K_code(blk, e));
      y[b * kQKK + e] = scaled - m1;
    }
  }
}

void dequantize_row_q6_K_ref(const block_q6_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const block_q6_K blk = load_unaligned<block_q6_K>(x, b);
    const float d = fp16_to_fp32(blk.d);
    for (int e = 0; e < kQKK; ++e) {
      const float dl = d * static_cast<float>(q6_K_scale(blk, e / 16));
      y[b * kQKK + e] = dl * static_cast<float>(q6_K_code(blk, e));
    }
  }
}

void dequantize_row_q8_K_ref(const block_q8_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const block_q8_K blk = load_unaligned<block_q8_K>(x, b);
    for (int e = 0; e < kQKK; ++e) y[b * kQKK + e] = blk.d * static_cast<float>(blk.qs[e]);
  }
}

}  // namespace les::kernels
