// Internal: the x86 tiers' vision OpKernels (kernels.h layer_norm, gelu_tanh, gelu_erf),
// instances of kernels/gelu_chunks.h with each tier's exp16. Defined in
// avx2_vision_ops.cpp and avx512_vision_ops.cpp; call only through a
// KernelTable whose tier the CPU runs. Within the bounds of
// tests/kernels/test_vision_op_kernels.cpp of the scalar references.
#pragma once

#include <cstdint>

namespace les::kernels {
namespace avx2 {
void layer_norm(const float* x, const float* w, const float* b, int64_t n, float eps, float* y);
void gelu_tanh(const float* x, int64_t n, float* y);
void gelu_erf(const float* x, int64_t n, float* y);
}  // namespace avx2
namespace avx512 {
void layer_norm(const float* x, const float* w, const float* b, int64_t n, float eps, float* y);
void gelu_tanh(const float* x, int64_t n, float* y);
void gelu_erf(const float* x, int64_t n, float* y);
}  // namespace avx512
}  // namespace les::kernels
