// Packed matrix-matrix product for many tokens at once: Y = X W^T with W in
// F16 or F32 and X in F32, the encoder-style GEMM (vision/vit_ops.h linear,
// vision/vit_attention.cpp scores and outputs).
//
// Why a separate path from matmul.h: matmul's F16 dot product rounds the
// activations to F16 and converts them back to F32 for every weight row, so
// for hundreds of tokens the conversions, not the multiply-adds, bound it.
// Here the weights are converted once per (row block, token block) into a
// packed F32 panel and every weight element then meets a whole tile of tokens
// in registers (outer products: one vector of weight rows times one token's
// element, broadcast, accumulated per token).
//
// Shapes (the matmul.h convention): W is `rows` x `cols`, row i at
// W + i * w_stride bytes (F16 halves or F32 floats); X is n tokens, token t at
// X + t * x_stride floats; Y is n tokens, token t at Y + t * y_stride floats,
// element i = output row i.
//
// The arithmetic, the same bits on every tier (the scalar tier is the
// reference, ref_gemm.cpp): each output is one chain of fused multiply-adds
// over k = 0 .. cols-1 in increasing order,
//   acc = +0; acc = fma(float(W[i][k]), X[t][k], acc); Y[t][i] = acc,
// so results do not depend on the tier, the tile sizes, the thread count or
// the number of tokens in a call. (Against the exact sum the error is at most
// gamma_cols * sum |W[i][k] X[t][k]|, gamma_m = m u / (1 - m u), u = 2^-24:
// Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 3.5.)
// No rounding of X is applied here: a caller that wants ggml's F16 activations
// rounds X first (OpKernels::round_f16).
//
// Thread-safety: reentrant given distinct outputs and scratch; the pool must
// not be used by another caller at the same time (thread_pool.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/thread_pool.h"
#include "util/status.h"

namespace les::kernels {

// Per-caller scratch of gemm(): one packing buffer per pool thread, grown on
// first use (GemmKernels::pack_floats floats each).
struct GemmScratch {
  std::vector<float> pack;
};

// Y = X W^T as described above, rows x tokens split over the pool (null: the
// calling thread). Preconditions (the unchecked form): wtype F16 or F32;
// rows, cols, n >= 1; w_stride >= cols elements of wtype; x_stride >= cols;
// y_stride >= rows; Y does not overlap W or X.
void gemm(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W, size_t w_stride, int64_t rows,
          int64_t cols, const float* X, int64_t x_stride, int64_t n, float* Y, int64_t y_stride, GemmScratch& scratch);

// gemm() after checking its preconditions: invalid_argument naming the bad
// shape or null pointer, unsupported for a weight type other than F16/F32.
// Nothing is written on error.
Status gemm_checked(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W, size_t w_stride,
                    int64_t rows, int64_t cols, const float* X, int64_t x_stride, int64_t n, float* Y,
                    int64_t y_stride, GemmScratch& scratch);

// True for the weight types gemm() takes (F16, F32).
inline bool gemm_type_supported(GgmlType t) noexcept { return t == GgmlType::F16 || t == GgmlType::F32; }

}  // namespace les::kernels
