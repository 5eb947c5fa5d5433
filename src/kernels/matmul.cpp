// matvec / matmul drivers; see matmul.h.
#include "kernels/matmul.h"

#include <algorithm>
#include <string>

namespace les::kernels {
namespace {

// Tile sizes of matmul: a block of kRowBlock weight rows (a few KiB each) stays
// in L1/L2 while it meets kTokenBlock quantised token rows.
constexpr int64_t kRowBlock = 16;
constexpr int64_t kTokenBlock = 8;

// Activations of fewer elements are quantised on the calling thread (a few
// microseconds of work, less than a fork-join). Rows are quantised alone, so
// the split never changes a result.
constexpr int64_t kParallelQuantizeMin = 16384;

size_t row_bytes_or_zero(GgmlType t, int64_t cols) { return ggml_row_bytes(t, cols).value_or(0); }

template <typename F>
void run(ThreadPool* pool, int64_t n_tasks, F&& f) {
  if (pool == nullptr) {
    f(int64_t{0}, n_tasks, 0);
  } else {
    pool->parallel_for(n_tasks, f);
  }
}

}  // namespace

QuantizedActivations quantize_activations(const KernelTable& table, ThreadPool* pool, GgmlType wtype,
                                          const float* X, int64_t cols, int64_t n,
                                          std::vector<uint8_t>& scratch) {
  QuantizedActivations q;
  q.type = table.of(wtype).vec_dot_type;
  q.cols = cols;
  q.n = n;
  q.row_bytes = row_bytes_or_zero(q.type, cols);
  if (q.type == GgmlType::F32) {  // nothing to convert: dot straight from X
    q.data = X;
    return q;
  }
  const size_t total = q.row_bytes * static_cast<size_t>(n);
  if (scratch.size() < total) scratch.resize(total);
  uint8_t* dst = scratch.data();
  const QuantizeRowFn quant = table.of(q.type).quantize_row;
  const size_t rb = q.row_bytes;
  auto body = [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) quant(X + t * cols, dst + static_cast<size_t>(t) * rb, cols);
  };
  if (n * cols < kParallelQuantizeMin) {  // a fork-join would cost more than the work
    body(0, n, 0);
  } else {
    run(pool, n, body);
  }
  q.data = dst;
  return q;
}

namespace {

// Output rows [r0, r1) of tokens [t0, t1) of one matrix: one vec_dot per
// element, or one vec_dot_multi per kVecDotMultiMax tokens of a row.
void rows_tokens(const TypeKernels& k, const uint8_t* w, size_t wrb, int64_t rows, const QuantizedActivations& xq,
                 float* Y, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t cols = xq.cols;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* wr = w + static_cast<size_t>(r) * wrb;
    if (k.vec_dot_multi != nullptr && t1 - t0 > 1) {  // one pass over the weight row per kVecDotMultiMax tokens
      for (int64_t t = t0; t < t1; t += kVecDotMultiMax) {
        const int nx = static_cast<int>(std::min<int64_t>(kVecDotMultiMax, t1 - t));
        k.vec_dot_multi(cols, Y + t * rows + r, rows, wr, xq.row(t), xq.row_bytes, nx);
      }
    } else {
      for (int64_t t = t0; t < t1; ++t) k.vec_dot(cols, Y + t * rows + r, wr, xq.row(t));
    }
  }
}

}  // namespace

void matmul_quantized_jobs(const KernelTable& table, ThreadPool* pool, const MatmulJob* jobs, int n_jobs,
                           const QuantizedActivations& xq) {
  // Tasks: per job, (row block, token block) row-block-major, jobs one after
  // the other, so a thread's contiguous range walks all token blocks of a row
  // block before moving on. A job of one token uses blocks of one row (the
  // finest split; a matvec has no token reuse to keep in cache).
  constexpr int kMaxJobs = 64;
  int64_t first_task[kMaxJobs + 1] = {0};
  const int nj = std::min(n_jobs, kMaxJobs);
  const auto acts = [&](int j) -> const QuantizedActivations& { return jobs[j].xq ? *jobs[j].xq : xq; };
  const auto row_block = [](int64_t n) { return n == 1 ? int64_t{1} : kRowBlock; };
  const auto token_blocks = [](int64_t n) { return (n + kTokenBlock - 1) / kTokenBlock; };
  for (int j = 0; j < nj; ++j) {
    const int64_t n = acts(j).n, rb = row_block(n);
    first_task[j + 1] = first_task[j] + (n < 1 ? 0 : (jobs[j].rows + rb - 1) / rb * token_blocks(n));
  }
  auto body = [&](int64_t begin, int64_t end, int) {
    for (int j = 0; j < nj; ++j) {  // the part of [begin, end) that falls in job j
      const int64_t lb = std::max(begin, first_task[j]) - first_task[j];
      const int64_t le = std::min(end, first_task[j + 1]) - first_task[j];
      if (lb >= le) continue;
      const MatmulJob& job = jobs[j];
      const QuantizedActivations& a = acts(j);
      const TypeKernels& k = table.of(job.wtype);
      const uint8_t* w = static_cast<const uint8_t*>(job.W);
      const size_t wrb = row_bytes_or_zero(job.wtype, a.cols);
      const int64_t n = a.n;
      if (n == 1) {  // tasks are rows
        for (int64_t r = lb; r < le; ++r) k.vec_dot(a.cols, job.Y + r, w + static_cast<size_t>(r) * wrb, a.data);
        continue;
      }
      const int64_t rb = row_block(n), n_tb = token_blocks(n);
      for (int64_t task = lb; task < le; ++task) {
        const int64_t r0 = (task / n_tb) * rb, r1 = std::min(job.rows, r0 + rb);
        const int64_t t0 = (task % n_tb) * kTokenBlock, t1 = std::min(n, t0 + kTokenBlock);
        rows_tokens(k, w, wrb, job.rows, a, job.Y, r0, r1, t0, t1);
      }
    }
  };
  run(pool, first_task[nj], body);
  if (n_jobs > kMaxJobs) matmul_quantized_jobs(table, pool, jobs + kMaxJobs, n_jobs - kMaxJobs, xq);
}

