// Internal: register-only decoding of the packed 6-bit K-quant scales, shared
// by the x86 tiers (plain integer code, no vector instructions, so it is safe
// in every x86 TU; static inline, so each TU keeps its own copy).
//
// Writing the decoded scales to a stack array and reloading them with one
// vector load costs a store-forwarding stall per block, so these return them
// packed in 64-bit integers instead. Formulas: block_elements.h
// (k4_scale_min, q3_K_scale), restated on 32-bit words of the 12 scale bytes.
#pragma once

#include <cstdint>
#include <cstring>

namespace les::kernels::x86 {
namespace {

// Q4_K / Q5_K: the 8 scales (byte j = sc_j) and 8 mins (byte j = m_j).
//   j < 4:  sc_j = s[j] & 63,             m_j = s[j+4] & 63
//   j >= 4: sc_j = (s[j+4] & 15) | (s[j-4] >> 6) << 4,  m_j = (s[j+4] >> 4) | (s[j] >> 6) << 4
inline void k4_scales_mins(const uint8_t* s, uint64_t& sc, uint64_t& m) {
  uint32_t u0, u1, u2;
  std::memcpy(&u0, s, 4);
  std::memcpy(&u1, s + 4, 4);
  std::memcpy(&u2, s + 8, 4);
  const uint32_t sc_lo = u0 & 0x3F3F3F3Fu;
  const uint32_t m_lo = u1 & 0x3F3F3F3Fu;
  const uint32_t sc_hi = (u2 & 0x0F0F0F0Fu) | (((u0 >> 6) & 0x03030303u) << 4);
  const uint32_t m_hi = ((u2 >> 4) & 0x0F0F0F0Fu) | (((u1 >> 6) & 0x03030303u) << 4);
  sc = sc_lo | (static_cast<uint64_t>(sc_hi) << 32);
  m = m_lo | (static_cast<uint64_t>(m_hi) << 32);
}

// Q3_K: the 16 six-bit scales before the -32 offset, bytes 0..7 in lo and 8..15 in hi.
//   low 4 bits: s[i] & 15 (i < 8), s[i-8] >> 4 (i >= 8); high 2 bits: (s[8 + i%4] >> 2 (i/4)) & 3
inline void q3_K_scales(const uint8_t* s, uint64_t& lo, uint64_t& hi) {
  uint64_t a;
  uint32_t c;
  std::memcpy(&a, s, 8);
  std::memcpy(&c, s + 8, 4);
  const uint64_t h0 = (c & 0x03030303u) | (static_cast<uint64_t>((c >> 2) & 0x03030303u) << 32);
  const uint64_t h1 = ((c >> 4) & 0x03030303u) | (static_cast<uint64_t>((c >> 6) & 0x03030303u) << 32);
  lo = (a & 0x0F0F0F0F0F0F0F0FULL) | (h0 << 4);
  hi = ((a >> 4) & 0x0F0F0F0F0F0F0F0FULL) | (h1 << 4);
}

}  // namespace
}  // namespace les::kernels::x86
