// avx512 vision OpKernels: kernels/layer_norm_chunks.h, and kernels/gelu_chunks.h with this tier's exp16, the
// 16-element loops vectorised by the compiler under this file's flags.
#include "kernels/gelu_chunks.h"
#include "kernels/layer_norm_chunks.h"
#include "kernels/x86/avx512_kernels.h"
#include "kernels/x86/vision_op_tiers.h"

namespace les::kernels::avx512 {

void layer_norm(const float* x, const float* w, const float* b, int64_t n, float eps, float* y) {
  layer_norm_chunks(x, w, b, n, eps, y);
}
void gelu_tanh(const float* x, int64_t n, float* y) { gelu_tanh_chunks<exp16>(x, n, y); }
void gelu_erf(const float* x, int64_t n, float* y) { gelu_erf_chunks<exp16>(x, n, y); }

}  // namespace les::kernels::avx512
