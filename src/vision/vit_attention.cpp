// See vit_attention.h.
#include "vision/vit_attention.h"

#include <cstring>

#include "kernels/gemm.h"
#include "kernels/ops.h"

namespace les::vision {
namespace {

// Groups at least this large use the matmul path.
constexpr int64_t kMatmulGroup = 32;

template <typename F>
void run(kernels::ThreadPool* pool, int64_t n, F&& fn) {
  if (pool == nullptr) {
    fn(int64_t{0}, n, 0);
  } else {
    pool->parallel_for(n, fn);
  }
}

void grow(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

// Small groups: one task per query token, every head; s holds `group` scores per thread.
void attention_small_groups(const float* q, const float* k, const float* v, int64_t n, int n_head, int head_dim,
                            int64_t group, float scale, float* out, kernels::ThreadPool* pool, std::vector<float>& s) {
  const int64_t width = static_cast<int64_t>(n_head) * head_dim;
  const int n_threads = pool != nullptr ? pool->n_threads() : 1;
  grow(s, n_threads * group);
  run(pool, n, [&](int64_t begin, int64_t end, int thread) {
    float* sc = s.data() + static_cast<size_t>(thread) * static_cast<size_t>(group);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t g0 = t / group * group;
      for (int h = 0; h < n_head; ++h) {
        const int64_t off = static_cast<int64_t>(h) * head_dim;
        const float* qh = q + t * width + off;
        for (int64_t j = 0; j < group; ++j) {
          const float* kj = k + (g0 + j) * width + off;
          float dot = 0.0f;
          for (int d = 0; d < head_dim; ++d) dot += qh[d] * kj[d];
          sc[j] = dot * scale;
        }
        ops::softmax(sc, group);
        float* oh = out + t * width + off;
        for (int d = 0; d < head_dim; ++d) oh[d] = 0.0f;
        for (int64_t j = 0; j < group; ++j) {
          const float* vj = v + (g0 + j) * width + off;
          const float p = sc[j];
          for (int d = 0; d < head_dim; ++d) oh[d] += p * vj[d];
        }
      }
    }
  });
}

}  // namespace

void vit_attention(const kernels::KernelTable& table, const float* q, const float* k, const float* v, int64_t n,
                   int n_head, int head_dim, int64_t group, float scale, float* out, kernels::ThreadPool* pool,
                   VitAttentionScratch& sc) {
  if (group < kMatmulGroup) {
    attention_small_groups(q, k, v, n, n_head, head_dim, group, scale, out, pool, sc.s);
    return;
  }
  const int64_t width = static_cast<int64_t>(n_head) * head_dim, g = group, dh = head_dim;
  grow(sc.vt, dh * g);
  grow(sc.s, g * g);
  for (int64_t g0 = 0; g0 < n; g0 += g) {
    for (int h = 0; h < n_head; ++h) {
      const int64_t off = static_cast<int64_t>(h) * dh;
      // S[t][j] = K_h[j] . Q_h[t]: K_h (g rows of dh, `width` apart) is the GEMM's weight.
      kernels::gemm(table, pool, GgmlType::F32, k + g0 * width + off, static_cast<size_t>(width) * sizeof(float), g,
                    dh, q + g0 * width + off, width, g, sc.s.data(), g, sc.gemm);
      run(pool, g, [&](int64_t begin, int64_t end, int) {
        for (int64_t t = begin; t < end; ++t) {
          float* row = sc.s.data() + t * g;
          for (int64_t j = 0; j < g; ++j) row[j] *= scale;
          ops::softmax(row, g);
        }
      });
      // O_h[t][d] = V_h^T[d] . P[t], written straight into head h's columns of out.
      for (int64_t j = 0; j < g; ++j) {
        const float* vj = v + (g0 + j) * width + off;
        for (int64_t d = 0; d < dh; ++d) sc.vt[static_cast<size_t>(d * g + j)] = vj[d];
      }
      kernels::gemm(table, pool, GgmlType::F32, sc.vt.data(), static_cast<size_t>(g) * sizeof(float), dh, g,
                    sc.s.data(), g, g, out + g0 * width + off, width, sc.gemm);
    }
  }
}

}  // namespace les::vision
