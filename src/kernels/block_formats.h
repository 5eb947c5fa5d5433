// Block layouts of ggml's quantisation formats, byte for byte as stored in GGUF.
//
// Source: ggml's ggml-common.h (the structs) and the GGUF spec. Each block
// covers `block_size` consecutive elements of one row; a row of n elements is
// n / block_size blocks back to back. All multi-byte fields are little-endian
// (LES supports little-endian hosts only). F16 scale fields are raw binary16
// bits (see fp16.h). Every size is checked by static_assert against the spec.
//
// Thread-safety: plain data.
#pragma once

#include <cstdint>

#include "kernels/fp16.h"

namespace les {

inline constexpr int kQK4_0 = 32;
inline constexpr int kQK4_1 = 32;
inline constexpr int kQK5_0 = 32;
inline constexpr int kQK5_1 = 32;
inline constexpr int kQK8_0 = 32;
inline constexpr int kQK8_1 = 32;
inline constexpr int kQK4_NL = 32;
inline constexpr int kQKK = 256;          // QK_K: elements per K-quant super-block
inline constexpr int kKScaleSize = 12;    // K_SCALE_SIZE: packed 6-bit scales of Q4_K/Q5_K

// x = d * (q - 8), q in 0..15. qs[j] holds element j (low nibble) and j+16 (high nibble).
struct block_q4_0 {
  fp16_t d;
  uint8_t qs[kQK4_0 / 2];
};
static_assert(sizeof(block_q4_0) == 18, "block_q4_0 size");

// x = d * q + m, q in 0..15; nibble order as Q4_0.
struct block_q4_1 {
  fp16_t d;
  fp16_t m;
  uint8_t qs[kQK4_1 / 2];
};
static_assert(sizeof(block_q4_1) == 20, "block_q4_1 size");

// x = d * (q - 16), q 5 bits: low 4 in qs (as Q4_0), bit 4 of element j in bit j of qh.
struct block_q5_0 {
  fp16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK5_0 / 2];
};
static_assert(sizeof(block_q5_0) == 22, "block_q5_0 size");

// x = d * q + m, q 5 bits, layout as Q5_0.
struct block_q5_1 {
  fp16_t d;
  fp16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK5_1 / 2];
};
static_assert(sizeof(block_q5_1) == 24, "block_q5_1 size");

// x = d * q, q int8.
struct block_q8_0 {
  fp16_t d;
  int8_t qs[kQK8_0];
};
static_assert(sizeof(block_q8_0) == 34, "block_q8_0 size");

// x = d * q; s = d * sum(q) (activation type of Q4_1/Q5_1 in ggml).
struct block_q8_1 {
  fp16_t d;
  fp16_t s;
  int8_t qs[kQK8_1];
};
static_assert(sizeof(block_q8_1) == 36, "block_q8_1 size");

// The 16 non-linear levels of IQ4_NL (ggml's kvalues_iq4nl): a 4-bit code q
// stands for d * kIQ4NLValues[q]. Part of the format; never change.
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// x = d * kIQ4NLValues[q], q 4 bits, nibble order as Q4_0.
struct block_iq4_nl {
  fp16_t d;
  uint8_t qs[kQK4_NL / 2];
};
static_assert(sizeof(block_iq4_nl) == 18, "block_iq4_nl size");

// MXFP4 (OCP Microscaling, E2M1 elements with a shared E8M0 scale): 32
// elements; x = e8m0_half(e) * kMXFP4Values[q], q 4 bits, nibble order as Q4_0.
// The table holds twice the E2M1 values (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
// negatives), so the scale is halved (e8m0_half_to_fp32). Part of the format.
inline constexpr int kQKMXFP4 = 32;
inline constexpr int8_t kMXFP4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

struct block_mxfp4 {
  uint8_t e;  // E8M0 exponent: the block scale is 2^(e - 127)
  uint8_t qs[kQKMXFP4 / 2];
};
static_assert(sizeof(block_mxfp4) == 17, "block_mxfp4 size");

// Half the E8M0 scale, 2^(e - 128), as an F32 (exact for every e: 2^-128 and
// 2^-127 are F32 subnormals, e = 255 gives 2^127; E8M0's NaN code 0xFF is
// read as a number, as ggml's GGML_E8M0_TO_FP32_HALF reads it).
inline float e8m0_half_to_fp32(uint8_t e) {
  const uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23);
  return fp32_from_bits(bits);
}

