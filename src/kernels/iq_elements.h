// Element-wise access to the lattice i-quants (iq_block_formats.h): for
// element e (0..255) of a block, its signed grid coordinate, and per
// sub-block of 32 its integer scale, so that every format's value is
//   IQ2_XXS / IQ2_XS / IQ2_S:  x = d * (2 s + 1) * code / 8
//   IQ3_XXS:                   x = d * (2 s + 1) * code / 4
//   IQ3_S:                     x = d * (2 s + 1) * code
//   IQ1_S / IQ1_M:             x = d * (2 s + 1) * code8 / 8,  code8 = 8 * coordinate +- 1
// (ggml writes the IQ2/IQ3_XXS scales as (0.5 + s) * 0.25 and (0.5 + s) * 0.5,
// the same numbers; ref_iquants.cpp keeps its float order for dequantisation).
// The single definition of the bit layouts for the scalar reference and the
// tests of the SIMD kernels; written for clarity, never for speed.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/iq_block_formats.h"
#include "kernels/iq_grids.h"

namespace les::blocks {

// Little-endian 32-bit word at byte offset `at` of p.
inline uint32_t le32(const void* p, int at) {
  uint32_t v;
  std::memcpy(&v, static_cast<const uint8_t*>(p) + at, 4);
  return v;
}

// Sign of coordinate j (0..7) of a group from its full sign byte: -1 or +1.
inline int sign_of(uint8_t sign_byte, int j) { return (sign_byte >> j) & 1 ? -1 : 1; }

// ---- IQ2_XXS: sub-block ib = e / 32 is the word pair at bytes 8 ib, 8 ib + 4 of qs ----
inline int iq2_xxs_scale(const block_iq2_xxs& b, int ib) { return static_cast<int>(le32(b.qs, 8 * ib + 4) >> 28); }
inline int iq2_xxs_code(const block_iq2_xxs& b, int e) {
  const int ib = e / 32, l = (e % 32) / 8, j = e % 8;
  const int index = static_cast<int>((le32(b.qs, 8 * ib) >> (8 * l)) & 0xFF);
  const uint8_t signs = kernels::iq::sign_byte_from7(le32(b.qs, 8 * ib + 4) >> (7 * l));
  return sign_of(signs, j) * kernels::iq::grid_u8(kernels::iq::kIQ2XXSGrid[index], j);
}

// ---- IQ2_XS: one 16-bit word per group of 8 ----
inline int iq2_xs_scale(const block_iq2_xs& b, int ib, int half) {  // half 0: groups 0-1, 1: groups 2-3
  return half == 0 ? (b.scales[ib] & 0x0F) : (b.scales[ib] >> 4);
}
inline int iq2_xs_code(const block_iq2_xs& b, int e) {
  const int g = e / 8, j = e % 8;
  const uint16_t w = b.qs[g];
  return sign_of(kernels::iq::sign_byte_from7(w >> 9), j) * kernels::iq::grid_u8(kernels::iq::kIQ2XSGrid[w & 511], j);
}

// ---- IQ2_S: 10-bit indices, explicit sign bytes ----
inline int iq2_s_scale(const block_iq2_s& b, int ib, int half) {
  return half == 0 ? (b.scales[ib] & 0x0F) : (b.scales[ib] >> 4);
}
inline int iq2_s_code(const block_iq2_s& b, int e) {
  const int g = e / 8, ib = g / 4, l = g % 4, j = e % 8;
  const int index = b.qs[g] | (((b.qh[ib] >> (2 * l)) & 3) << 8);
  return sign_of(b.qs[kQKK / 8 + g], j) * kernels::iq::grid_u8(kernels::iq::kIQ2SGrid[index], j);
}

// ---- IQ3_XXS: groups of 4, sign/scale word per sub-block at byte 64 + 4 ib ----
inline int iq3_xxs_scale(const block_iq3_xxs& b, int ib) { return static_cast<int>(le32(b.qs, 64 + 4 * ib) >> 28); }
inline int iq3_xxs_code(const block_iq3_xxs& b, int e) {
  const int ib = e / 32, l = (e % 32) / 8, j = e % 8;  // l: the 8-weight pair of groups, j within it
  const int index = b.qs[e / 4];
  const uint8_t signs = kernels::iq::sign_byte_from7(le32(b.qs, 64 + 4 * ib) >> (7 * l));
  return sign_of(signs, j) * kernels::iq::grid_u8(kernels::iq::kIQ3XXSGrid[index], e % 4);
}

// ---- IQ3_S: 9-bit indices of groups of 4, explicit sign bytes ----
inline int iq3_s_scale(const block_iq3_s& b, int ib) {
  return ib % 2 == 0 ? (b.scales[ib / 2] & 0x0F) : (b.scales[ib / 2] >> 4);
}
inline int iq3_s_code(const block_iq3_s& b, int e) {
  const int g = e / 4, ib = e / 32, k = g % 8;
  const int index = b.qs[g] | (((b.qh[ib] >> k) & 1) << 8);
  return sign_of(b.signs[e / 8], e % 8) * kernels::iq::grid_u8(kernels::iq::kIQ3SGrid[index], e % 4);
}

// ---- IQ1_S ----
inline int iq1_s_scale(const block_iq1_s& b, int ib) { return (b.qh[ib] >> 12) & 7; }
inline bool iq1_s_delta_negative(const block_iq1_s& b, int ib) { return (b.qh[ib] & 0x8000) != 0; }
inline int iq1_s_coord(const block_iq1_s& b, int e) {  // -1, 0, 1
  const int g = e / 8, ib = g / 4, l = g % 4;
  const int index = b.qs[g] | (((b.qh[ib] >> (3 * l)) & 7) << 8);
  return kernels::iq::grid_s8(kernels::iq::kIQ1SGrid[index], e % 8);
}
inline int iq1_s_code8(const block_iq1_s& b, int e) {  // 8 * coordinate + 8 * delta
  return 8 * iq1_s_coord(b, e) + (iq1_s_delta_negative(b, e / 32) ? -1 : 1);
}

// ---- IQ1_M ----
inline uint16_t iq1_m_scale_word(const block_iq1_m& b, int k) {  // sc[k], little-endian
  return static_cast<uint16_t>(b.scales[2 * k] | (b.scales[2 * k + 1] << 8));
}
inline fp16_t iq1_m_d(const block_iq1_m& b) {
  return static_cast<fp16_t>((iq1_m_scale_word(b, 0) >> 12) | ((iq1_m_scale_word(b, 1) >> 8) & 0x00F0) |
                             ((iq1_m_scale_word(b, 2) >> 4) & 0x0F00) | (iq1_m_scale_word(b, 3) & 0xF000));
}
inline int iq1_m_scale(const block_iq1_m& b, int ib, int half) {  // half 0: groups 0-1, 1: groups 2-3
  return (iq1_m_scale_word(b, ib / 2) >> (6 * (ib % 2) + 3 * half)) & 7;
}
inline bool iq1_m_delta_negative(const block_iq1_m& b, int g) {  // g: group of 8 (0..31)
  return ((b.qh[g / 2] >> (4 * (g % 2))) & 0x08) != 0;
}
inline int iq1_m_coord(const block_iq1_m& b, int e) {
  const int g = e / 8;
  const int index = b.qs[g] | (((b.qh[g / 2] >> (4 * (g % 2))) & 7) << 8);
  return kernels::iq::grid_s8(kernels::iq::kIQ1SGrid[index], e % 8);
}
inline int iq1_m_code8(const block_iq1_m& b, int e) {
  return 8 * iq1_m_coord(b, e) + (iq1_m_delta_negative(b, e / 8) ? -1 : 1);
}

}  // namespace les::blocks
