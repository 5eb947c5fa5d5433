// See vit_attention.h.
#include "vision/vit_attention.h"

#include "kernels/ops.h"

namespace les::vision {

void vit_attention(const float* q, const float* k, const float* v, int64_t n, int n_head, int head_dim,
                   int64_t group, float scale, float* out, kernels::ThreadPool* pool, std::vector<float>& scratch) {
  const int64_t width = static_cast<int64_t>(n_head) * head_dim;
  const int n_threads = pool != nullptr ? pool->n_threads() : 1;
  scratch.resize(static_cast<size_t>(n_threads) * static_cast<size_t>(group));
  // One task = one query token, all heads (the rows of K and V are shared by a
  // group's queries, so neighbouring tasks reuse them from cache).
  auto task = [&](int64_t begin, int64_t end, int thread) {
    float* s = scratch.data() + static_cast<size_t>(thread) * static_cast<size_t>(group);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t g0 = t / group * group;
      for (int h = 0; h < n_head; ++h) {
        const float* qh = q + t * width + static_cast<int64_t>(h) * head_dim;
        for (int64_t j = 0; j < group; ++j) {
          const float* kj = k + (g0 + j) * width + static_cast<int64_t>(h) * head_dim;
          float dot = 0.0f;
          for (int d = 0; d < head_dim; ++d) dot += qh[d] * kj[d];
          s[j] = dot * scale;
        }
        ops::softmax(s, group);
        float* oh = out + t * width + static_cast<int64_t>(h) * head_dim;
        for (int d = 0; d < head_dim; ++d) oh[d] = 0.0f;
        for (int64_t j = 0; j < group; ++j) {
          const float* vj = v + (g0 + j) * width + static_cast<int64_t>(h) * head_dim;
          const float p = s[j];
          for (int d = 0; d < head_dim; ++d) oh[d] += p * vj[d];
        }
      }
    }
  };
  if (pool == nullptr) {
    task(0, n, 0);
  } else {
    pool->parallel_for(n, task);
  }
}

}  // namespace les::vision
