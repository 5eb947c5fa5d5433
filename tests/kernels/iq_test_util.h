// Test helpers for the lattice i-quants (kernels/ref_iquants.h): which types
// they are, their super-block scale field, the integer block sums and the sum
// of |every product| of a dot product (the A of test_simd_vs_scalar.cpp's bound).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/ggml_type.h"
#include "kernels/iq_elements.h"
#include "kernels/ref_iquants.h"

namespace les::test {

inline const std::vector<GgmlType>& lattice_iquant_types() {
  static const std::vector<GgmlType> v = {GgmlType::IQ2_XXS, GgmlType::IQ2_XS, GgmlType::IQ2_S, GgmlType::IQ3_XXS,
                                          GgmlType::IQ3_S,   GgmlType::IQ1_S,  GgmlType::IQ1_M};
  return v;
}

inline bool is_lattice_iquant(GgmlType t) {
  for (GgmlType u : lattice_iquant_types())
    if (u == t) return true;
  return false;
}

// Writes the F16 super-block scale of the block at p (IQ1_M: its four nibbles).
inline void set_iq_block_d(GgmlType t, uint8_t* p, fp16_t d) {
  if (t == GgmlType::IQ1_M) {
    for (int k = 0; k < 4; ++k) {
      uint8_t& hi = p[48 + 2 * k + 1];  // top nibble of scale word k
      hi = static_cast<uint8_t>((hi & 0x0F) | (((d >> (4 * k)) & 0xF) << 4));
    }
  } else {
    std::memcpy(p, &d, 2);
  }
}

// Per element e of one block: the signed code and the integer scale 2 s + 1 it is multiplied by.
template <typename Block>
void iq_terms(GgmlType t, const Block& b, int e, int& code, int& scale) {
  using namespace les::blocks;
  if constexpr (std::is_same_v<Block, block_iq2_xxs>) { code = iq2_xxs_code(b, e); scale = 2 * iq2_xxs_scale(b, e / 32) + 1; }
  if constexpr (std::is_same_v<Block, block_iq2_xs>) { code = iq2_xs_code(b, e); scale = 2 * iq2_xs_scale(b, e / 32, (e / 16) % 2) + 1; }
  if constexpr (std::is_same_v<Block, block_iq2_s>) { code = iq2_s_code(b, e); scale = 2 * iq2_s_scale(b, e / 32, (e / 16) % 2) + 1; }
  if constexpr (std::is_same_v<Block, block_iq3_xxs>) { code = iq3_xxs_code(b, e); scale = 2 * iq3_xxs_scale(b, e / 32) + 1; }
  if constexpr (std::is_same_v<Block, block_iq3_s>) { code = iq3_s_code(b, e); scale = 2 * iq3_s_scale(b, e / 32) + 1; }
  if constexpr (std::is_same_v<Block, block_iq1_s>) { code = iq1_s_code8(b, e); scale = 2 * iq1_s_scale(b, e / 32) + 1; }
  if constexpr (std::is_same_v<Block, block_iq1_m>) { code = iq1_m_code8(b, e); scale = 2 * iq1_m_scale(b, e / 32, (e / 16) % 2) + 1; }
  (void)t;
}

template <typename Block>
double iq_abs_blocks(GgmlType t, int64_t n, const void* vw, const void* vx) {
  const double f = kernels::iq_dot_factor(t);
  double a = 0;
  for (int64_t i = 0; i < n / kQKK; ++i) {
    Block w;
    block_q8_K x;
    std::memcpy(&w, static_cast<const uint8_t*>(vw) + i * sizeof(Block), sizeof(Block));
    std::memcpy(&x, static_cast<const uint8_t*>(vx) + i * sizeof(block_q8_K), sizeof(block_q8_K));
    double s = 0;
    for (int e = 0; e < kQKK; ++e) {
      int code = 0, scale = 0;
      iq_terms(t, w, e, code, scale);
      s += std::fabs(double(code) * scale * x.qs[e]);
    }
    a += s * std::fabs(double(fp16_to_fp32(kernels::iq_block_d(w))) * x.d) * f;
  }
  return a;
}

// Sum of |every product entering the dot| of a lattice i-quant row and a Q8_K row (0 for other types).
inline double iq_abs_magnitude(GgmlType t, int64_t n, const void* w, const void* x) {
  switch (t) {
    case GgmlType::IQ2_XXS: return iq_abs_blocks<block_iq2_xxs>(t, n, w, x);
    case GgmlType::IQ2_XS: return iq_abs_blocks<block_iq2_xs>(t, n, w, x);
    case GgmlType::IQ2_S: return iq_abs_blocks<block_iq2_s>(t, n, w, x);
    case GgmlType::IQ3_XXS: return iq_abs_blocks<block_iq3_xxs>(t, n, w, x);
    case GgmlType::IQ3_S: return iq_abs_blocks<block_iq3_s>(t, n, w, x);
    case GgmlType::IQ1_S: return iq_abs_blocks<block_iq1_s>(t, n, w, x);
    case GgmlType::IQ1_M: return iq_abs_blocks<block_iq1_m>(t, n, w, x);
    default: return 0;
  }
}

// The reference's exact int32 isum of block b of the row w against block b of x.
inline int32_t iq_block_isum(GgmlType t, const uint8_t* w, const uint8_t* x, int64_t b) {
  using namespace les::kernels;
  block_q8_K xb;
  std::memcpy(&xb, x + b * sizeof(block_q8_K), sizeof(xb));
  auto get = [&](auto tag) {
    decltype(tag) wb;
    std::memcpy(&wb, w + b * sizeof(wb), sizeof(wb));
    return wb;
  };
  switch (t) {
    case GgmlType::IQ2_XXS: return block_sums_iq2_xxs_q8_K_ref(get(block_iq2_xxs{}), xb).isum;
    case GgmlType::IQ2_XS: return block_sums_iq2_xs_q8_K_ref(get(block_iq2_xs{}), xb).isum;
    case GgmlType::IQ2_S: return block_sums_iq2_s_q8_K_ref(get(block_iq2_s{}), xb).isum;
    case GgmlType::IQ3_XXS: return block_sums_iq3_xxs_q8_K_ref(get(block_iq3_xxs{}), xb).isum;
    case GgmlType::IQ3_S: return block_sums_iq3_s_q8_K_ref(get(block_iq3_s{}), xb).isum;
    case GgmlType::IQ1_S: return block_sums_iq1_s_q8_K_ref(get(block_iq1_s{}), xb).isum;
    case GgmlType::IQ1_M: return block_sums_iq1_m_q8_K_ref(get(block_iq1_m{}), xb).isum;
    default: return 0;
  }
}

}  // namespace les::test
