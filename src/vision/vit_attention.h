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
// Thread-safety: work split over `pool` (null: calling thread); `scratch` is
// resized to n_threads * group floats and must not be shared between calls
// running at once.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/thread_pool.h"

namespace les::vision {

// out[t, h] = sum_j softmax_j(scale * q[t, h] . k[j, h]) v[j, h], j over t's group.
// The softmax is kernels' ops::softmax (ggml_vec_soft_max_f32 order).
void vit_attention(const float* q, const float* k, const float* v, int64_t n, int n_head, int head_dim,
                   int64_t group, float scale, float* out, kernels::ThreadPool* pool, std::vector<float>& scratch);

}  // namespace les::vision
