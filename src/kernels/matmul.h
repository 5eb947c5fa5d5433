// Matrix-vector and matrix-matrix drivers over the quantised dot products.
//
// Convention (kernels.h): W is `rows` x `cols`, row-major, each row stored as
// ggml blocks of `wtype` (row bytes = ggml_row_bytes(wtype, cols)). Activations
// are F32, token-major: X is n x cols (token t at X + t * cols). Outputs are
// token-major too: Y is n x rows, Y[t * rows + r] = sum_c W[r, c] * X[t, c].
//
// Activations are first quantised to vec_dot_type(wtype) (Q8_K, Q8_0, Q8_1,
// F16, BF16 or F32), once per call, exactly as ggml's CPU backend does. The
// `*_quantized` variants take activations already quantised by
// quantize_activations(), so one input can feed several weight matrices with
// the same vec_dot_type: matmul_quantized_jobs() runs them in one parallel_for
// (core/model/weight_matmul.h matmul_shared_input: Q/K/V of attention, gate
// and up of an FFN or of one routed expert).
//
// Preconditions of the unchecked functions (the forward pass calls them with
// shapes it validated at model load): rows, cols, n >= 1; cols a multiple of
// the block sizes of wtype and of its vec_dot_type; wtype has a vec_dot in the
// table (weight_type_supported); buffers sized as above and not overlapping Y.
// check_matmul_args() verifies all of that and returns a Status naming the
// problem; matvec_checked()/matmul_checked() are the checked entry points.
//
// Each output element is computed by exactly one vec_dot call (or one row of a
// vec_dot_multi call, bit-identical to it) whose inputs do not depend on the
// thread count or on the number of tokens, so results are bit-identical for any
// pool size (and with pool == nullptr, which runs on the calling thread) and a
// token's outputs are the same whether it is computed alone or in a batch.
//
// Thread-safety: reentrant given distinct scratch buffers and outputs; the pool
// must not be used by another caller at the same time (thread_pool.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/thread_pool.h"
#include "util/status.h"  // header-only parts (Status values) are std-only

namespace les::kernels {

// n rows of `cols` activations quantised to `type` (a vec_dot_type). `data`
// points either into the scratch buffer given to quantize_activations() or,
// for F32, at the caller's X itself; it is valid while both are.
struct QuantizedActivations {
  GgmlType type = GgmlType::F32;
  int64_t cols = 0;
  int64_t n = 0;
  size_t row_bytes = 0;         // bytes of one quantised row
  const void* data = nullptr;   // n * row_bytes bytes

  const void* row(int64_t t) const { return static_cast<const uint8_t*>(data) + static_cast<size_t>(t) * row_bytes; }
};

// Quantises X (n x cols, F32) to vec_dot_type(wtype) into `scratch` (resized as
// needed), splitting the rows over `pool` when there are enough of them (16384
// elements or more). Preconditions as above.
QuantizedActivations quantize_activations(const KernelTable& table, ThreadPool* pool, GgmlType wtype,
                                          const float* X, int64_t cols, int64_t n,
                                          std::vector<uint8_t>& scratch);

// y[rows] = W x for one token; rows split across the pool's threads.
void matvec(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W, int64_t rows,
            int64_t cols, const float* x, float* y, std::vector<uint8_t>& scratch);

// Y (n x rows) = X (n x cols) W^T; quantises X once, then tiles rows x tokens
// (blocks of weight rows reused across blocks of tokens) over the pool.
void matmul(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W, int64_t rows,
            int64_t cols, const float* X, int64_t n, float* Y, std::vector<uint8_t>& scratch);

// As matvec/matmul with activations from quantize_activations() for the same
// vec_dot_type and cols. xq.n == 1 for matvec_quantized; matmul_quantized
// computes all xq.n tokens into Y (xq.n x rows).
void matvec_quantized(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W,
                      int64_t rows, const QuantizedActivations& xq, float* y);
void matmul_quantized(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W,
                      int64_t rows, const QuantizedActivations& xq, float* Y);

// One matrix of matmul_quantized_jobs(): W (rows x cols, row-major, wtype)
// times its activations A (the call's shared xq, or the job's own xq when
// set) into Y (A.n x rows, token-major).
struct MatmulJob {
  GgmlType wtype = GgmlType::F32;
  const void* W = nullptr;
  int64_t rows = 0;
  float* Y = nullptr;
  const QuantizedActivations* xq = nullptr;  // null: the call's shared xq
};

// Every job in one parallel_for (one fork-join instead of one per matrix:
// gate and up of an FFN, Q, K and V of attention, or every routed expert of a
// MoE layer, each with its own tokens' activations). Each job's wtype must
// have its activations' type as its vec_dot_type, and every job's activations
// the same cols as xq; other preconditions as matmul_quantized. Each job's Y
// is bit-identical to matmul_quantized(table, pool, job.wtype, job.W,
// job.rows, A, job.Y) with A its activations.
void matmul_quantized_jobs(const KernelTable& table, ThreadPool* pool, const MatmulJob* jobs, int n_jobs,
                           const QuantizedActivations& xq);

// Validates the preconditions above for a W of `rows` x `cols` in `wtype` and n
// tokens (pointers must be non-null). Returns invalid_argument for bad shapes or
// null pointers, unsupported for a weight type without a dot product.
Status check_matmul_args(const KernelTable& table, GgmlType wtype, const void* W, int64_t rows,
                         int64_t cols, const float* X, int64_t n, const float* Y);

// Checked versions of matvec/matmul: check_matmul_args() first, nothing written on error.
Status matvec_checked(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W,
                      int64_t rows, int64_t cols, const float* x, float* y, std::vector<uint8_t>& scratch);
Status matmul_checked(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W,
                      int64_t rows, int64_t cols, const float* X, int64_t n, float* Y,
                      std::vector<uint8_t>& scratch);

}  // namespace les::kernels
