#include "kernels/ops.h"

#include <cmath>

namespace les::ops {

void rms_norm(const float* x, const float* w, int64_t n, float eps, float* out) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);  // float product, double sum (ggml)
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  for (int64_t i = 0; i < n; ++i) {
    const float y = x[i] * scale;
    out[i] = w ? y * w[i] : y;
  }
}

void rope(float* x, int n_heads, int head_dim, int n_rot, int64_t pos, float freq_base, RopeType type) {
  const float theta_scale = std::pow(freq_base, -2.0f / static_cast<float>(n_rot));
  const int half = n_rot / 2;
  float theta = static_cast<float>(pos);
  for (int i = 0; i < half; ++i) {
    const float c = std::cos(theta), s = std::sin(theta);
    theta *= theta_scale;
    const int a = type == RopeType::neox ? i : 2 * i;
    const int b = type == RopeType::neox ? i + half : 2 * i + 1;
    for (int h = 0; h < n_heads; ++h) {
      float* xh = x + static_cast<int64_t>(h) * head_dim;
      const float x0 = xh[a], x1 = xh[b];
      xh[a] = x0 * c - x1 * s;
      xh[b] = x0 * s + x1 * c;
    }
  }
}

void softmax(float* x, int64_t n) {
  if (n <= 0) return;
  float mx = -INFINITY;
  for (int64_t i = 0; i < n; ++i) mx = std::fmax(mx, x[i]);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float e = std::exp(x[i] - mx);
    x[i] = e;
    sum += e;
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = silu(gate[i]) * up[i];
}

void attention_f16(const float* q, const fp16_t* k, int64_t kv_stride_k, const fp16_t* v, int64_t kv_stride_v,
                   int64_t n_kv, int n_head, int n_head_kv, int head_dim, int head_dim_v, float scale, float* out,
                   float* scratch) {
  const int group = n_head / n_head_kv;
  for (int h = 0; h < n_head; ++h) {
    const int hk = h / group;
    const float* qh = q + static_cast<int64_t>(h) * head_dim;
    // ggml converts q to F16 before the K·q dot (vec_dot_type of F16 K)
    float* qr = scratch + n_kv;
    for (int d = 0; d < head_dim; ++d) qr[d] = fp16_to_fp32(fp32_to_fp16(qh[d]));
    for (int64_t j = 0; j < n_kv; ++j) {
      const fp16_t* kj = k + j * kv_stride_k + static_cast<int64_t>(hk) * head_dim;
      float acc = 0;
      for (int d = 0; d < head_dim; ++d) acc += qr[d] * fp16_to_fp32(kj[d]);
      scratch[j] = acc * scale;
    }
    softmax(scratch, n_kv);
    float* oh = out + static_cast<int64_t>(h) * head_dim_v;
    for (int d = 0; d < head_dim_v; ++d) oh[d] = 0;
    for (int64_t j = 0; j < n_kv; ++j) {
      const float p = fp16_to_fp32(fp32_to_fp16(scratch[j]));  // kq rounded to F16 for mul_mat(V, kq)
      const fp16_t* vj = v + j * kv_stride_v + static_cast<int64_t>(hk) * head_dim_v;
      for (int d = 0; d < head_dim_v; ++d) oh[d] += p * fp16_to_fp32(vj[d]);
    }
  }
}

}  // namespace les::ops
