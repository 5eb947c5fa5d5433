#include "core/matvec.h"

#include <cstring>

#include "kernels/kernels.h"
#include "kernels/tiers.h"

namespace les {
namespace {

// The kernel table the forward pass uses. Until runtime dispatch
// (kernels::default_kernel_table) lands this is the scalar reference tier;
// switching is this one function.
const kernels::KernelTable& table() {
  static const kernels::KernelTable t = [] {
    kernels::KernelTable k;
    kernels::fill_scalar_table(k);
    return k;
  }();
  return t;
}

struct TypeOps {
  kernels::VecDotFn vec_dot = nullptr;
  GgmlType vec_dot_type = GgmlType::F32;
  kernels::QuantizeRowFn quantize = nullptr;  // of vec_dot_type
  kernels::DequantizeRowFn dequantize = nullptr;
};

TypeOps type_ops(GgmlType t) {
  if (static_cast<uint32_t>(t) >= kGgmlTypeCount) return {};
  const kernels::TypeKernels& k = table().of(t);
  TypeOps o;
  o.dequantize = k.dequantize_row;
  if (k.vec_dot == nullptr) return o;
  const kernels::TypeKernels& a = table().of(k.vec_dot_type);
  if (a.quantize_row == nullptr) return o;
  o.vec_dot = k.vec_dot;
  o.vec_dot_type = k.vec_dot_type;
  o.quantize = a.quantize_row;
  return o;
}

}  // namespace

bool matvec_type_supported(GgmlType t) noexcept { return type_ops(t).vec_dot != nullptr; }

Status matmul(const WeightView& w, const float* x, int64_t n_tokens, int64_t x_stride, float* y, int64_t y_stride,
              MatmulScratch& scratch) {
  const TypeOps ops = type_ops(w.type);
  if (ops.vec_dot == nullptr)
    return unsupported_error(std::string("no matmul kernel for tensor '") + w.name + "' of type " +
                             ggml_type_name(w.type));
  const int64_t cols = w.cols(), rows = w.rows();
  const auto xrb = ggml_row_bytes(ops.vec_dot_type, cols);
  if (!xrb) return internal_error("activation row of " + std::to_string(cols) + " not a multiple of the block size");
  scratch.xq.resize(*xrb * static_cast<size_t>(n_tokens));
  for (int64_t t = 0; t < n_tokens; ++t) ops.quantize(x + t * x_stride, scratch.xq.data() + *xrb * t, cols);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const uint8_t* xq = scratch.xq.data() + *xrb * t;
    float* yt = y + t * y_stride;
    for (int64_t r = 0; r < rows; ++r) ops.vec_dot(cols, yt + r, w.row(r), xq);
  }
  return Status();
}

Status dequantize_row(const WeightView& w, int64_t r, float* out) {
  const TypeOps ops = type_ops(w.type);
  if (ops.dequantize == nullptr)
    return unsupported_error(std::string("cannot dequantise tensor '") + w.name + "' of type " +
                             ggml_type_name(w.type));
  ops.dequantize(w.row(r), out, w.cols());
  return Status();
}

}  // namespace les
