// Causal multi-head (GQA) attention of a batch of query rows over one layer
// of the KV cache, split over a ThreadPool by (token, head), rows taken from
// both ends in turn so that every thread gets about the same causal work.
//
// For each query row t < n_rows (at position pos_first + t, so it sees KV
// positions 0..pos_first + t) and each query head h (KV head h / (n_head /
// n_head_kv)), the head's output is computed by ops::attention_head_f16 or
// ops::attention_head_q8_0 depending on the cache type (kernels/ops.h gives
// the precision steps). Every (t, h) is computed by exactly one thread from
// the same inputs in the same order, so results are bit-identical for any
// thread count.
//
// Shapes: q is n_rows x (n_head * head_dim) floats, row-major (token first);
// out is n_rows x (n_head * head_dim_v) floats.
//
// Thread-safety: thread-compatible (the scratch belongs to the caller; the
// pool must not be running another job).
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/hparams.h"
#include "core/model/kv_cache.h"
#include "kernels/thread_pool.h"

namespace les {

// Per-thread score buffers, grown on demand; one per Context.
struct AttentionScratch {
  std::vector<float> buf;
};

// How scores are formed beyond causality.
struct AttentionOptions {
  float scale = 0.0f;  // scores = scale * q.k; 0 = 1/sqrt(head_dim)
  // Sliding window: a query at position p sees keys p - window + 1 .. p
  // (llama.cpp's standard SWA mask); 0 = every earlier key.
  int32_t window = 0;
};

// Requires pos_first + n_rows <= kv.n_ctx(), and positions up to pos_first +
// n_rows - 1 of layer il stored. batched: the rows come from a decode call of
// >= 2 tokens (even if fewer rows are asked for), which selects ggml's GEMM
// summation order for an F16 cache (ops::F16DotOrder). pool: null runs on the
// calling thread.
void attention_rows(const Hparams& hp, const KvCache& kv, int32_t il, const float* q, int64_t n_rows,
                    int64_t pos_first, bool batched, float* out, AttentionScratch& scratch,
                    kernels::ThreadPool* pool, const AttentionOptions& opt = {});

}  // namespace les
