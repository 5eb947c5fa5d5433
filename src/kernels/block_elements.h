// Element-wise access to the integer codes and scales of ggml's block formats.
//
// Each function returns the integer that element `e` (0 <= e < block size) of
// one block stands for, already offset where the format offsets it (Q4_0's
// q - 8, Q3_K's q - 4 when the high bit is clear, Q6_K's q - 32, ...), so that
// the format's value is  x[e] = <float scale> * code(e)  (minus a min for the
// affine formats). The scale accessors decode the packed sub-block scales.
//
// These are the single definition of the bit layouts used by the scalar
// reference kernels (ref_*.cpp) and by tests of the SIMD kernels. They are
// written for clarity, never for speed.
//
// Source: the block layouts of ggml's ggml-common.h and the dequantisation
// loops of ggml-quants.c (read, not copied), restated per element:
//   Q4_0/Q4_1/IQ4_NL/MXFP4: byte qs[e % 16], low nibble for e < 16, high nibble otherwise.
//   Q5_0/Q5_1: as Q4, plus bit e of the little-endian 32-bit qh as bit 4.
//   Q2_K: 2 halves of 128; in half h element r = e % 128 lives in byte
//         qs[32 h + r % 32] at bit offset 2 (r / 32); scales[e / 16].
//   Q3_K: 2 low bits as Q2_K; the third bit is bit (4 h + (e % 128) / 32) of
//         hmask[e % 32], and a clear bit subtracts 4; 16 six-bit scales.
//   Q4_K: 4 chunks of 64; element e lives in byte qs[32 (e / 64) + e % 32],
//         low nibble when e % 64 < 32; sub-block (scale/min pair) e / 32.
//   Q5_K: as Q4_K plus bit (e / 32) of qh[e % 32] as bit 4.
//   Q6_K: 2 halves of 128; with r = e % 128, k = r / 32, l = r % 32 the low
//         4 bits are nibble (k / 2) of ql[64 h + 32 (k % 2) + l] and the high
//         2 bits are bits 2k..2k+1 of qh[32 h + l]; scales[e / 16].
//   IQ4_XS: sub-block j = e / 32 packs its 32 codes in qs[16 j ..] like Q4_0;
//         its 6-bit scale is split over scales_l (4 bits) and scales_h (2 bits).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/block_formats.h"

