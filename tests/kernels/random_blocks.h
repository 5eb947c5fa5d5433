// Test helper: random rows of ggml blocks for every weight type with a dot
// product, and quantised activation rows, built from a seeded generator.
//
// Weight rows are random bytes (every bit pattern of the quant fields is a
// valid block) with the F16 scale fields overwritten according to a ScaleMode;
// Q8_0 weight codes are kept in -127..127 as every quantiser produces them.
// Activations are quantised with the *scalar* table's quantize_row, so every
// tier sees the same bytes.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/block_formats.h"
#include "kernels/fp16.h"
#include "kernels/ggml_type.h"
#include "kernels/kernels.h"
#include "iq_test_util.h"

namespace les::test {

enum class ScaleMode { normal, zero, huge, tiny };

inline fp16_t pick_scale(ScaleMode mode, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0.25f, 2.0f);
  switch (mode) {
    case ScaleMode::normal: return fp32_to_fp16((rng() & 1 ? 1.0f : -1.0f) * u(rng) * 0.01f);
    case ScaleMode::zero: return 0;
    case ScaleMode::huge: return 0x7BFF;  // 65504, the largest finite F16
    case ScaleMode::tiny: return 0x0001;  // 2^-24, the smallest subnormal F16
  }
  return 0;
}

// Overwrites the F16 scale fields of `nb` blocks of type t at p.
inline void set_block_scales(kernels::KernelTable const&, GgmlType t, uint8_t* p, int64_t nb, ScaleMode mode,
                             std::mt19937& rng) {
  auto put = [&](uint8_t* at) {
    const fp16_t v = pick_scale(mode, rng);
    std::memcpy(at, &v, 2);
  };
  for (int64_t b = 0; b < nb; ++b) {
    switch (t) {
      case GgmlType::Q4_0: { auto* x = reinterpret_cast<block_q4_0*>(p) + b; put(reinterpret_cast<uint8_t*>(&x->d)); break; }
      case GgmlType::Q4_1: { auto* x = reinterpret_cast<block_q4_1*>(p) + b; put(reinterpret_cast<uint8_t*>(&x->d)); put(reinterpret_cast<uint8_t*>(&x->m)); break; }
      case GgmlType::Q5_0: { auto* x = reinterpret_cast<block_q5_0*>(p) + b; put(reinterpret_cast<uint8_t*>(&x->d)); break; }
      case GgmlType::Q5_1: { auto* x = reinterpret_cast<block_q5_1*>(p) + b; put(reinterpret_cast<uint8_t*>(&x->d)); put(reinterpret_cast<uint8_t*>(&x->m)); break; }
      case GgmlType::Q8_0: {
        auto* x = reinterpret_cast<block_q8_0*>(p) + b;
        put(reinterpret_cast<uint8_t*>(&x->d));
        for (auto& q : x->qs) if (q == -128) q = -127;
        break;
      }
      case GgmlType::IQ4_NL: { auto* x = reinterpret_cast<block_iq4_nl*>(p) + b; put(reinterpret_cast<uint8_t*>(&x->d)); break; }
      case GgmlType::Q2_K: { auto* x = reinterpret_cast<block_q2_K*>(p) + b; put(reinterpret_cast<uint8_t*>(&x->d)); put(reinterpret_cast<uint8_t*>(&x->dmin)); break; }
      case GgmlType::Q3_K: { auto* x = reinterpret_cast<block_q3_K*>(p) + b; put(reinterpret_cast<uint8_t*>(&x->d)); break; }
      case GgmlType::Q4_K: { auto* x = reinterpret_cast<block_q4_K*>(p) + b; put(reinterpret_cast<uint8_t*>(&x->d)); put(reinterpret_cast<uint8_t*>(&x->dmin)); break; }
      case GgmlType::Q5_K: { auto* x = reinterpret_cast<block_q5_K*>(p) + b; put(reinterpret_cast<uint8_t*>(&x->d)); put(reinterpret_cast<uint8_t*>(&x->dmin)); break; }
      case GgmlType::Q6_K: { auto* x = reinterpret_cast<block_q6_K*>(p) + b; put(reinterpret_cast<uint8_t*>(&x->d)); break; }
      case GgmlType::IQ4_XS: { auto* x = reinterpret_cast<block_iq4_xs*>(p) + b; put(reinterpret_cast<uint8_t*>(&x->d)); break; }
      case GgmlType::TQ1_0: { auto* x = reinterpret_cast<block_tq1_0*>(p) + b; put(reinterpret_cast<uint8_t*>(&x->d)); break; }
      case GgmlType::TQ2_0: { auto* x = reinterpret_cast<block_tq2_0*>(p) + b; put(reinterpret_cast<uint8_t*>(&x->d)); break; }
      case GgmlType::MXFP4: {
        // E8M0 exponents as the F16 modes: ~0.01, 2^-128 (the smallest; E8M0 has
        // no zero), 2^72 (big, products stay finite), 2^-127.
        auto* x = reinterpret_cast<block_mxfp4*>(p) + b;
        x->e = mode == ScaleMode::normal ? static_cast<uint8_t>(118 + rng() % 8)
               : mode == ScaleMode::zero ? 0 : mode == ScaleMode::huge ? 200 : 1;
        break;
      }
      default:
        if (is_lattice_iquant(t)) set_iq_block_d(t, p + b * ggml_type_traits(t).block_bytes, pick_scale(mode, rng));
        break;
    }
  }
}

