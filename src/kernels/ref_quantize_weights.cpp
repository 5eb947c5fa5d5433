// Scalar reference weight quantisers (see ref.h): fit scales with
// quant_fit.h, round them to the stored precision, recompute the codes for the
// scales actually stored, and pack the codes in the layouts that
// block_elements.h decodes.

#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/block_elements.h"
#include "kernels/quant_fit.h"
#include "kernels/ref.h"
#include "kernels/unaligned.h"

namespace les::kernels {
namespace {

using fit::Levels;

// Importance of group element i (1 without an importance vector).
const float* group_weights(const float* importance, int64_t offset) {
  return importance ? importance + offset : nullptr;
}

inline float dec16(fp16_t h) { return fp16_to_fp32(h); }

// Symmetric 32-element formats: stored level index k_e goes to nibble32 slot e (+ bit 4 in qh).
template <typename Block>
void pack_nibbles(Block& b, const uint8_t* k) {
  std::memset(b.qs, 0, sizeof(b.qs));
  for (int e = 0; e < 16; ++e) b.qs[e] = static_cast<uint8_t>((k[e] & 0x0F) | ((k[e + 16] & 0x0F) << 4));
  if constexpr (requires { b.qh; }) {
    std::memset(b.qh, 0, sizeof(b.qh));
    for (int e = 0; e < 32; ++e) b.qh[e / 8] |= static_cast<uint8_t>(((k[e] >> 4) & 1) << (e % 8));
  }
}

template <typename Block>
void quantize_symmetric_32(const float* x, Block* y, int64_t n, const float* importance, const Levels& levels) {
  uint8_t k[32];
  for (int64_t b = 0; b < n / 32; ++b) {
    const float* xb = x + b * 32;
    const float d = fit::fit_symmetric(xb, group_weights(importance, b * 32), 32, levels, k);
    Block out{};
    out.d = fp32_to_fp16(d);
    fit::codes_for_scale(xb, 32, dec16(out.d), levels, k);
    if constexpr (std::is_same_v<Block, block_q8_0>) {
      for (int e = 0; e < 32; ++e) out.qs[e] = static_cast<int8_t>(fit::level_value(levels, k[e]));
    } else {
      pack_nibbles(out, k);  // the stored nibble (and bit 4) is the level index
    }
    store_unaligned(y, b, out);
  }
}

template <typename Block>
void quantize_affine_32(const float* x, Block* y, int64_t n, const float* importance, int qmax) {
  uint8_t q[32];
  for (int64_t b = 0; b < n / 32; ++b) {
    const float* xb = x + b * 32;
    float d = 0, off = 0;
    fit::fit_affine(xb, group_weights(importance, b * 32), 32, qmax, false, q, d, off);
    Block out{};
    out.d = fp32_to_fp16(d);
    out.m = fp32_to_fp16(off);
    fit::codes_for_affine(xb, 32, dec16(out.d), dec16(out.m), qmax, q);
    pack_nibbles(out, q);
    store_unaligned(y, b, out);
  }
}

// Importance of one sub-block's scale: sum_i w_i c_i^2 (the error a scale
// error adds is delta^2 times this), and of its offset: sum_i w_i.
void sub_block_weights(const float* w, int len, const int* codes, float& scale_weight, float& offset_weight) {
  double sw = 0, ow = 0;
  for (int i = 0; i < len; ++i) {
    const double wi = w ? w[i] : 1.0;
    sw += wi * codes[i] * codes[i];
    ow += wi;
  }
  scale_weight = static_cast<float>(sw);
  offset_weight = static_cast<float>(ow);
}

// Two-level symmetric K-quant (Q3_K, Q6_K): per sub-block of `sub` elements a
// signed float scale is fitted with codes in `code_levels`; those scales are
// then fitted as integers in `scale_levels` times one F16 super-scale.
// Outputs: super-scale (F16), integer sub-scales, and final codes (values, not indices).
void quantize_k_symmetric(const float* x, const float* w, int sub, const Levels& code_levels,
                          const Levels& scale_levels, fp16_t& d_out, int* scales, int* codes) {
  const int nsub = kQKK / sub;
  float sub_scale[16], scale_weight[16], unused;
  uint8_t k[kQKK];
  for (int j = 0; j < nsub; ++j) {
    sub_scale[j] = fit::fit_symmetric(x + j * sub, w ? w + j * sub : nullptr, sub, code_levels, k + j * sub);
    int vals[kQKK];
    for (int i = 0; i < sub; ++i) vals[i] = fit::level_value(code_levels, k[j * sub + i]);
    sub_block_weights(w ? w + j * sub : nullptr, sub, vals, scale_weight[j], unused);
  }
  uint8_t sk[16];
  const float d = fit::fit_symmetric(sub_scale, scale_weight, nsub, scale_levels, sk);
  d_out = fp32_to_fp16(d);
  fit::codes_for_scale(sub_scale, nsub, dec16(d_out), scale_levels, sk);
  for (int j = 0; j < nsub; ++j) {
    scales[j] = fit::level_value(scale_levels, sk[j]);
    const float dl = dec16(d_out) * static_cast<float>(scales[j]);
    fit::codes_for_scale(x + j * sub, sub, dl, code_levels, k + j * sub);
    for (int i = 0; i < sub; ++i) codes[j * sub + i] = fit::level_value(code_levels, k[j * sub + i]);
  }
}

// Two-level affine K-quant (Q2_K, Q4_K, Q5_K): per sub-block x ~ dj * q - mj
// with q in 0..qmax, dj >= 0, mj >= 0; dj and mj are then fitted as integers
// 0..scale_max times the F16 super-scales d and dmin.
void quantize_k_affine(const float* x, const float* w, int sub, int qmax, int scale_max, fp16_t& d_out,
                       fp16_t& dmin_out, int* scales, int* mins, int* codes) {
  const int nsub = kQKK / sub;
  float sub_d[16], sub_m[16], wd[16], wm[16];
  uint8_t q[kQKK];
  for (int j = 0; j < nsub; ++j) {
    float d = 0, b = 0;
    fit::fit_affine(x + j * sub, w ? w + j * sub : nullptr, sub, qmax, true, q + j * sub, d, b);
    sub_d[j] = d;
    sub_m[j] = -b;
    int vals[kQKK];
    for (int i = 0; i < sub; ++i) vals[i] = q[j * sub + i];
    sub_block_weights(w ? w + j * sub : nullptr, sub, vals, wd[j], wm[j]);
  }
  const Levels levels = fit::contiguous_levels(0, scale_max);
  uint8_t sk[16], mk[16];
  d_out = fp32_to_fp16(fit::fit_symmetric(sub_d, wd, nsub, levels, sk));
  dmin_out = fp32_to_fp16(fit::fit_symmetric(sub_m, wm, nsub, levels, mk));
  fit::codes_for_scale(sub_d, nsub, dec16(d_out), levels, sk);
  fit::codes_for_scale(sub_m, nsub, dec16(dmin_out), levels, mk);
  for (int j = 0; j < nsub; ++j) {
    scales[j] = sk[j];
    mins[j] = mk[j];
    const float dl = dec16(d_out) * static_cast<float>(scales[j]);
    const float ml = dec16(dmin_out) * static_cast<float>(mins[j]);
    fit::codes_for_affine(x + j * sub, sub, dl, -ml, qmax, q + j * sub);
    for (int i = 0; i < sub; ++i) codes[j * sub + i] = q[j * sub + i];
  }
}

// Inverse of blocks::k4_scale_min: packs eight 6-bit scales and mins into 12 bytes.
void pack_k4_scales(const int* sc, const int* m, uint8_t* out) {
  std::memset(out, 0, kKScaleSize);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      out[j] |= static_cast<uint8_t>(sc[j] & 63);
      out[j + 4] |= static_cast<uint8_t>(m[j] & 63);
    } else {
      out[j + 4] |= static_cast<uint8_t>((sc[j] & 0x0F) | ((m[j] & 0x0F) << 4));
      out[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
      out[j] |= static_cast<uint8_t>((m[j] >> 4) << 6);
    }
  }
}

// 4-bit codes of a Q4_K/Q5_K super-block at their byte and nibble (block_elements.h).
void pack_k4_codes(const int* codes, uint8_t* qs) {
  std::memset(qs, 0, kQKK / 2);
  for (int e = 0; e < kQKK; ++e) {
    qs[32 * (e / 64) + e % 32] |= static_cast<uint8_t>((codes[e] & 0x0F) << ((e % 64) < 32 ? 0 : 4));
  }
}

}  // namespace

