#include "kernels/weight_quantizers.h"

#include "kernels/ref.h"

namespace les::kernels {
namespace {

template <GgmlType T>
void reference(const float* x, void* y, int64_t n, const float* importance) {
  weight_quantizer_impl(T)(reference_fit_kernels(), x, y, n, importance);
}

template <typename T, void (*Fn)(const float*, T*, int64_t)>
void plain(const float* x, void* y, int64_t n, const float* /*importance*/) {
  Fn(x, static_cast<T*>(y), n);
}

}  // namespace

QuantizeWeightsFn reference_weight_quantizer(GgmlType type) noexcept {
  using G = GgmlType;
  switch (type) {
    case G::F32: return plain<float, quantize_row_f32_ref>;
    case G::F16: return plain<fp16_t, quantize_row_f16_ref>;
    case G::BF16: return plain<bf16_t, quantize_row_bf16_ref>;
    case G::Q4_0: return reference<G::Q4_0>;
    case G::Q4_1: return reference<G::Q4_1>;
    case G::Q5_0: return reference<G::Q5_0>;
    case G::Q5_1: return reference<G::Q5_1>;
    case G::Q8_0: return reference<G::Q8_0>;
    case G::IQ4_NL: return reference<G::IQ4_NL>;
    case G::Q2_K: return reference<G::Q2_K>;
    case G::Q3_K: return reference<G::Q3_K>;
    case G::Q4_K: return reference<G::Q4_K>;
    case G::Q5_K: return reference<G::Q5_K>;
    case G::Q6_K: return reference<G::Q6_K>;
    case G::IQ4_XS: return reference<G::IQ4_XS>;
    case G::MXFP4: return reference<G::MXFP4>;
    case G::IQ2_XXS: return reference<G::IQ2_XXS>;
    case G::IQ2_XS: return reference<G::IQ2_XS>;
    case G::IQ2_S: return reference<G::IQ2_S>;
    case G::IQ3_XXS: return reference<G::IQ3_XXS>;
    case G::IQ3_S: return reference<G::IQ3_S>;
    default: return nullptr;
  }
}

bool weight_quantizer_available(GgmlType type) noexcept { return reference_weight_quantizer(type) != nullptr; }

bool quantize_weights_row(const KernelTable& table, GgmlType type, const float* x, void* y, int64_t n,
                          const float* importance) {
  if (const WeightQuantizerImpl f = weight_quantizer_impl(type)) {
    f(table.fit, x, y, n, importance);
    return true;
  }
  const QuantizeWeightsFn plain_fn = reference_weight_quantizer(type);  // F32 / F16 / BF16
  if (!plain_fn) return false;
  plain_fn(x, y, n, importance);
  return true;
}

}  // namespace les::kernels
