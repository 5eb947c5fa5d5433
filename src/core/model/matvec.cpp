#include "core/model/matvec.h"

#include "kernels/kernels.h"
#include "kernels/matmul.h"

namespace les {

bool matvec_type_supported(GgmlType t) noexcept {
  if (static_cast<uint32_t>(t) >= kGgmlTypeCount) return false;
  const kernels::KernelTable& k = kernels::default_kernel_table();
  const kernels::TypeKernels& tk = k.of(t);
  return tk.vec_dot != nullptr && k.of(tk.vec_dot_type).quantize_row != nullptr;
}

Status matmul(const WeightView& w, const float* x, int64_t n_tokens, int64_t x_stride, float* y, int64_t y_stride,
              MatmulScratch& scratch) {
  if (!matvec_type_supported(w.type))
    return unsupported_error(std::string("no matmul kernel for tensor '") + w.name + "' of type " +
                             ggml_type_name(w.type));
  if (x_stride != w.cols() || y_stride != w.rows())
    return internal_error("matmul of '" + w.name + "' with non-contiguous activations");
  const kernels::KernelTable& k = kernels::default_kernel_table();
  if (n_tokens == 1) {
    kernels::matvec(k, scratch.pool, w.type, w.data, w.rows(), w.cols(), x, y, scratch.xq);
  } else {
    kernels::matmul(k, scratch.pool, w.type, w.data, w.rows(), w.cols(), x, n_tokens, y, scratch.xq);
  }
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