void quantize_row_q4_0_ref(const float* x, block_q4_0* y, int64_t n, const float* importance) {
  quantize_symmetric_32(x, y, n, importance, fit::contiguous_levels(-8, 7));
}

void quantize_row_q5_0_ref(const float* x, block_q5_0* y, int64_t n, const float* importance) {
  quantize_symmetric_32(x, y, n, importance, fit::contiguous_levels(-16, 15));
}

void quantize_row_q4_1_ref(const float* x, block_q4_1* y, int64_t n, const float* importance) {
  quantize_affine_32(x, y, n, importance, 15);
}

void quantize_row_q5_1_ref(const float* x, block_q5_1* y, int64_t n, const float* importance) {
  quantize_affine_32(x, y, n, importance, 31);
}

void quantize_row_iq4_nl_ref(const float* x, block_iq4_nl* y, int64_t n, const float* importance) {
  static constexpr int kValues[16] = {kIQ4NLValues[0],  kIQ4NLValues[1],  kIQ4NLValues[2],  kIQ4NLValues[3],
                                      kIQ4NLValues[4],  kIQ4NLValues[5],  kIQ4NLValues[6],  kIQ4NLValues[7],
                                      kIQ4NLValues[8],  kIQ4NLValues[9],  kIQ4NLValues[10], kIQ4NLValues[11],
                                      kIQ4NLValues[12], kIQ4NLValues[13], kIQ4NLValues[14], kIQ4NLValues[15]};
  quantize_symmetric_32(x, y, n, importance, Levels{kValues, 16, kValues[0], kValues[15]});
}

