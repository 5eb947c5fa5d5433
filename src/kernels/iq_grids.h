// The lattice grids and sign rule of ggml's i-quants (IQ1_S, IQ1_M, IQ2_XXS,
// IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S): part of the formats' definition.
//
// A block stores, per group of 8 (IQ2, IQ1) or 4 (IQ3) weights, an index into
// one of these grids; entry i is a word whose byte j is coordinate j of the
// lattice point (little-endian bytes). IQ2 and IQ3 coordinates are unsigned
// magnitudes (IQ2: 8, 25, 43; IQ3_XXS: 4, 12, ..., 62; IQ3_S: 1, 3, ..., 15)
// with the signs stored apart; IQ1 coordinates are int8 -1, 0, 1.
//
// Source: the tables iq2xxs_grid, iq2xs_grid, iq2s_grid, iq3xxs_grid,
// iq3s_grid and iq1s_grid of ggml's ggml-common.h, written as data by
// scripts/gen_iq_grids.py into iq_grids.cpp (which checks them against the
// header and gguf-py's copies).
//
// Thread-safety: immutable, constant-initialised tables.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace les::kernels::iq {

extern const std::array<uint64_t, 256> kIQ2XXSGrid;   // IQ2_XXS: 8-bit index
extern const std::array<uint64_t, 512> kIQ2XSGrid;    // IQ2_XS: 9-bit index
extern const std::array<uint64_t, 1024> kIQ2SGrid;    // IQ2_S: 10-bit index
extern const std::array<uint32_t, 256> kIQ3XXSGrid;   // IQ3_XXS: 8-bit index
extern const std::array<uint32_t, 512> kIQ3SGrid;     // IQ3_S: 9-bit index
extern const std::array<uint64_t, 2048> kIQ1SGrid;    // IQ1_S and IQ1_M: 11-bit index, int8 bytes

// Coordinate j (0..7 or 0..3) of a grid word.
inline int grid_u8(uint64_t word, int j) { return static_cast<int>((word >> (8 * j)) & 0xFF); }
inline int grid_s8(uint64_t word, int j) { return static_cast<int8_t>(static_cast<uint8_t>((word >> (8 * j)) & 0xFF)); }

// IQ2_XXS, IQ2_XS and IQ3_XXS store 7 sign bits per group of 8; the eighth is
// chosen so that the number of negative signs is even (ggml's ksigns_iq2xs
// table, which is this rule written out). Bit j set: coordinate j is negative.
constexpr uint8_t sign_byte_from7(unsigned bits7) {
  unsigned p = bits7 & 0x7F, parity = 0;
  for (unsigned v = p; v != 0; v >>= 1) parity ^= v & 1;
  return static_cast<uint8_t>(p | (parity << 7));
}

// The rule as a table (index: the 7 stored bits).
constexpr std::array<uint8_t, 128> make_sign_table() {
  std::array<uint8_t, 128> t{};
  for (unsigned i = 0; i < 128; ++i) t[i] = sign_byte_from7(i);
  return t;
}
inline constexpr std::array<uint8_t, 128> kSignsFrom7 = make_sign_table();

// For SIMD sign application: 8 bytes, byte j = -1 (0xFF) if bit j of the
// full sign byte is set, else +1.
constexpr uint64_t sign_multiplier(unsigned sign_byte) {
  uint64_t w = 0;
  for (int j = 0; j < 8; ++j) w |= uint64_t{((sign_byte >> j) & 1) ? 0xFFu : 0x01u} << (8 * j);
  return w;
}
template <unsigned N, bool kFrom7>
constexpr std::array<uint64_t, N> make_sign_multipliers() {
  std::array<uint64_t, N> t{};
  for (unsigned i = 0; i < N; ++i) t[i] = sign_multiplier(kFrom7 ? sign_byte_from7(i) : i);
  return t;
}
// Indexed by the 7 stored sign bits (IQ2_XXS, IQ2_XS, IQ3_XXS).
alignas(64) inline constexpr std::array<uint64_t, 128> kSignMultipliers = make_sign_multipliers<128, true>();
// Indexed by a full sign byte (IQ2_S, IQ3_S).
alignas(64) inline constexpr std::array<uint64_t, 256> kSignMultipliers256 = make_sign_multipliers<256, false>();

}  // namespace les::kernels::iq
