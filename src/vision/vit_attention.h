// Multi-head self-attention of the vision encoder, in F32, without a causal
// mask: ggml's mul_mat(K, Q) -> soft_max_ext(scale, mask) -> mul_mat(V, KQ) on
// F32 tensors (llama.cpp's clip build_attn with flash attention off; README
// "Graph" steps 3, 4 and 6).
//
// Tokens attend within consecutive groups of `group` tokens: group == n is the
// full attention of the ViT blocks; group == 4 is the ViT merger's window
// attention after its window-major reorder (its block-diagonal mask).
//
// Shapes: q, k, v and out are n x (n_head * head_dim) floats, token-major,
// head h in columns [h * head_dim, (h + 1) * head_dim) (ggml's reshape to
// [head_dim, n_head, n]). Precondition: n % group == 0, group >= 1.
//
// Large groups run as ggml does, per head: S = K_h Q_h^T through the packed
// F32 GEMM (kernels/gemm.h; K_h and Q_h read in place), the scaled softmax of
// each row of S (kernels' ops::softmax, ggml_vec_soft_max_f32's order), then
// O_h = P V_h as a GEMM with V_h^T; small groups (windows) token by token.
// Memory: group^2 floats of scores for one head at a time.
//
// Thread-safety: work split over `pool` (null: calling thread); `scratch` must
// not be shared between calls running at once.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/kernels.h"
#include "kernels/thread_pool.h"

namespace les::vision {

// Reusable buffers of vit_attention (grown on demand).
struct VitAttentionScratch {
  std::vector<float> vt, s;  // V_h^T (head_dim x group), scores (group x group)
  kernels::GemmScratch gemm;
};

// out[t, h] = sum_j softmax_j(scale * q[t, h] . k[j, h]) v[j, h], j over t's group.
void vit_attention(const kernels::KernelTable& table, const float* q, const float* k, const float* v, int64_t n,
                   int n_head, int head_dim, int64_t group, float scale, float* out, kernels::ThreadPool* pool,
                   VitAttentionScratch& scratch);

}  // namespace les::vision