namespace les::blocks {

// Nibble of element e in a 16-byte array packing 32 elements (Q4_0, Q4_1, Q5_x, IQ4_NL).
inline int nibble32(const uint8_t* qs, int e) {
  return e < 16 ? (qs[e] & 0x0F) : (qs[e - 16] >> 4);
}

// Bit e of a little-endian 32-bit mask stored as 4 bytes (Q5_0/Q5_1 qh).
inline int bit32(const uint8_t* qh, int e) { return (qh[e / 8] >> (e % 8)) & 1; }

inline int q4_0_code(const block_q4_0& b, int e) { return nibble32(b.qs, e) - 8; }    // -8..7
inline int q4_1_code(const block_q4_1& b, int e) { return nibble32(b.qs, e); }        // 0..15
inline int q5_0_code(const block_q5_0& b, int e) {                                     // -16..15
  return (nibble32(b.qs, e) | (bit32(b.qh, e) << 4)) - 16;
}
inline int q5_1_code(const block_q5_1& b, int e) {                                     // 0..31
  return nibble32(b.qs, e) | (bit32(b.qh, e) << 4);
}
inline int iq4_nl_code(const block_iq4_nl& b, int e) {                                 // -127..113
  return kIQ4NLValues[nibble32(b.qs, e)];
}
inline int mxfp4_code(const block_mxfp4& b, int e) {                                   // -12..12 (doubled E2M1)
  return kMXFP4Values[nibble32(b.qs, e)];
}

// ---- K-quants (256 elements per super-block) ----

inline int q2_K_code(const block_q2_K& b, int e) {  // 0..3
  const int h = e / 128, r = e % 128;
  return (b.qs[32 * h + r % 32] >> (2 * (r / 32))) & 3;
}
// Sub-block i (0..15, 16 elements each): 4-bit scale and 4-bit min.
inline int q2_K_scale(const block_q2_K& b, int i) { return b.scales[i] & 0x0F; }
inline int q2_K_min(const block_q2_K& b, int i) { return b.scales[i] >> 4; }

inline int q3_K_code(const block_q3_K& b, int e) {  // -4..3
  const int h = e / 128, r = e % 128;
  const int low = (b.qs[32 * h + r % 32] >> (2 * (r / 32))) & 3;
  const int high = (b.hmask[e % 32] >> (4 * h + r / 32)) & 1;
  return low - (high ? 0 : 4);
}
// Sub-block i (0..15): signed scale, the 6-bit stored value minus 32 (-32..31).
// Low 4 bits: low nibble of scales[i] for i < 8, high nibble of scales[i - 8]
// otherwise; high 2 bits: bits 2 (i / 4) .. +1 of scales[8 + i % 4].
inline int q3_K_scale(const block_q3_K& b, int i) {
  const int low = i < 8 ? (b.scales[i] & 0x0F) : (b.scales[i - 8] >> 4);
  const int high = (b.scales[8 + i % 4] >> (2 * (i / 4))) & 3;
  return (low | (high << 4)) - 32;
}

// Q4_K/Q5_K: 6-bit scale and 6-bit min of sub-block j (0..7, 32 elements each),
// packed in 12 bytes: j < 4 take the low 6 bits of bytes j (scale) and j + 4
// (min); j >= 4 take a nibble of byte j + 4 (low: scale, high: min) with the
// top 2 bits of bytes j - 4 (scale) and j (min) as bits 4..5.
inline void k4_scale_min(const uint8_t* scales, int j, int& sc, int& m) {
  if (j < 4) {
    sc = scales[j] & 63;
    m = scales[j + 4] & 63;
  } else {
    sc = (scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4);
    m = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

inline int q4_K_code(const block_q4_K& b, int e) {  // 0..15
  const uint8_t byte = b.qs[32 * (e / 64) + e % 32];
  return (e % 64) < 32 ? (byte & 0x0F) : (byte >> 4);
}

inline int q5_K_code(const block_q5_K& b, int e) {  // 0..31
  const uint8_t byte = b.qs[32 * (e / 64) + e % 32];
  const int low = (e % 64) < 32 ? (byte & 0x0F) : (byte >> 4);
  const int high = (b.qh[e % 32] >> (e / 32)) & 1;
  return low | (high << 4);
}

inline int q6_K_code(const block_q6_K& b, int e) {  // -32..31
  const int h = e / 128, r = e % 128, k = r / 32, l = r % 32;
  const uint8_t lbyte = b.ql[64 * h + 32 * (k % 2) + l];
  const int low = k < 2 ? (lbyte & 0x0F) : (lbyte >> 4);
  const int high = (b.qh[32 * h + l] >> (2 * k)) & 3;
  return (low | (high << 4)) - 32;
}
// Sub-block i (0..15): signed 8-bit scale.
inline int q6_K_scale(const block_q6_K& b, int i) { return b.scales[i]; }

// ---- IQ4_XS (256 elements: 8 sub-blocks of 32 with IQ4_NL codes) ----

// Element e is nibble32 of sub-block e / 32's 16 bytes.
inline int iq4_xs_code(const block_iq4_xs& b, int e) {  // -127..113
  return kIQ4NLValues[nibble32(b.qs + 16 * (e / 32), e % 32)];
}
// Sub-block j (0..7): the 6-bit scale minus 32 (-32..31); low 4 bits from
// nibble j % 2 of scales_l[j / 2], high 2 bits from bits 2j..2j+1 of scales_h.
inline int iq4_xs_scale(const block_iq4_xs& b, int j) {
  const int low = (b.scales_l[j / 2] >> (4 * (j % 2))) & 0x0F;
  const int high = (b.scales_h >> (2 * j)) & 3;
  return (low | (high << 4)) - 32;
}

// ---- Ternary TQ1_0 / TQ2_0 (256 elements; layouts in block_formats.h) ----

// Base-3 digit n (0..4) of a TQ1_0 byte: ((uint8_t)(byte * 3^n) * 3) >> 8, in 0..2.
inline int tq1_0_digit(uint8_t byte, int n) {
  static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  const uint8_t q = static_cast<uint8_t>(byte * kPow3[n]);
  return (static_cast<int>(q) * 3) >> 8;
}
inline int tq1_0_code(const block_tq1_0& b, int e) {  // -1..1
  if (e < 160) return tq1_0_digit(b.qs[e % 32], e / 32) - 1;
  if (e < 240) return tq1_0_digit(b.qs[32 + (e - 160) % 16], (e - 160) / 16) - 1;
  return tq1_0_digit(b.qh[(e - 240) % 4], (e - 240) / 4) - 1;
}
inline int tq2_0_code(const block_tq2_0& b, int e) {  // -1..2
  return ((b.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3) - 1;
}

}  // namespace les::blocks
