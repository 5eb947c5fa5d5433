#include "core/model/attention.h"

#include <algorithm>
#include <cmath>

#include "kernels/kernels.h"
#include "kernels/ops.h"

namespace les {
namespace {

// The gemm-order F16 path: a task is a block of consecutive rows and one KV
// head; its queries (every row of the block times every query head of the
// GQA group, at most kernels::kAttnMultiMax at once) go through
// ops::attention_queries_f16, which reads each K and V row once for all of
// them and gives each (row, head) the bits of attention_head_f16. Blocks are
// visited from both ends in turn, as rows are in attention_rows.
void gemm_rows_f16(const Hparams& hp, const KvCache& kv, const uint8_t* k, const uint8_t* v, const float* q,
                   int64_t n_rows, int64_t pos_first, float* out, AttentionScratch& scratch,
                   kernels::ThreadPool* pool, float scale, int32_t window) {
  const int n_head = hp.n_head, head_dim = hp.head_dim, head_dim_v = hp.head_dim_v;
  const int group = n_head / hp.n_head_kv;
  const int64_t Dq = static_cast<int64_t>(n_head) * head_dim, Da = static_cast<int64_t>(n_head) * head_dim_v;
  constexpr int kMax = kernels::kAttnMultiMax;
  const int64_t block = std::max(1, kMax / group);  // rows per task
  const int64_t n_blocks = (n_rows + block - 1) / block;
  const int64_t per_thread = ops::attention_queries_f16_scratch(pos_first + n_rows, kMax, head_dim, head_dim_v);
  const int n_threads = pool ? pool->n_threads() : 1;
  scratch.buf.resize(static_cast<size_t>(per_thread * n_threads));
  const size_t k_row = kv.k_row_bytes(), v_row = kv.v_row_bytes();
  const size_t k_head = *ggml_row_bytes(kv.type(), head_dim), v_head = *ggml_row_bytes(kv.type(), head_dim_v);
  const auto block_of = [n_blocks](int64_t u) { return (u & 1) == 0 ? u / 2 : n_blocks - 1 - u / 2; };
  auto task = [&](int64_t begin, int64_t end, int thread) {
    float* s = scratch.buf.data() + static_cast<int64_t>(thread) * per_thread;
    const float* qs[kMax];
    float* os[kMax];
    int64_t nk[kMax], first[kMax];
    for (int64_t u = begin; u < end; ++u) {
      const int64_t b = block_of(u / hp.n_head_kv);
      const int hk = static_cast<int>(u % hp.n_head_kv);
      const int64_t t0 = b * block, t1 = std::min(n_rows, t0 + block);
      int nq = 0;
      auto flush = [&] {
        ops::attention_queries_f16(qs, nk, nq, k + static_cast<size_t>(hk) * k_head, static_cast<int64_t>(k_row),
                                   v + static_cast<size_t>(hk) * v_head, static_cast<int64_t>(v_row), head_dim,
                                   head_dim_v, scale, os, s, nullptr, window > 0 ? first : nullptr);
        nq = 0;
      };
      for (int64_t t = t0; t < t1; ++t)
        for (int g = 0; g < group; ++g) {
          const int h = hk * group + g;
          qs[nq] = q + t * Dq + static_cast<int64_t>(h) * head_dim;
          os[nq] = out + t * Da + static_cast<int64_t>(h) * head_dim_v;
          nk[nq] = pos_first + t + 1;
          first[nq] = window > 0 ? std::max<int64_t>(0, nk[nq] - window) : 0;
          if (++nq == kMax) flush();
        }
      if (nq > 0) flush();
    }
  };
  const int64_t n_tasks = n_blocks * hp.n_head_kv;
  if (pool && n_threads > 1) {
    pool->parallel_for(n_tasks, task);
  } else {
    task(0, n_tasks, 0);
  }
}

}  // namespace

void attention_rows(const Hparams& hp, const KvCache& kv, int32_t il, const float* q, int64_t n_rows,
                    int64_t pos_first, bool batched, float* out, AttentionScratch& scratch,
                    kernels::ThreadPool* pool, const AttentionOptions& opt) {
  if (n_rows <= 0) return;
  const float scale = opt.scale != 0.0f ? opt.scale : 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  const int32_t window = opt.window;
  if (batched && kv.type() != GgmlType::Q8_0) {
    gemm_rows_f16(hp, kv, kv.k_data(il), kv.v_data(il), q, n_rows, pos_first, out, scratch, pool, scale, window);
    return;
  }
  const int n_head = hp.n_head, head_dim = hp.head_dim, head_dim_v = hp.head_dim_v;
  const int group = n_head / hp.n_head_kv;
  const int64_t Dq = static_cast<int64_t>(n_head) * head_dim, Da = static_cast<int64_t>(n_head) * head_dim_v;
  const bool q8 = kv.type() == GgmlType::Q8_0;
  const int64_t n_kv_max = pos_first + n_rows;
  const int64_t per_thread = q8 ? ops::attention_head_q8_0_scratch(n_kv_max, head_dim, head_dim_v)
                                : ops::attention_head_f16_scratch(n_kv_max, head_dim, head_dim_v);
  const int n_threads = pool ? pool->n_threads() : 1;
  scratch.buf.resize(static_cast<size_t>(per_thread * n_threads));

  const size_t k_row = kv.k_row_bytes(), v_row = kv.v_row_bytes();
  // Bytes of one head within a K / V row (F16: 2 per element; Q8_0: 34 per 32).
  const size_t k_head = *ggml_row_bytes(kv.type(), head_dim), v_head = *ggml_row_bytes(kv.type(), head_dim_v);
  const uint8_t* k = kv.k_data(il);
  const uint8_t* v = kv.v_data(il);
  const kernels::TypeKernels& q8k = kernels::default_kernel_table().of(GgmlType::Q8_0);

  // Row t costs pos_first + t + 1 KV rows, so the pool's contiguous split of
  // the rows in order gives the last thread the most work (3/4 of a 512-row
  // prefill with 2 threads). Tasks visit the rows from both ends in turn, 0,
  // n - 1, 1, n - 2, ...: every pair costs the same, so contiguous ranges of
  // tasks cost about the same. Which thread computes a row never changes it.
  const auto row_of = [n_rows](int64_t u) { return (u & 1) == 0 ? u / 2 : n_rows - 1 - u / 2; };
  auto task = [&](int64_t begin, int64_t end, int thread) {
    float* s = scratch.buf.data() + static_cast<int64_t>(thread) * per_thread;
    for (int64_t i = begin; i < end; ++i) {
      const int64_t t = row_of(i / n_head);
      const int h = static_cast<int>(i % n_head), hk = h / group;
      const float* qh = q + t * Dq + static_cast<int64_t>(h) * head_dim;
      float* oh = out + t * Da + static_cast<int64_t>(h) * head_dim_v;
      const uint8_t* kh = k + static_cast<size_t>(hk) * k_head;
      const uint8_t* vh = v + static_cast<size_t>(hk) * v_head;
      const int64_t n_kv = pos_first + t + 1;
      const int64_t first = window > 0 ? std::max<int64_t>(0, n_kv - window) : 0;
      if (q8) {
        ops::attention_head_q8_0(qh, kh, static_cast<int64_t>(k_row), vh, static_cast<int64_t>(v_row), n_kv,
                                 head_dim, head_dim_v, scale, oh, s, q8k.vec_dot, q8k.quantize_row,
                                 q8k.dequantize_row, first);
      } else {
        ops::attention_head_f16(qh, kh, static_cast<int64_t>(k_row), vh, static_cast<int64_t>(v_row), n_kv,
                                head_dim, head_dim_v, scale, oh, s,
                                batched ? ops::F16DotOrder::gemm : ops::F16DotOrder::vec_dot, nullptr, first);
      }
    }
  };
  const int64_t n_tasks = n_rows * n_head;
  if (pool && n_threads > 1) {
    pool->parallel_for(n_tasks, task);
  } else {
    task(0, n_tasks, 0);
  }
}

}  // namespace les