void quantize_row_q8_0_weights_ref(const float* x, block_q8_0* y, int64_t n, const float* importance) {
  quantize_symmetric_32(x, y, n, importance, fit::contiguous_levels(-127, 127));
}

void quantize_row_q2_K_ref(const float* x, block_q2_K* y, int64_t n, const float* importance) {
  int scales[16], mins[16], codes[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    block_q2_K out{};
    quantize_k_affine(x + b * kQKK, group_weights(importance, b * kQKK), 16, 3, 15, out.d, out.dmin, scales, mins,
                      codes);
    for (int j = 0; j < 16; ++j) out.scales[j] = static_cast<uint8_t>(scales[j] | (mins[j] << 4));
    std::memset(out.qs, 0, sizeof(out.qs));
    for (int e = 0; e < kQKK; ++e) {
      const int h = e / 128, r = e % 128;
      out.qs[32 * h + r % 32] |= static_cast<uint8_t>(codes[e] << (2 * (r / 32)));
    }
    store_unaligned(y, b, out);
  }
}

void quantize_row_q3_K_ref(const float* x, block_q3_K* y, int64_t n, const float* importance) {
  int scales[16], codes[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    block_q3_K out{};
    quantize_k_symmetric(x + b * kQKK, group_weights(importance, b * kQKK), 16, fit::contiguous_levels(-4, 3),
                         fit::contiguous_levels(-32, 31), out.d, scales, codes);
    std::memset(out.scales, 0, sizeof(out.scales));
    for (int i = 0; i < 16; ++i) {
      const int u = scales[i] + 32;  // stored 6-bit value
      if (i < 8) {
        out.scales[i] |= static_cast<uint8_t>(u & 0x0F);
      } else {
        out.scales[i - 8] |= static_cast<uint8_t>((u & 0x0F) << 4);
      }
      out.scales[8 + i % 4] |= static_cast<uint8_t>((u >> 4) << (2 * (i / 4)));
    }
    std::memset(out.qs, 0, sizeof(out.qs));
    std::memset(out.hmask, 0, sizeof(out.hmask));
    for (int e = 0; e < kQKK; ++e) {
      const int h = e / 128, r = e % 128;
      const int k = codes[e] + 4;  // 0..7: low 2 bits in qs, bit 2 in hmask
      out.qs[32 * h + r % 32] |= static_cast<uint8_t>((k & 3) << (2 * (r / 32)));
      out.hmask[e % 32] |= static_cast<uint8_t>((k >> 2) << (4 * h + r / 32));
    }
    store_unaligned(y, b, out);
  }
}

void quantize_row_q4_K_ref(const float* x, block_q4_K* y, int64_t n, const float* importance) {
  int scales[8], mins[8], codes[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    block_q4_K out{};
    quantize_k_affine(x + b * kQKK, group_weights(importance, b * kQKK), 32, 15, 63, out.d, out.dmin, scales, mins,
                      codes);
    pack_k4_scales(scales, mins, out.scales);
    pack_k4_codes(codes, out.qs);
    store_unaligned(y, b, out);
  }
}

void quantize_row_q5_K_ref(const float* x, block_q5_K* y, int64_t n, const float* importance) {
  int scales[8], mins[8], codes[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    block_q5_K out{};
    quantize_k_affine(x + b * kQKK, group_weights(importance, b * kQKK), 32, 31, 63, out.d, out.dmin, scales, mins,
                      codes);
    pack_k4_scales(scales, mins, out.scales);
    pack_k4_codes(codes, out.qs);
    std::memset(out.qh, 0, sizeof(out.qh));
    for (int e = 0; e < kQKK; ++e) out.qh[e % 32] |= static_cast<uint8_t>((codes[e] >> 4) << (e / 32));
    store_unaligned(y, b, out);
  }
}

void quantize_row_q6_K_ref(const float* x, block_q6_K* y, int64_t n, const float* importance) {
  int scales[16], codes[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    block_q6_K out{};
    quantize_k_symmetric(x + b * kQKK, group_weights(importance, b * kQKK), 16, fit::contiguous_levels(-32, 31),
                         fit::contiguous_levels(-128, 127), out.d, scales, codes);
    for (int j = 0; j < 16; ++j) out.scales[j] = static_cast<int8_t>(scales[j]);
    std::memset(out.ql, 0, sizeof(out.ql));
    std::memset(out.qh, 0, sizeof(out.qh));
    for (int e = 0; e < kQKK; ++e) {
      const int h = e / 128, r = e % 128, k = r / 32, l = r % 32;
      const int u = codes[e] + 32;  // 0..63
      out.ql[64 * h + 32 * (k % 2) + l] |= static_cast<uint8_t>((u & 0x0F) << (k < 2 ? 0 : 4));
      out.qh[32 * h + l] |= static_cast<uint8_t>((u >> 4) << (2 * k));
    }
    store_unaligned(y, b, out);
  }
}

}  // namespace les::kernels
