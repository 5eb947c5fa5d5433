#include "kernels/ops.h"

#include <algorithm>
#include <cmath>

#include "kernels/kernels.h"
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

float expf_ggml(float x) {
  // exp(x) = 2^n * e^b with n = round(x / ln 2) and |b| <= ln(2) / 2; n is
  // rounded by adding and removing 1.5 * 2^23; ln 2 is split in a high and a low
  // part; e^b is a degree-5 polynomial evaluated with fused multiply-adds in the
  // grouping below (constants: the minimax fit ggml uses). 2^n is applied by an
  // exact scaling, and |n| > 192 saturates to 0 or infinity.
  const float shift = 0x1.8p23f;
  const float z = std::fma(x, 0x1.715476p+0f, shift);
  const float n = z - shift;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
  if (std::fabs(n) > 192.0f) return n > 0 ? INFINITY : 0.0f;
  const float u = b * b;
  const float hi = std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f));
  const float j = std::fma(hi, u, std::fma(0x1.ffffecp-1f, b, 1.0f));
  return std::ldexp(j, static_cast<int>(n));
}

float reduce_add16(const float* l) {
  float a[8], b[4];
  for (int i = 0; i < 8; ++i) a[i] = l[i] + l[i + 8];
  for (int i = 0; i < 4; ++i) b[i] = a[i] + a[i + 4];
  return (b[0] + b[2]) + (b[1] + b[3]);
}

void softmax(float* x, int64_t n, bool padded) {
  if (n <= 0) return;
  const auto exp16 = kernels::default_kernel_table().ops.exp16;
  // The maximum (NaN elements ignored, as fmax does) over 8 running lanes,
  // which compilers vectorise; the order does not change a maximum.
  float lane_max[8];
  for (float& m : lane_max) m = -INFINITY;
  int64_t i8 = 0;
  for (; i8 + 8 <= n; i8 += 8)
    for (int l = 0; l < 8; ++l) lane_max[l] = x[i8 + l] > lane_max[l] ? x[i8 + l] : lane_max[l];
  float mx = -INFINITY;
  for (; i8 < n; ++i8) mx = x[i8] > mx ? x[i8] : mx;
  for (float m : lane_max) mx = m > mx ? m : mx;
  double sum = 0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int l = 0; l < 16; ++l) x[i + l] -= mx;
    exp16(x + i, x + i);
    sum += reduce_add16(x + i);
  }
  if (padded && i < n) {  // the last chunk, its missing lanes masked to exp(-inf) = 0
    float lanes[16];
    const int64_t m = n - i;
    for (int64_t l = 0; l < m; ++l) lanes[l] = x[i + l] - mx;
    // The masked lanes get a defined input (exp16 branches on every lane's
    // range) whose result is discarded below.
    for (int64_t l = m; l < 16; ++l) lanes[l] = 0.0f;
    exp16(lanes, lanes);
    for (int64_t l = m; l < 16; ++l) lanes[l] = 0.0f;
    for (int64_t l = 0; l < m; ++l) x[i + l] = lanes[l];
    sum += reduce_add16(lanes);
    i = n;
  }
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t k = 0; k < n; ++k) x[k] *= inv;
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }

void silu_row(const float* x, int64_t n, float* y) {
  const auto exp16 = kernels::default_kernel_table().ops.exp16;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    float e[16];
    for (int l = 0; l < 16; ++l) e[l] = 0.0f - x[i + l];
    exp16(e, e);
    for (int l = 0; l < 16; ++l) y[i + l] = x[i + l] / (1.0f + e[l]);
  }
  for (; i < n; ++i) y[i] = silu(x[i]);
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

float softplus(float x) { return x > 20.0f ? x : std::log(1.0f + std::exp(x)); }

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  const auto exp16 = kernels::default_kernel_table().ops.exp16;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    float e[16];
    for (int l = 0; l < 16; ++l) e[l] = 0.0f - gate[i + l];
    exp16(e, e);
    for (int l = 0; l < 16; ++l) {
      const float g = gate[i + l];
      out[i + l] = g / (1.0f + e[l]) * up[i + l];
    }
  }
  for (; i < n; ++i) out[i] = silu(gate[i]) * up[i];
}

void attention_head_f16(const float* qh, const uint8_t* k, int64_t kv_stride_k, const uint8_t* v,
                        int64_t kv_stride_v, int64_t n_kv, int head_dim, int head_dim_v, float scale, float* out,
                        float* scratch, F16DotOrder order, const kernels::OpKernels* kernels, int64_t kv_first) {
  const kernels::OpKernels& kk = kernels ? *kernels : kernels::default_kernel_table().ops;
  const bool vec_dot = order == F16DotOrder::vec_dot;
  // scratch: n_kv scores, then q rounded to F16 (ggml converts q to F16, the
  // vec_dot_type of an F16 K), then the attn_f16_kqv scratch.
  float* qr = scratch + n_kv;
  float* rest = qr + head_dim;
  for (int d = 0; d < head_dim; ++d) qr[d] = qh[d];
  kk.round_f16(qr, head_dim);
  kk.attn_f16_kq(qr, k, kv_stride_k, n_kv, head_dim, vec_dot, scratch);
  for (int64_t j = 0; j < n_kv; ++j) scratch[j] *= scale;
  for (int64_t j = 0; j < kv_first && j < n_kv; ++j) scratch[j] = -INFINITY;
  softmax(scratch, n_kv, /*padded=*/true);
  // kq rounded to F16 for mul_mat(V, kq)
  kk.round_f16(scratch, n_kv);
  kk.attn_f16_kqv(scratch, v, kv_stride_v, n_kv, head_dim_v, vec_dot, out, rest);
}

