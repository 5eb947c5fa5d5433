// AVX-512 tier (F/BW/DQ/VL + VNNI): starts from the AVX2 kernels, which every
// CPU of this tier runs, and overrides the formats implemented with 512-bit
// vectors (avx512_kernels.h).
#include "kernels/tiers.h"
#include "kernels/x86/avx512_kernels.h"
#include "kernels/x86/gemm_tiers.h"
#include "kernels/x86/vision_op_tiers.h"

namespace les::kernels {

void fill_avx512_table(KernelTable& t) {
  fill_avx2_table(t);
  // Each vec_dot comes with the multi-row kernel of the same template
  // (avx512_kernels.h), bit-identical to it per row. Q8_0 keeps the AVX2 pair:
  // on the first AVX-512 machine measured (AMD EPYC, Zen 4: 512-bit ops split
  // in two 256-bit halves) the AVX-512 Q8_0 kernels were slower, vec_dot 28 vs
  // 30 GB/s cache-resident and 0.46 vs 0.54 of DRAM bandwidth, the 4-row
  // multi 9.4 vs 9.8 GB/s (bench/results/bench_kernels-2026-12-03-AMD-EPYC-avx512.md),
  // and the results are the same bits (the AVX-512 vec_dot kept the AVX2 float order).
  auto set = [&t](GgmlType type, VecDotFn fn, VecDotMultiFn multi) {
    t.types[static_cast<uint32_t>(type)].vec_dot = fn;
    t.types[static_cast<uint32_t>(type)].vec_dot_multi = multi;
  };
  using G = GgmlType;
  set(G::F16, avx512::vec_dot_f16, avx512::vec_dot_multi_f16);
  set(G::Q4_0, avx512::vec_dot_q4_0_q8_0, avx512::vec_dot_multi_q4_0_q8_0);
  set(G::Q3_K, avx512::vec_dot_q3_K_q8_K, avx512::vec_dot_multi_q3_K_q8_K);
  set(G::Q4_K, avx512::vec_dot_q4_K_q8_K, avx512::vec_dot_multi_q4_K_q8_K);
  set(G::Q6_K, avx512::vec_dot_q6_K_q8_K, avx512::vec_dot_multi_q6_K_q8_K);
  set(G::Q5_0, avx512::vec_dot_q5_0_q8_0, avx512::vec_dot_multi_q5_0_q8_0);
  set(G::Q5_K, avx512::vec_dot_q5_K_q8_K, avx512::vec_dot_multi_q5_K_q8_K);
  t.ops.exp16 = avx512::exp16;
  t.ops.attn_f16_kq = avx512::attn_f16_kq;
  t.ops.attn_f16_kqv = avx512::attn_f16_kqv;
  t.ops.attn_f16_kq_multi = avx512::attn_f16_kq_multi;
  t.ops.attn_f16_kqv_multi = avx512::attn_f16_kqv_multi;
  t.ops.ssm_conv = avx512::ssm_conv;
  t.ops.l2_norm = avx512::l2_norm;
  t.ops.rms_norm_gated = avx512::rms_norm_gated;
  t.ops.delta_rule = avx512::delta_rule;
  t.gemm.block = avx512::gemm_block;
  t.ops.layer_norm = avx512::layer_norm;
  t.ops.gelu_tanh = avx512::gelu_tanh;
  t.ops.gelu_erf = avx512::gelu_erf;
}

}  // namespace les::kernels
