// Block layouts of ggml's lattice i-quants (super-blocks of 256 weights),
// byte for byte as stored in GGUF, and what each field stands for.
//
// Every format splits its 256 weights into 8 sub-blocks of 32 and those into
// groups of 8 (IQ2, IQ1) or 4 (IQ3) weights; each group stores an index into
// the format's grid (iq_grids.h), and the IQ2/IQ3 groups signs apart. A
// weight is  d * (sub-block scale) * (grid coordinate with its sign), with
// the format's constant factor; iq_elements.h restates every bit per element.
//
// Source: ggml's ggml-common.h (the structs), ggml-quants.c's
// dequantize_row_iq* (the meaning of each field), read not copied.
// Multi-byte fields are little-endian; F16 fields raw binary16 bits.
//
// Thread-safety: plain data.
#pragma once

#include <cstdint>

#include "kernels/block_formats.h"

namespace les {

// IQ2_XXS (2.0625 bits/weight). qs holds 8 pairs of 32-bit words, one pair
// per sub-block of 32: the first word's 4 bytes are the grid indices of its
// 4 groups of 8 (kIQ2XXSGrid); the second holds 4 x 7 sign bits (group l in
// bits 7l..7l+6, eighth sign by parity) and the 4-bit scale s in bits 28..31.
// x = d * (0.5 + s) * 0.25 * coordinate * sign.
struct block_iq2_xxs {
  fp16_t d;
  uint16_t qs[kQKK / 8];
};
static_assert(sizeof(block_iq2_xxs) == 2 + kQKK / 4, "block_iq2_xxs size");

// IQ2_XS (2.3125 bits/weight). qs[4 ib + l]: group l of sub-block ib, a 9-bit
// index into kIQ2XSGrid (bits 0..8) and 7 sign bits (bits 9..15, parity
// completes them); scales[ib]: low nibble for groups 0-1, high for 2-3.
// x = d * (0.5 + s) * 0.25 * coordinate * sign.
struct block_iq2_xs {
  fp16_t d;
  uint16_t qs[kQKK / 8];
  uint8_t scales[kQKK / 32];
};
static_assert(sizeof(block_iq2_xs) == 2 + kQKK / 4 + kQKK / 32, "block_iq2_xs size");

// IQ2_S (2.5625 bits/weight). qs[0..31]: low 8 bits of the 10-bit index of
// group 4 ib + l into kIQ2SGrid; its bits 8..9 are bits 2l..2l+1 of qh[ib];
// qs[32..63]: one full sign byte per group (all 8 signs stored). scales as IQ2_XS.
// x = d * (0.5 + s) * 0.25 * coordinate * sign.
struct block_iq2_s {
  fp16_t d;
  uint8_t qs[kQKK / 4];
  uint8_t qh[kQKK / 32];
  uint8_t scales[kQKK / 32];
};
static_assert(sizeof(block_iq2_s) == 2 + kQKK / 4 + kQKK / 16, "block_iq2_s size");

// IQ3_XXS (3.0625 bits/weight). qs[0..63]: one 8-bit index into kIQ3XXSGrid
// per group of 4 (8 per sub-block); qs[64..95]: one 32-bit word per sub-block,
// 4 x 7 sign bits for its 4 pairs of groups (each 8 weights, parity completes
// them) and the 4-bit scale s in bits 28..31.
// x = d * (0.5 + s) * 0.5 * coordinate * sign.
struct block_iq3_xxs {
  fp16_t d;
  uint8_t qs[3 * kQKK / 8];
};
static_assert(sizeof(block_iq3_xxs) == 2 + 3 * kQKK / 8, "block_iq3_xxs size");

// IQ3_S (3.4375 bits/weight). qs: low 8 bits of the 9-bit index of each group
// of 4 into kIQ3SGrid (8 per sub-block); bit 8 of group k of sub-block ib is
// bit k of qh[ib]; signs: one full byte per 8 weights; scales[i]: the 4-bit
// scales of sub-blocks 2i (low nibble) and 2i + 1 (high).
// x = d * (1 + 2 s) * coordinate * sign.
struct block_iq3_s {
  fp16_t d;
  uint8_t qs[kQKK / 4];
  uint8_t qh[kQKK / 32];
  uint8_t signs[kQKK / 8];
  uint8_t scales[kQKK / 64];
};
static_assert(sizeof(block_iq3_s) == 2 + 13 * (kQKK / 32) + kQKK / 64, "block_iq3_s size");

// IQ1_S (1.5625 bits/weight). Group l of sub-block ib: 11-bit index into
// kIQ1SGrid, low 8 bits qs[4 ib + l], high 3 bits bits 3l..3l+2 of qh[ib];
// qh[ib] bits 12..14: the 3-bit scale s; bit 15: the sign of the shift delta.
// x = d * (2 s + 1) * (coordinate + delta), delta = +-1/8 (IQ1S_DELTA).
struct block_iq1_s {
  fp16_t d;
  uint8_t qs[kQKK / 8];
  uint16_t qh[kQKK / 32];
};
static_assert(sizeof(block_iq1_s) == 2 + kQKK / 8 + kQKK / 16, "block_iq1_s size");

// IQ1_M (1.75 bits/weight, no separate d field). Group l (0..3) of sub-block
// ib: 11-bit index, low 8 bits qs[4 ib + l], high 3 bits in nibble l % 2 of
// qh[2 ib + l / 2] (bits 0..2), whose bit 3 is the sign of that group's delta.
// scales, read as four little-endian uint16 words sc[0..3]: the 3-bit scales
// of sub-block ib are bits 6 (ib % 2) .. +2 (groups 0-1) and 6 (ib % 2) + 3 ..
// +5 (groups 2-3) of sc[ib / 2]; the top nibbles of sc[0], sc[1], sc[2], sc[3]
// are bits 0-3, 4-7, 8-11, 12-15 of the F16 super-block scale d.
// x = d * (2 s + 1) * (coordinate + delta), delta = +-1/8 (IQ1M_DELTA).
struct block_iq1_m {
  uint8_t qs[kQKK / 8];
  uint8_t qh[kQKK / 16];
  uint8_t scales[kQKK / 32];
};
static_assert(sizeof(block_iq1_m) == kQKK / 8 + kQKK / 16 + kQKK / 32, "block_iq1_m size");

}  // namespace les
