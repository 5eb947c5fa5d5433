// The packed GEMM's driver: checks, tasks over the pool; see gemm.h. The tier's
// GemmKernels::block computes each task.
#include "kernels/gemm.h"

#include <algorithm>
#include <string>

namespace les::kernels {
namespace {

// A task is a block of kRowBlock weight rows x up to kTokenBlock tokens: the
// tier packs each panel of the block's rows once per task and sweeps the
// task's tokens with it, so packing is paid once per kTokenBlock tokens.
constexpr int64_t kRowBlock = 64;
constexpr int64_t kTokenBlock = 120;
// Fewer tokens per task when the tasks would not give every thread a few.
constexpr int64_t kMinTokenBlock = 24;
constexpr int64_t kTasksPerThread = 4;

}  // namespace

void gemm(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W, size_t w_stride, int64_t rows,
          int64_t cols, const float* X, int64_t x_stride, int64_t n, float* Y, int64_t y_stride,
          GemmScratch& scratch) {
  const int n_threads = pool != nullptr ? pool->n_threads() : 1;
  const size_t need = static_cast<size_t>(n_threads) * static_cast<size_t>(kGemmPackFloats);
  if (scratch.pack.size() < need) scratch.pack.resize(need);
  const int64_t row_blocks = (rows + kRowBlock - 1) / kRowBlock;
  int64_t tb = kTokenBlock;
  while (tb > kMinTokenBlock && row_blocks * ((n + tb - 1) / tb) < kTasksPerThread * n_threads) tb /= 2;
  const int64_t token_blocks = (n + tb - 1) / tb;
  const auto* w = static_cast<const uint8_t*>(W);
  auto body = [&](int64_t begin, int64_t end, int thread) {
    GemmBlock b;
    b.wtype = wtype;
    b.w_stride = w_stride;
    b.cols = cols;
    b.x_stride = x_stride;
    b.y_stride = y_stride;
    b.pack = scratch.pack.data() + static_cast<size_t>(thread) * static_cast<size_t>(kGemmPackFloats);
    for (int64_t task = begin; task < end; ++task) {  // row-block-major: a thread keeps its rows' weights warm
      const int64_t r0 = (task / token_blocks) * kRowBlock, t0 = (task % token_blocks) * tb;
      b.w = w + static_cast<size_t>(r0) * w_stride;
      b.rows = std::min(kRowBlock, rows - r0);
      b.x = X + t0 * x_stride;
      b.n = std::min(tb, n - t0);
      b.y = Y + t0 * y_stride + r0;
      table.gemm.block(b);
    }
  };
  const int64_t n_tasks = row_blocks * token_blocks;
  if (pool == nullptr || n_tasks < 2) {
    body(0, n_tasks, 0);
  } else {
    pool->parallel_for(n_tasks, body);
  }
}

Status gemm_checked(const KernelTable& table, ThreadPool* pool, GgmlType wtype, const void* W, size_t w_stride,
                    int64_t rows, int64_t cols, const float* X, int64_t x_stride, int64_t n, float* Y,
                    int64_t y_stride, GemmScratch& scratch) {
  if (!gemm_type_supported(wtype))
    return unsupported_error("gemm: weight type id " + std::to_string(static_cast<uint32_t>(wtype)) +
                             " is not F16 or F32");
  if (W == nullptr || X == nullptr || Y == nullptr) return invalid_argument_error("gemm: null W, X or Y pointer");
  if (rows < 1 || cols < 1 || n < 1)
    return invalid_argument_error("gemm: rows, cols and n must be >= 1 (got rows=" + std::to_string(rows) +
                                  ", cols=" + std::to_string(cols) + ", n=" + std::to_string(n) + ")");
  const size_t elem = wtype == GgmlType::F16 ? 2 : 4;
  if (w_stride < static_cast<size_t>(cols) * elem || x_stride < cols || y_stride < rows)
    return invalid_argument_error("gemm: a stride is shorter than its row (w_stride " + std::to_string(w_stride) +
                                  " bytes, x_stride " + std::to_string(x_stride) + ", y_stride " +
                                  std::to_string(y_stride) + " for rows=" + std::to_string(rows) +
                                  ", cols=" + std::to_string(cols) + ")");
  if (table.gemm.block == nullptr) return unsupported_error("gemm: this kernel tier has no GEMM block");
  gemm(table, pool, wtype, W, w_stride, rows, cols, X, x_stride, n, Y, y_stride, scratch);
  return Status();
}

}  // namespace les::kernels
