// The scalar kernel tier: the reference kernels of ref.h behind the
// type-erased KernelTable signatures (kernels.h). Always available; the other
// tiers start from a copy of this table (tiers.h).

#include "kernels/ref.h"
#include "kernels/ref_iquants.h"
#include "kernels/tiers.h"

namespace les::kernels {
namespace {

// Adapters from the typed reference signatures to DequantizeRowFn / QuantizeRowFn.
template <typename Block, void (*Fn)(const Block*, float*, int64_t)>
void dequantize_erased(const void* x, float* y, int64_t n) {
  Fn(static_cast<const Block*>(x), y, n);
}

template <typename Block, void (*Fn)(const float*, Block*, int64_t)>
void quantize_erased(const float* x, void* y, int64_t n) {
  Fn(x, static_cast<Block*>(y), n);
}

}  // namespace

void fill_scalar_table(KernelTable& t) {
  t = KernelTable{};
  t.tier = KernelTier::scalar;
  auto set = [&t](GgmlType type, VecDotFn dot, GgmlType dot_type, DequantizeRowFn deq, QuantizeRowFn q) {
    TypeKernels& k = t.types[static_cast<uint32_t>(type)];
    k.vec_dot = dot;
    k.vec_dot_type = dot_type;
    k.dequantize_row = deq;
    k.quantize_row = q;
  };
  using G = GgmlType;
  // Plain types: weights and activations in the same format.
  set(G::F32, vec_dot_f32_ref, G::F32, dequantize_erased<float, dequantize_row_f32_ref>,
      quantize_erased<float, quantize_row_f32_ref>);
  set(G::F16, vec_dot_f16_ref, G::F16, dequantize_erased<fp16_t, dequantize_row_f16_ref>,
      quantize_erased<fp16_t, quantize_row_f16_ref>);
  set(G::BF16, vec_dot_bf16_ref, G::BF16, dequantize_erased<bf16_t, dequantize_row_bf16_ref>,
      quantize_erased<bf16_t, quantize_row_bf16_ref>);
  // Blocks of 32.
  set(G::Q4_0, vec_dot_q4_0_q8_0_ref, G::Q8_0, dequantize_erased<block_q4_0, dequantize_row_q4_0_ref>, nullptr);
  set(G::Q4_1, vec_dot_q4_1_q8_1_ref, G::Q8_1, dequantize_erased<block_q4_1, dequantize_row_q4_1_ref>, nullptr);
  set(G::Q5_0, vec_dot_q5_0_q8_0_ref, G::Q8_0, dequantize_erased<block_q5_0, dequantize_row_q5_0_ref>, nullptr);
  set(G::Q5_1, vec_dot_q5_1_q8_1_ref, G::Q8_1, dequantize_erased<block_q5_1, dequantize_row_q5_1_ref>, nullptr);
  set(G::Q8_0, vec_dot_q8_0_q8_0_ref, G::Q8_0, dequantize_erased<block_q8_0, dequantize_row_q8_0_ref>,
      quantize_erased<block_q8_0, quantize_row_q8_0_ref>);
  set(G::Q8_1, nullptr, G::Q8_1, dequantize_erased<block_q8_1, dequantize_row_q8_1_ref>,
      quantize_erased<block_q8_1, quantize_row_q8_1_ref>);
  set(G::IQ4_NL, vec_dot_iq4_nl_q8_0_ref, G::Q8_0, dequantize_erased<block_iq4_nl, dequantize_row_iq4_nl_ref>,
      nullptr);
  // K-quants (super-blocks of 256) against Q8_K.
  set(G::Q2_K, vec_dot_q2_K_q8_K_ref, G::Q8_K, dequantize_erased<block_q2_K, dequantize_row_q2_K_ref>, nullptr);
  set(G::Q3_K, vec_dot_q3_K_q8_K_ref, G::Q8_K, dequantize_erased<block_q3_K, dequantize_row_q3_K_ref>, nullptr);
  set(G::Q4_K, vec_dot_q4_K_q8_K_ref, G::Q8_K, dequantize_erased<block_q4_K, dequantize_row_q4_K_ref>, nullptr);
  set(G::Q5_K, vec_dot_q5_K_q8_K_ref, G::Q8_K, dequantize_erased<block_q5_K, dequantize_row_q5_K_ref>, nullptr);
  set(G::Q6_K, vec_dot_q6_K_q8_K_ref, G::Q8_K, dequantize_erased<block_q6_K, dequantize_row_q6_K_ref>, nullptr);
  set(G::IQ4_XS, vec_dot_iq4_xs_q8_K_ref, G::Q8_K, dequantize_erased<block_iq4_xs, dequantize_row_iq4_xs_ref>,
      nullptr);
  // MXFP4 (E8M0-scaled blocks of 32) against Q8_0, as ggml's CPU backend pairs it.
  set(G::MXFP4, vec_dot_mxfp4_q8_0_ref, G::Q8_0, dequantize_erased<block_mxfp4, dequantize_row_mxfp4_ref>, nullptr);
  // Lattice i-quants against Q8_K (ref_iquants.h).
  set(G::IQ2_XXS, vec_dot_iq2_xxs_q8_K_ref, G::Q8_K, dequantize_erased<block_iq2_xxs, dequantize_row_iq2_xxs_ref>, nullptr);
  set(G::IQ2_XS, vec_dot_iq2_xs_q8_K_ref, G::Q8_K, dequantize_erased<block_iq2_xs, dequantize_row_iq2_xs_ref>, nullptr);
  set(G::IQ2_S, vec_dot_iq2_s_q8_K_ref, G::Q8_K, dequantize_erased<block_iq2_s, dequantize_row_iq2_s_ref>, nullptr);
  set(G::IQ3_XXS, vec_dot_iq3_xxs_q8_K_ref, G::Q8_K, dequantize_erased<block_iq3_xxs, dequantize_row_iq3_xxs_ref>, nullptr);
  set(G::IQ3_S, vec_dot_iq3_s_q8_K_ref, G::Q8_K, dequantize_erased<block_iq3_s, dequantize_row_iq3_s_ref>, nullptr);
  set(G::IQ1_S, vec_dot_iq1_s_q8_K_ref, G::Q8_K, dequantize_erased<block_iq1_s, dequantize_row_iq1_s_ref>, nullptr);
  set(G::IQ1_M, vec_dot_iq1_m_q8_K_ref, G::Q8_K, dequantize_erased<block_iq1_m, dequantize_row_iq1_m_ref>, nullptr);
  // Ternary formats against Q8_K.
  set(G::TQ1_0, vec_dot_tq1_0_q8_K_ref, G::Q8_K, dequantize_erased<block_tq1_0, dequantize_row_tq1_0_ref>, nullptr);
  set(G::TQ2_0, vec_dot_tq2_0_q8_K_ref, G::Q8_K, dequantize_erased<block_tq2_0, dequantize_row_tq2_0_ref>, nullptr);
  set(G::Q8_K, nullptr, G::Q8_K, dequantize_erased<block_q8_K, dequantize_row_q8_K_ref>,
      quantize_erased<block_q8_K, quantize_row_q8_K_ref>);
  t.ops.exp16 = exp16_ref;
  t.ops.attn_f16_kq = attn_f16_kq_ref;
  t.ops.attn_f16_kqv = attn_f16_kqv_ref;
  t.ops.round_f16 = round_f16_ref;
  t.ops.ssm_conv = ssm_conv_ref;
  t.ops.l2_norm = l2_norm_ref;
  t.ops.rms_norm_gated = rms_norm_gated_ref;
  t.ops.delta_rule = delta_rule_ref;
  t.ops.layer_norm = layer_norm_ref;
  t.ops.gelu_tanh = gelu_tanh_ref;
  t.ops.gelu_erf = gelu_erf_ref;
  t.fit = reference_fit_kernels();
  t.gemm.block = gemm_block_ref;
}

}  // namespace les::kernels
