#include "kernels/weight_quantizers.h"

#include "kernels/ref.h"

namespace les::kernels {
namespace {

template <typename Block, void (*Fn)(const float*, Block*, int64_t, const float*)>
void with_importance(const float* x, void* y, int64_t n, const float* importance) {
  Fn(x, static_cast<Block*>(y), n, importance);
}

template <typename T, void (*Fn)(const float*, T*, int64_t)>
void plain(const float* x, void* y, int64_t n, const float* /*importance*/) {
  Fn(x, static_cast<T*>(y), n);
}

}  // namespace

QuantizeWeightsFn reference_weight_quantizer(GgmlType type) noexcept {
  switch (type) {
    case GgmlType::F32: return plain<float, quantize_row_f32_ref>;
    case GgmlType::F16: return plain<fp16_t, quantize_row_f16_ref>;
    case GgmlType::BF16: return plain<bf16_t, quantize_row_bf16_ref>;
    case GgmlType::Q4_0: return with_importance<block_q4_0, quantize_row_q4_0_ref>;
    case GgmlType::Q4_1: return with_importance<block_q4_1, quantize_row_q4_1_ref>;
    case GgmlType::Q5_0: return with_importance<block_q5_0, quantize_row_q5_0_ref>;
    case GgmlType::Q5_1: return with_importance<block_q5_1, quantize_row_q5_1_ref>;
    case GgmlType::Q8_0: return with_importance<block_q8_0, quantize_row_q8_0_weights_ref>;
    case GgmlType::IQ4_NL: return with_importance<block_iq4_nl, quantize_row_iq4_nl_ref>;
    case GgmlType::Q2_K: return with_importance<block_q2_K, quantize_row_q2_K_ref>;
    case GgmlType::Q3_K: return with_importance<block_q3_K, quantize_row_q3_K_ref>;
    case GgmlType::Q4_K: return with_importance<block_q4_K, quantize_row_q4_K_ref>;
    case GgmlType::Q5_K: return with_importance<block_q5_K, quantize_row_q5_K_ref>;
    case GgmlType::Q6_K: return with_importance<block_q6_K, quantize_row_q6_K_ref>;
    default: return nullptr;
  }
}

}  // namespace les::kernels