void matvec_quantized(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W,
                      int64_t rows, const QuantizedActivations& xq, float* y) {
  const MatmulJob job{wtype, W, rows, y};
  matmul_quantized_jobs(table, pool, &job, 1, xq);
}

void matmul_quantized(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W,
                      int64_t rows, const QuantizedActivations& xq, float* Y) {
  const MatmulJob job{wtype, W, rows, Y};
  matmul_quantized_jobs(table, pool, &job, 1, xq);
}

void matvec(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W, int64_t rows,
            int64_t cols, const float* x, float* y, std::vector<uint8_t>& scratch) {
  const QuantizedActivations xq = quantize_activations(table, pool, wtype, x, cols, 1, scratch);
  matvec_quantized(table, pool, wtype, W, rows, xq, y);
}

void matmul(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W, int64_t rows,
            int64_t cols, const float* X, int64_t n, float* Y, std::vector<uint8_t>& scratch) {
  const QuantizedActivations xq = quantize_activations(table, pool, wtype, X, cols, n, scratch);
  matmul_quantized(table, pool, wtype, W, rows, xq, Y);
}

Status check_matmul_args(const KernelTable& table, GgmlType wtype, const void* W, int64_t rows,
                         int64_t cols, const float* X, int64_t n, const float* Y) {
  const uint32_t id = static_cast<uint32_t>(wtype);
  const std::string tname = id < kGgmlTypeCount ? ggml_type_name(wtype) : "unknown(" + std::to_string(id) + ")";
  if (id >= kGgmlTypeCount || !ggml_type_traits(id).has_value())
    return invalid_argument_error("matmul: unknown weight type id " + std::to_string(id));
  if (W == nullptr || X == nullptr || Y == nullptr)
    return invalid_argument_error("matmul: null W, X or Y pointer");
  if (rows < 1 || cols < 1 || n < 1)
    return invalid_argument_error("matmul: rows, cols and n must be >= 1 (got rows=" + std::to_string(rows) +
                                  ", cols=" + std::to_string(cols) + ", n=" + std::to_string(n) + ")");
  const TypeKernels& k = table.of(wtype);
  if (k.vec_dot == nullptr)
    return unsupported_error("matmul: weight type " + tname + " has no dot-product kernel");
  const GgmlType act = k.vec_dot_type;
  if (act != GgmlType::F32 && table.of(act).quantize_row == nullptr)
    return unsupported_error(std::string("matmul: activation type ") + ggml_type_name(act) + " of weight type " +
                             tname + " has no quantize_row kernel");
  if (!ggml_row_bytes(wtype, cols).has_value())
    return invalid_argument_error("matmul: cols=" + std::to_string(cols) + " is not a multiple of the " + tname +
                                  " block size " + std::to_string(ggml_type_traits(wtype).block_size));
  if (!ggml_row_bytes(act, cols).has_value())
    return invalid_argument_error("matmul: cols=" + std::to_string(cols) + " is not a multiple of the block size " +
                                  std::to_string(ggml_type_traits(act).block_size) + " of activation type " +
                                  ggml_type_name(act));
  return Status();
}

Status matvec_checked(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W,
                      int64_t rows, int64_t cols, const float* x, float* y, std::vector<uint8_t>& scratch) {
  Status s = check_matmul_args(table, wtype, W, rows, cols, x, 1, y);
  if (!s.ok()) return s;
  matvec(table, pool, wtype, W, rows, cols, x, y, scratch);
  return Status();
}

Status matmul_checked(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W,
                      int64_t rows, int64_t cols, const float* X, int64_t n, float* Y,
                      std::vector<uint8_t>& scratch) {
  Status s = check_matmul_args(table, wtype, W, rows, cols, X, n, Y);
  if (!s.ok()) return s;
  matmul(table, pool, wtype, W, rows, cols, X, n, Y, scratch);
  return Status();
}

}  // namespace les::kernels
