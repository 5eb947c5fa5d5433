// Scalar references of OpKernels (kernels.h): one element at a time, in the
// lane order the contract names, so the SIMD tiers can be checked bit for bit.
#include <algorithm>

#include "kernels/ops.h"
#include "kernels/ref.h"
#include "kernels/unaligned.h"

namespace les::kernels {
namespace {

// acc[a][l]: accumulator a (of 4), lane l. Element i goes to lane i % 16 of
// accumulator (vec_dot ? (i / 16) % 4 : 0): acc = acc + x_i * y_i, where the
// product of two exact halves is exact in float (so a fused multiply-add of the
// SIMD tiers rounds the same). Ends with the fold and ops::reduce_add16.
struct LaneSum {
  float acc[4][16] = {};
  void add(int64_t i, float prod, bool vec_dot) {
    float& c = acc[vec_dot ? (i >> 4) & 3 : 0][i & 15];
    c = c + prod;
  }
  float finish(bool vec_dot) {
    if (vec_dot)
      for (int l = 0; l < 16; ++l) acc[0][l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l]);
    return ops::reduce_add16(acc[0]);
  }
};

}  // namespace

void exp16_ref(const float* x, float* y) {
  for (int i = 0; i < 16; ++i) y[i] = ops::expf_ggml(x[i]);
}

void attn_f16_kq_ref(const float* q, const uint8_t* k, int64_t k_stride, int64_t n_kv, int head_dim, bool vec_dot,
                     float* scores) {
  for (int64_t j = 0; j < n_kv; ++j) {
    const uint8_t* kj = k + j * k_stride;
    LaneSum s;
    for (int d = 0; d < head_dim; ++d) s.add(d, q[d] * fp16_to_fp32(load_unaligned<fp16_t>(kj, d)), vec_dot);
    scores[j] = s.finish(vec_dot);
  }
}

void attn_f16_kqv_ref(const float* p, const uint8_t* v, int64_t v_stride, int64_t n_kv, int head_dim_v,
                      bool vec_dot, float* out, float* /*scratch*/) {
  for (int d = 0; d < head_dim_v; ++d) {
    LaneSum s;
    for (int64_t j = 0; j < n_kv; ++j) s.add(j, p[j] * fp16_to_fp32(load_unaligned<fp16_t>(v + j * v_stride, d)), vec_dot);
    out[d] = s.finish(vec_dot);
  }
}

void round_f16_ref(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = fp16_to_fp32(fp32_to_fp16(x[i]));
}

}  // namespace les::kernels
