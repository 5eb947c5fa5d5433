#include "kernels/ops.h"

#include <cmath>

#include "kernels/unaligned.h"

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

void attention_head_f16(const float* qh, const uint8_t* k, int64_t kv_stride_k, const uint8_t* v,
                        int64_t kv_stride_v, int64_t n_kv, int head_dim, int head_dim_v, float scale, float* out,
                        float* scratch) {
  using kernels::load_unaligned;
  // ggml converts q to F16 before the K·q dot (vec_dot_type of F16 K)
  float* qr = scratch + n_kv;
  for (int d = 0; d < head_dim; ++d) qr[d] = fp16_to_fp32(fp32_to_fp16(qh[d]));
  for (int64_t j = 0; j < n_kv; ++j) {
    const uint8_t* kj = k + j * kv_stride_k;
    float acc = 0;
    for (int d = 0; d < head_dim; ++d) acc += qr[d] * fp16_to_fp32(load_unaligned<fp16_t>(kj, d));
    scratch[j] = acc * scale;
  }
  softmax(scratch, n_kv);
  for (int d = 0; d < head_dim_v; ++d) out[d] = 0;
  for (int64_t j = 0; j < n_kv; ++j) {
    const float p = fp16_to_fp32(fp32_to_fp16(scratch[j]));  // kq rounded to F16 for mul_mat(V, kq)
    const uint8_t* vj = v + j * kv_stride_v;
    for (int d = 0; d < head_dim_v; ++d) out[d] += p * fp16_to_fp32(load_unaligned<fp16_t>(vj, d));
  }
}

void attention_f16(const float* q, const fp16_t* k, int64_t kv_stride_k, const fp16_t* v, int64_t kv_stride_v,
                   int64_t n_kv, int n_head, int n_head_kv, int head_dim, int head_dim_v, float scale, float* out,
                   float* scratch) {
  const int group = n_head / n_head_kv;
  for (int h = 0; h < n_head; ++h) {
    const int hk = h / group;
    attention_head_f16(q + static_cast<int64_t>(h) * head_dim,
                       reinterpret_cast<const uint8_t*>(k + static_cast<int64_t>(hk) * head_dim), kv_stride_k * 2,
                       reinterpret_cast<const uint8_t*>(v + static_cast<int64_t>(hk) * head_dim_v), kv_stride_v * 2,
                       n_kv, head_dim, head_dim_v, scale, out + static_cast<int64_t>(h) * head_dim_v, scratch);
  }
}

int64_t attention_head_q8_0_scratch(int64_t n_kv, int head_dim, int head_dim_v) {
  const int64_t q8_floats = (static_cast<int64_t>(head_dim / 32) * 34 + 3) / 4;  // Q8_0 blocks of the query head
  return n_kv + q8_floats + head_dim_v;
}

void attention_head_q8_0(const float* qh, const uint8_t* k, int64_t kv_stride_k, const uint8_t* v,
                         int64_t kv_stride_v, int64_t n_kv, int head_dim, int head_dim_v, float scale, float* out,
                         float* scratch, AttnVecDotFn dot_q8_0_q8_0, AttnQuantizeFn quantize_q8_0,
                         AttnDequantizeFn dequantize_q8_0) {
  float* scores = scratch;
  auto* q8 = reinterpret_cast<uint8_t*>(scratch + n_kv);
  float* vrow = scratch + n_kv + (static_cast<int64_t>(head_dim / 32) * 34 + 3) / 4;
  quantize_q8_0(qh, q8, head_dim);
  for (int64_t j = 0; j < n_kv; ++j) {
    float s = 0;
    dot_q8_0_q8_0(head_dim, &s, k + j * kv_stride_k, q8);
    scores[j] = s * scale;
  }
  softmax(scores, n_kv);
  for (int d = 0; d < head_dim_v; ++d) out[d] = 0;
  for (int64_t j = 0; j < n_kv; ++j) {
    dequantize_q8_0(v + j * kv_stride_v, vrow, head_dim_v);
    const float p = scores[j];
    for (int d = 0; d < head_dim_v; ++d) out[d] += p * vrow[d];
  }
}

}  // namespace les::ops
