// The NEON kernel tier: fill_neon_table() (tiers.h).
//
// Starts from the scalar table it is given and overrides the dot products and
// activation quantisers implemented in arm/neon_*.cpp; everything else
// (dequantisers, types without a NEON kernel) stays scalar. The vec_dot_type of
// each weight type is unchanged, so a NEON dot consumes exactly the bytes the
// scalar quantiser would produce. NEON is part of the AArch64 baseline, so no
// runtime feature check is needed; the dotprod paths are chosen at compile time
// (__ARM_FEATURE_DOTPROD) and only exist in binaries built for such CPUs.
#include "kernels/arm/neon_kernels.h"
#include "kernels/tiers.h"

namespace les::kernels {

void fill_neon_table(KernelTable& t) {
  t.tier = KernelTier::neon;
  auto set_dot = [&t](GgmlType type, VecDotFn fn) { t.types[static_cast<uint32_t>(type)].vec_dot = fn; };
  auto set_quantize = [&t](GgmlType type, QuantizeRowFn fn) {
    t.types[static_cast<uint32_t>(type)].quantize_row = fn;
  };

  set_quantize(GgmlType::Q8_0, quantize_row_q8_0_neon);
  set_quantize(GgmlType::Q8_1, quantize_row_q8_1_neon);
  set_quantize(GgmlType::Q8_K, quantize_row_q8_K_neon);

  set_dot(GgmlType::Q4_0, vec_dot_q4_0_q8_0_neon);
  set_dot(GgmlType::Q5_0, vec_dot_q5_0_q8_0_neon);
  set_dot(GgmlType::Q8_0, vec_dot_q8_0_q8_0_neon);
  set_dot(GgmlType::IQ4_NL, vec_dot_iq4_nl_q8_0_neon);
  set_dot(GgmlType::Q4_1, vec_dot_q4_1_q8_1_neon);
  set_dot(GgmlType::Q5_1, vec_dot_q5_1_q8_1_neon);

  set_dot(GgmlType::Q2_K, vec_dot_q2_K_q8_K_neon);
  set_dot(GgmlType::Q3_K, vec_dot_q3_K_q8_K_neon);
  set_dot(GgmlType::Q4_K, vec_dot_q4_K_q8_K_neon);
  set_dot(GgmlType::Q5_K, vec_dot_q5_K_q8_K_neon);
  set_dot(GgmlType::Q6_K, vec_dot_q6_K_q8_K_neon);

  set_dot(GgmlType::F16, vec_dot_f16_f16_neon);
  set_dot(GgmlType::BF16, vec_dot_bf16_bf16_neon);
  set_dot(GgmlType::F32, vec_dot_f32_f32_neon);
}

}  // namespace les::kernels