int64_t attention_head_f16_scratch(int64_t n_kv, int head_dim, int head_dim_v) {
  return n_kv + head_dim + kernels::op_kernels_kqv_scratch(head_dim_v);
}

int64_t attention_queries_f16_scratch(int64_t n_kv_max, int nq, int head_dim, int head_dim_v) {
  const int64_t s_stride = (n_kv_max + 15) / 16 * 16;
  const int64_t wv = (static_cast<int64_t>(head_dim_v) + 15) / 16 * 16;
  return nq * (head_dim + s_stride + wv) + kernels::op_kernels_kq_multi_scratch(head_dim) +
         kernels::op_kernels_kqv_multi_scratch(nq, head_dim_v);
}

void attention_queries_f16(const float* const* q, const int64_t* n_kv, int nq, const uint8_t* k, int64_t kv_stride_k,
                           const uint8_t* v, int64_t kv_stride_v, int head_dim, int head_dim_v, float scale,
                           float* const* out, float* scratch, const kernels::OpKernels* kernels,
                           const int64_t* kv_first) {
  if (nq <= 0) return;
  const kernels::OpKernels& kk = kernels ? *kernels : kernels::default_kernel_table().ops;
  int64_t n_max = 0;
  for (int i = 0; i < nq; ++i) n_max = n_kv[i] > n_max ? n_kv[i] : n_max;
  const int64_t s_stride = (n_max + 15) / 16 * 16;
  const int64_t wv = (static_cast<int64_t>(head_dim_v) + 15) / 16 * 16;
  // scratch: queries rounded to F16 (nq x head_dim), scores (nq x s_stride),
  // outputs (nq x wv), then the kernels' scratch.
  float* qr = scratch;
  float* sc = qr + static_cast<int64_t>(nq) * head_dim;
  float* o = sc + nq * s_stride;
  float* rest = o + nq * wv;
  for (int i = 0; i < nq; ++i) {
    float* qi = qr + static_cast<int64_t>(i) * head_dim;
    for (int d = 0; d < head_dim; ++d) qi[d] = q[i][d];
    kk.round_f16(qi, head_dim);
  }
  if (kk.attn_f16_kq_multi) {
    kk.attn_f16_kq_multi(qr, head_dim, nq, k, kv_stride_k, n_max, head_dim, sc, s_stride, rest);
  } else {
    for (int i = 0; i < nq; ++i)
      kk.attn_f16_kq(qr + static_cast<int64_t>(i) * head_dim, k, kv_stride_k, n_kv[i], head_dim, false,
                     sc + i * s_stride);
  }
  for (int i = 0; i < nq; ++i) {
    float* si = sc + i * s_stride;
    for (int64_t j = 0; j < n_kv[i]; ++j) si[j] *= scale;
    for (int64_t j = 0; kv_first != nullptr && j < kv_first[i] && j < n_kv[i]; ++j) si[j] = -INFINITY;
    softmax(si, n_kv[i], /*padded=*/true);
    kk.round_f16(si, n_kv[i]);
  }
  if (kk.attn_f16_kqv_multi) {
    kk.attn_f16_kqv_multi(sc, s_stride, n_kv, nq, v, kv_stride_v, head_dim_v, o, wv, rest);
  } else {
    for (int i = 0; i < nq; ++i)
      kk.attn_f16_kqv(sc + i * s_stride, v, kv_stride_v, n_kv[i], head_dim_v, false, o + i * wv, rest);
  }
  for (int i = 0; i < nq; ++i)
    for (int d = 0; d < head_dim_v; ++d) out[i][d] = o[i * wv + d];
}

void attention_f16(const float* q, const fp16_t* k, int64_t kv_stride_k, const fp16_t* v, int64_t kv_stride_v,
                   int64_t n_kv, int n_head, int n_head_kv, int head_dim, int head_dim_v, float scale, float* out,
                   float* scratch, F16DotOrder order) {
  const int group = n_head / n_head_kv;
  for (int h = 0; h < n_head; ++h) {
    const int hk = h / group;
    attention_head_f16(q + static_cast<int64_t>(h) * head_dim,
                       reinterpret_cast<const uint8_t*>(k + static_cast<int64_t>(hk) * head_dim), kv_stride_k * 2,
                       reinterpret_cast<const uint8_t*>(v + static_cast<int64_t>(hk) * head_dim_v), kv_stride_v * 2,
                       n_kv, head_dim, head_dim_v, scale, out + static_cast<int64_t>(h) * head_dim_v, scratch, order);
  }
}

int64_t attention_head_q8_0_scratch(int64_t n_kv, int head_dim, int head_dim_v) {
  const int64_t q8_floats = (static_cast<int64_t>(head_dim / 32) * 34 + 3) / 4;  // Q8_0 blocks of the query head
  return n_kv + q8_floats + head_dim_v;
}

void attention_head_q8_0(const float* qh, const uint8_t* k, int64_t kv_stride_k, const uint8_t* v,
                         int64_t kv_stride_v, int64_t n_kv, int head_dim, int head_dim_v, float scale, float* out,
                         float* scratch, AttnVecDotFn dot_q8_0_q8_0, AttnQuantizeFn quantize_q8_0,
                         AttnDequantizeFn dequantize_q8_0, int64_t kv_first) {
  float* scores = scratch;
  auto* q8 = reinterpret_cast<uint8_t*>(scratch + n_kv);
  float* vrow = scratch + n_kv + (static_cast<int64_t>(head_dim / 32) * 34 + 3) / 4;
  quantize_q8_0(qh, q8, head_dim);
  for (int64_t j = 0; j < n_kv; ++j) {
    float s = 0;
    dot_q8_0_q8_0(head_dim, &s, k + j * kv_stride_k, q8);
    scores[j] = j < kv_first ? -INFINITY : s * scale;
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
