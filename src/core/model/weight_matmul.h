// Adapter between the forward pass and the matrix kernels: y = W x for one or
// many activation rows, with the activations quantised to the weight type's
// vec_dot_type exactly as ggml's CPU backend does (F16 for F16 weights, Q8_K for
// K-quants, Q8_0 for Q4_0/Q5_0/Q8_0, F32 for F32), so results match llama.cpp up
// to summation order.
//
// Shapes: W is {cols, rows} (WeightView); x is n_tokens rows of cols floats,
// row-major and contiguous; y is n_tokens rows of `rows` floats, likewise.
//
// Kernels: kernels::default_kernel_table() (best tier of this CPU; LES_KERNEL_TIER
// forces a lower one) through the kernels/matmul.h drivers; results do not depend
// on the thread count.
//
// Thread-safety: thread-compatible (the scratch buffer and pool are per caller).
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/weight_view.h"
#include "kernels/ggml_type.h"
#include "kernels/thread_pool.h"
#include "util/status.h"

namespace les {

// True if W of this type can be used by matmul() below.
bool matmul_type_supported(GgmlType t) noexcept;

// Reusable buffer for quantised activations, and the pool the rows are split
// over (null: the calling thread). One per Context.
struct MatmulScratch {
  std::vector<uint8_t> xq;
  kernels::ThreadPool* pool = nullptr;
};

// y[t][r] = sum_c W[r][c] * x[t][c] for t < n_tokens (x: n_tokens rows of
// w.cols() floats, y: n_tokens rows of w.rows() floats, both contiguous).
// Errors: unsupported (no kernel for w's type).
Status matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, MatmulScratch& scratch);

// ys[i] (n_tokens rows of ws[i]->rows() floats) = ws[i] x for several weights
// that read the same x (n_tokens rows of cols floats, contiguous; cols = every
// weight's cols): gate and up of an FFN, Q, K and V. When all share one
// vec_dot_type, x is quantised once and every matrix runs in one parallel_for
// (one fork-join instead of one each); otherwise one matmul() each. Results are
// bit-identical to one matmul() per weight. Errors as matmul(); on error some
// ys may be written.
Status matmul_shared_input(const WeightView* const* ws, float* const* ys, int n, const float* x, int64_t n_tokens,
                           MatmulScratch& scratch);

// Dequantises row `r` of `w` into out (w.cols() floats) (embedding lookup).
Status dequantize_row(const WeightView& w, int64_t r, float* out);

}  // namespace les
