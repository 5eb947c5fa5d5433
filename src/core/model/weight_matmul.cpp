#include "core/model/weight_matmul.h"

#include "kernels/kernels.h"
#include "kernels/matmul.h"

namespace les {

bool matmul_type_supported(GgmlType t) noexcept {
  if (static_cast<uint32_t>(t) >= kGgmlTypeCount) return false;
  const kernels::KernelTable& k = kernels::default_kernel_table();
  const kernels::TypeKernels& tk = k.of(t);
  return tk.vec_dot != nullptr && k.of(tk.vec_dot_type).quantize_row != nullptr;
}

Status matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, MatmulScratch& scratch) {
  if (!matmul_type_supported(w.type))
    return unsupported_error(std::string("no matmul kernel for tensor '") + w.name + "' of type " +
                             ggml_type_name(w.type));
  const kernels::KernelTable& k = kernels::default_kernel_table();
  if (n_tokens == 1) {
    kernels::matvec(k, scratch.pool, w.type, w.data, w.rows(), w.cols(), x, y, scratch.xq);
  } else {
    kernels::matmul(k, scratch.pool, w.type, w.data, w.rows(), w.cols(), x, n_tokens, y, scratch.xq);
  }
  return Status();
}

Status matmul_shared_input(const WeightView* const* ws, float* const* ys, int n, const float* x, int64_t n_tokens,
                           MatmulScratch& scratch) {
  const kernels::KernelTable& k = kernels::default_kernel_table();
  constexpr int kMax = 8;
  bool shared = n >= 1 && n <= kMax;
  for (int i = 0; i < n && shared; ++i) {
    const WeightView& w = *ws[i];
    shared = matmul_type_supported(w.type) && w.cols() == ws[0]->cols() &&
             k.of(w.type).vec_dot_type == k.of(ws[0]->type).vec_dot_type;
  }
  if (!shared) {
    for (int i = 0; i < n; ++i) LES_RETURN_IF_ERROR(matmul(*ws[i], x, n_tokens, ys[i], scratch));
    return Status();
  }
  kernels::MatmulJob jobs[kMax];
  for (int i = 0; i < n; ++i) jobs[i] = {ws[i]->type, ws[i]->data, ws[i]->rows(), ys[i]};
  const kernels::QuantizedActivations xq =
      kernels::quantize_activations(k, scratch.pool, ws[0]->type, x, ws[0]->cols(), n_tokens, scratch.xq);
  kernels::matmul_quantized_jobs(k, scratch.pool, jobs, n, xq);
  return Status();
}

Status dequantize_row(const WeightView& w, int64_t r, float* out) {
  const kernels::DequantizeRowFn f = static_cast<uint32_t>(w.type) < kGgmlTypeCount
                                         ? kernels::default_kernel_table().of(w.type).dequantize_row
                                         : nullptr;
  if (f == nullptr)
    return unsupported_error(std::string("cannot dequantise tensor '") + w.name + "' of type " +
                             ggml_type_name(w.type));
  f(w.row(r), out, w.cols());
  return Status();
}

}  // namespace les