// `rows` random weight rows of `cols` elements of type t (a weight type with a dot product).
inline std::vector<uint8_t> random_weights(const kernels::KernelTable& scalar, GgmlType t, int64_t rows, int64_t cols,
                                           ScaleMode mode, std::mt19937& rng) {
  const size_t rb = *ggml_row_bytes(t, cols);
  std::vector<uint8_t> w(rb * static_cast<size_t>(rows));
  if (t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16) {
    std::normal_distribution<float> nd(0.0f, mode == ScaleMode::huge ? 1000.0f : 1.0f);
    for (int64_t i = 0; i < rows * cols; ++i) {
      const float v = mode == ScaleMode::zero ? 0.0f : nd(rng);
      if (t == GgmlType::F32) std::memcpy(w.data() + 4 * i, &v, 4);
      if (t == GgmlType::F16) { const fp16_t h = fp32_to_fp16(v); std::memcpy(w.data() + 2 * i, &h, 2); }
      if (t == GgmlType::BF16) { const bf16_t h = fp32_to_bf16(v); std::memcpy(w.data() + 2 * i, &h, 2); }
    }
    return w;
  }
  for (auto& byte : w) byte = static_cast<uint8_t>(rng());
  const int64_t nb = cols / ggml_type_traits(t).block_size;
  for (int64_t r = 0; r < rows; ++r) set_block_scales(scalar, t, w.data() + rb * r, nb, mode, rng);
  return w;
}

// n rows of `cols` activations quantised to vec_dot_type(t) by the scalar table.
// `magnitude` scales N(0,1) inputs; a few entries are made 20x larger (outliers).
inline std::vector<uint8_t> random_activations(const kernels::KernelTable& scalar, GgmlType t, int64_t n, int64_t cols,
                                               float magnitude, std::mt19937& rng, std::vector<float>* f32_out = nullptr) {
  const GgmlType act = scalar.of(t).vec_dot_type;
  const size_t rb = *ggml_row_bytes(act, cols);
  std::vector<float> x(static_cast<size_t>(n * cols));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (auto& v : x) v = nd(rng) * magnitude;
  for (size_t i = 0; i < x.size(); i += 97) x[i] *= 20.0f;
  std::vector<uint8_t> q(rb * static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) scalar.of(act).quantize_row(x.data() + r * cols, q.data() + rb * r, cols);
  if (f32_out) *f32_out = x;
  return q;
}

// Weight types with a dot product in the scalar table, in the brief's priority order.
inline std::vector<GgmlType> dot_weight_types() {
  return {GgmlType::Q4_K, GgmlType::Q3_K, GgmlType::Q8_0, GgmlType::Q6_K, GgmlType::Q5_0, GgmlType::Q4_0,
          GgmlType::F16,  GgmlType::Q5_K, GgmlType::Q2_K, GgmlType::Q4_1, GgmlType::Q5_1, GgmlType::IQ4_NL,
          GgmlType::BF16, GgmlType::F32,  GgmlType::IQ4_XS, GgmlType::MXFP4,
          GgmlType::IQ3_XXS, GgmlType::IQ3_S, GgmlType::IQ2_XXS, GgmlType::IQ2_XS, GgmlType::IQ2_S, GgmlType::IQ1_S,
          GgmlType::IQ1_M, GgmlType::TQ1_0, GgmlType::TQ2_0};
}

// Weight types whose every tier keeps the scalar reference's float steps, so
// SIMD results must equal the reference's bits (test_simd_vs_scalar.cpp).
inline std::vector<GgmlType> ordered_dot_types() {
  return {GgmlType::IQ4_XS,  GgmlType::IQ3_XXS, GgmlType::IQ3_S, GgmlType::IQ2_XXS, GgmlType::IQ2_XS,
          GgmlType::IQ2_S,   GgmlType::IQ1_S,   GgmlType::IQ1_M, GgmlType::TQ1_0,   GgmlType::TQ2_0};
}

}  // namespace les::test
