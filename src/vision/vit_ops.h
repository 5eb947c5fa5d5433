// Row-wise building blocks of the vision encoder (vision_encoder.h): linear
// layers with bias, LayerNorm, GELU, residual adds and the 2x2 token gather,
// over activations stored token-major (row t of `width` floats at x + t * width,
// the layout of ggml's [width, n_tokens] tensors).
//
// The element-wise maths runs on the kernel table's OpKernels (layer_norm,
// gelu_tanh, gelu_erf; kernels.h). The matrices: F16 and F32 weights on the
// packed GEMM (kernels/gemm.h), F16 ones with the activations rounded to F16
// first (OpKernels::round_f16) as ggml's F16 mul_mat does; other types (Q8_0,
// K-quants ...) on core/model/weight_matmul.h (activations quantised to the
// weight's vec_dot_type). Rows are split over the compute's thread pool.
//
// Thread-safety: a VitCompute belongs to one encoder call at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/weight_matmul.h"
#include "core/model/weight_view.h"
#include "kernels/gemm.h"
#include "kernels/kernels.h"
#include "kernels/thread_pool.h"
#include "util/status.h"

namespace les::vision {

// The kernels and threads one encoder call uses.
struct VitCompute {
  const kernels::KernelTable* table = nullptr;  // element-wise ops (default_kernel_table())
  MatmulScratch mm;                             // quantised activations + the pool (null: calling thread)
  kernels::GemmScratch gemm;                    // packed weight panels of the GEMM
  std::vector<float> xr;                        // activations rounded to F16 for F16 weights
  kernels::ThreadPool* pool() const noexcept { return mm.pool; }
};

// y (n x w.rows()) = x (n x w.cols()) W^T + b (b absent: no bias). y must not
// overlap x. Errors: unsupported (no kernel for w's type).
Status linear(const WeightView& w, const WeightView& b, const float* x, int64_t n, float* y, VitCompute& c);

// ys[i] (n x ws[i]->rows()) = x (n x cols) ws[i]^T + bs[i] for `count`
// weights reading the same x (every ws[i]->cols() == cols; Q, K and V): x is
// rounded to F16 once for all the F16 weights. No ys[i] may overlap x.
// Errors: unsupported (no kernel for a weight's type); some ys may be written.
Status linear_shared(const WeightView* const* ws, const WeightView* const* bs, float* const* ys, int count,
                     const float* x, int64_t n, VitCompute& c);

// Each of n rows of `width` floats: y = LayerNorm(x) * w + b (OpKernels::layer_norm;
// w / b absent: 1 / 0). y may alias x.
void layer_norm_rows(const float* x, int64_t n, int64_t width, const WeightView& w, const WeightView& b, float eps,
                     float* y, VitCompute& c);

enum class Gelu { tanh, erf };
// x[i] = gelu(x[i]) for i < count, in place, split over the pool.
void gelu_inplace(float* x, int64_t count, Gelu kind, VitCompute& c);

// y[i] += x[i] for i < count.
void add_inplace(float* y, const float* x, int64_t count);

// n rows of `width`: row[j] *= s[j] (a layer scale, ls1 / ls2).
void scale_rows(float* x, int64_t n, int64_t width, const float* s);

// The 2x2 gather of README graph steps 5 and 7 on a grid of gh x gw tokens
// (row-major, `width` floats each; gh, gw even): output token (r, c), r < gh/2,
// c < gw/2, row-major, is the concatenation of tokens (2r, 2c), (2r, 2c+1),
// (2r+1, 2c), (2r+1, 2c+1): out is (gh/2 * gw/2) x (4 width). When `mean` is
// not null it also receives, per output token, ((p0 + p1) + p2) + p3) * 0.25
// (width floats each; ggml's add, add, add, scale order).
void gather_2x2(const float* x, int64_t gh, int64_t gw, int64_t width, float* out, float* mean);

}  // namespace les::vision