// Q2_K: 16 sub-blocks of 16; scales[i] = scale (low 4 bits) | min (high 4 bits);
// x = d * sc * q - dmin * m, q 2 bits.
struct block_q2_K {
  uint8_t scales[kQKK / 16];
  uint8_t qs[kQKK / 4];
  fp16_t d;
  fp16_t dmin;
};
static_assert(sizeof(block_q2_K) == 2 * 2 + kQKK / 16 + kQKK / 4, "block_q2_K size");

// Q3_K: 16 sub-blocks of 16 with 6-bit signed scales packed in 12 bytes;
// q = 2 low bits (qs) + 1 high bit (hmask), x = d * (sc - 32) * (q - 4 if the hmask bit is 0).
struct block_q3_K {
  uint8_t hmask[kQKK / 8];
  uint8_t qs[kQKK / 4];
  uint8_t scales[12];
  fp16_t d;
};
static_assert(sizeof(block_q3_K) == 2 + kQKK / 4 + kQKK / 8 + 12, "block_q3_K size");

// Q4_K: 8 sub-blocks of 32; 6-bit scale and min per sub-block packed in 12 bytes;
// x = d * sc * q - dmin * m, q 4 bits.
struct block_q4_K {
  fp16_t d;
  fp16_t dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qs[kQKK / 2];
};
static_assert(sizeof(block_q4_K) == 2 * 2 + kKScaleSize + kQKK / 2, "block_q4_K size");

// Q5_K: as Q4_K with a fifth bit per element in qh.
struct block_q5_K {
  fp16_t d;
  fp16_t dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};
static_assert(sizeof(block_q5_K) == 2 * 2 + kKScaleSize + kQKK / 2 + kQKK / 8, "block_q5_K size");

// Q6_K: 16 sub-blocks of 16, int8 scales; q = 4 low bits (ql) + 2 high bits (qh), x = d * sc * (q - 32).
struct block_q6_K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  fp16_t d;
};
static_assert(sizeof(block_q6_K) == 2 + kQKK / 16 + 3 * kQKK / 4, "block_q6_K size");

// IQ4_XS: 8 sub-blocks of 32 with 6-bit scales ls (low 4 bits: nibble j % 2
// of scales_l[j / 2]; high 2 bits: bits 2j..2j+1 of scales_h) and IQ4_NL codes;
// x = (d * (ls - 32)) * kIQ4NLValues[q]. Sub-block j's 32 elements are packed
// in qs[16 j .. 16 j + 15] in Q4_0's nibble order.
struct block_iq4_xs {
  fp16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kQKK / 64];
  uint8_t qs[kQKK / 2];
};
static_assert(sizeof(block_iq4_xs) == 2 + 2 + kQKK / 64 + kQKK / 2, "block_iq4_xs size");

// TQ1_0 (ternary, 1.6875 bits): 256 codes t in {0, 1, 2}, x = (t - 1) * d.
// Bytes hold base-3 digits as fixed-point fractions: digit n (0-based) of
// byte b is ((uint8_t)(b * 3^n) * 3) >> 8. Elements 0..159: digit e / 32 of
// qs[e % 32]; 160..239: digit (e - 160) / 16 of qs[32 + (e - 160) % 16];
// 240..255: digit (e - 240) / 4 of qh[(e - 240) % 4].
struct block_tq1_0 {
  uint8_t qs[(kQKK - 4 * kQKK / 64) / 5];
  uint8_t qh[kQKK / 64];
  fp16_t d;
};
static_assert(sizeof(block_tq1_0) == 2 + kQKK / 64 + (kQKK - 4 * kQKK / 64) / 5, "block_tq1_0 size");

// TQ2_0 (ternary in 2 bits): x = (q - 1) * d, q 2 bits (0..3: a code of 3
// stands for 2). Element e: bits 2 ((e % 128) / 32) of qs[32 (e / 128) + e % 32].
struct block_tq2_0 {
  uint8_t qs[kQKK / 4];
  fp16_t d;
};
static_assert(sizeof(block_tq2_0) == 2 + kQKK / 4, "block_tq2_0 size");

// Q8_K: activation format of the K-quant dot products. x = d * q; bsums[i] = sum of
// qs[16 i .. 16 i + 15]. d is an F32.
struct block_q8_K {
  float d;
  int8_t qs[kQKK];
  int16_t bsums[kQKK / 16];
};
static_assert(sizeof(block_q8_K) == 4 + kQKK + kQKK / 16 * 2, "block_q8_K size");

}  // namespace les
