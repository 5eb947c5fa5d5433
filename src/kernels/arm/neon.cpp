// The NEON kernel tier: fill_neon_table() (tiers.h).
//
// Starts from the scalar table it is given and overrides the dot products and
// activation quantisers implemented in arm/neon_*.cpp; everything else
// (dequantisers, types without a NEON kernel) stays scalar. The vec_dot_type of
// each weight type is unchanged, so a NEON dot consumes exactly the bytes the
// scalar quantiser would produce. NEON is part of the AArch64 baseline, so the
// tier itself needs no runtime check; the SDOT variants of the int8 kernels are
// installed only after neon_dotprod_supported() confirmed the CPU has them.
//
// Not shipped, with reasons: SVE/SVE2 (vector-length-agnostic kernels need their
// own TU and HWCAP2 check, and there is no SVE hardware to benchmark on);
// I8MM/SMMLA (it multiplies 2x8 by 8x2 tiles, which pays off in a matmul over
// two activation rows, not in the one-row vec_dot of this table); FP16 vector
// arithmetic for F16 dots (accumulating in F16 loses precision; F16 is widened
// to F32 instead).
#include "kernels/arm/neon_kernels.h"
#include "kernels/tiers.h"

#if !defined(__ARM_FEATURE_DOTPROD) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace les::kernels {

bool neon_dotprod_supported() noexcept {
#if defined(__ARM_FEATURE_DOTPROD)
  return true;
#elif defined(__linux__) && defined(HWCAP_ASIMDDP)
  return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#else
  return false;
#endif
}

void fill_neon_table_variant(KernelTable& t, bool use_dotprod) {
  t.tier = KernelTier::neon;
  auto set_dot = [&t](GgmlType type, VecDotFn fn) { t.types[static_cast<uint32_t>(type)].vec_dot = fn; };
  auto set_quantize = [&t](GgmlType type, QuantizeRowFn fn) {
    t.types[static_cast<uint32_t>(type)].quantize_row = fn;
  };
  auto pick = [use_dotprod](VecDotFn baseline, VecDotFn dotprod) { return use_dotprod ? dotprod : baseline; };

  set_quantize(GgmlType::Q8_0, quantize_row_q8_0_neon);
  set_quantize(GgmlType::Q8_1, quantize_row_q8_1_neon);
  set_quantize(GgmlType::Q8_K, quantize_row_q8_K_neon);

  set_dot(GgmlType::Q4_0, pick(vec_dot_q4_0_q8_0_neon, vec_dot_q4_0_q8_0_neon_dotprod));
  set_dot(GgmlType::Q5_0, pick(vec_dot_q5_0_q8_0_neon, vec_dot_q5_0_q8_0_neon_dotprod));
  set_dot(GgmlType::Q8_0, pick(vec_dot_q8_0_q8_0_neon, vec_dot_q8_0_q8_0_neon_dotprod));
  set_dot(GgmlType::IQ4_NL, pick(vec_dot_iq4_nl_q8_0_neon, vec_dot_iq4_nl_q8_0_neon_dotprod));
  set_dot(GgmlType::Q4_1, pick(vec_dot_q4_1_q8_1_neon, vec_dot_q4_1_q8_1_neon_dotprod));
  set_dot(GgmlType::Q5_1, pick(vec_dot_q5_1_q8_1_neon, vec_dot_q5_1_q8_1_neon_dotprod));

  set_dot(GgmlType::Q2_K, pick(vec_dot_q2_K_q8_K_neon, vec_dot_q2_K_q8_K_neon_dotprod));
  set_dot(GgmlType::Q3_K, pick(vec_dot_q3_K_q8_K_neon, vec_dot_q3_K_q8_K_neon_dotprod));
  set_dot(GgmlType::Q4_K, pick(vec_dot_q4_K_q8_K_neon, vec_dot_q4_K_q8_K_neon_dotprod));
  set_dot(GgmlType::Q5_K, pick(vec_dot_q5_K_q8_K_neon, vec_dot_q5_K_q8_K_neon_dotprod));
  set_dot(GgmlType::Q6_K, pick(vec_dot_q6_K_q8_K_neon, vec_dot_q6_K_q8_K_neon_dotprod));
  set_dot(GgmlType::IQ4_XS, pick(vec_dot_iq4_xs_q8_K_neon, vec_dot_iq4_xs_q8_K_neon_dotprod));
  set_dot(GgmlType::MXFP4, pick(vec_dot_mxfp4_q8_0_neon, vec_dot_mxfp4_q8_0_neon_dotprod));
  set_dot(GgmlType::TQ1_0, pick(vec_dot_tq1_0_q8_K_neon, vec_dot_tq1_0_q8_K_neon_dotprod));
  set_dot(GgmlType::TQ2_0, pick(vec_dot_tq2_0_q8_K_neon, vec_dot_tq2_0_q8_K_neon_dotprod));

  if (use_dotprod) {
    install_iquant_kernels_neon_dotprod(t);
  } else {
    install_iquant_kernels_neon(t);
  }

  set_dot(GgmlType::F16, vec_dot_f16_f16_neon);
  set_dot(GgmlType::BF16, vec_dot_bf16_bf16_neon);
  set_dot(GgmlType::F32, vec_dot_f32_f32_neon);

  t.ops.ssm_conv = ssm_conv_neon;
  t.ops.l2_norm = l2_norm_neon;
  t.ops.rms_norm_gated = rms_norm_gated_neon;
  t.ops.delta_rule = delta_rule_neon;
}

void fill_neon_table(KernelTable& t) { fill_neon_table_variant(t, neon_dotprod_supported()); }

}  // namespace les::kernels
