// See vit_block.h.
#include "vision/vit_block.h"

#include <cmath>

#include "vision/vit_attention.h"

namespace les::vision {
namespace {

void grow(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

}  // namespace

Status vit_self_attention(const WeightView& q_w, const WeightView& q_b, const WeightView& k_w, const WeightView& k_b,
                          const WeightView& v_w, const WeightView& v_b, const WeightView& o_w, const WeightView& o_b,
                          const MmprojHparams& hp, const float* xn, int64_t n, int64_t group, float* out,
                          VitCompute& c, VitWorkspace& ws) {
  const int64_t E = hp.n_embd;
  grow(ws.q, n * E);
  grow(ws.k, n * E);
  grow(ws.v, n * E);
  grow(ws.attn, n * E);
  // Q, K and V read the same input: rounded to F16 once.
  const WeightView* w[3] = {&q_w, &k_w, &v_w};
  const WeightView* b[3] = {&q_b, &k_b, &v_b};
  float* y[3] = {ws.q.data(), ws.k.data(), ws.v.data()};
  LES_RETURN_IF_ERROR(linear_shared(w, b, y, 3, xn, n, c));
  const int dh = static_cast<int>(hp.head_dim());
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  vit_attention(*c.table, ws.q.data(), ws.k.data(), ws.v.data(), n, static_cast<int>(hp.n_head), dh, group, scale,
                ws.attn.data(), c.pool(), ws.attn_scratch);
  return linear(o_w, o_b, ws.attn.data(), n, out, c);
}

Status vit_block_forward(const VitLayerWeights& L, const MmprojHparams& hp, float* x, int64_t n, VitCompute& c,
                         VitWorkspace& ws) {
  const int64_t E = hp.n_embd;
  grow(ws.norm, n * E);
  grow(ws.tmp, n * E);
  grow(ws.ff, n * hp.n_ff);
  layer_norm_rows(x, n, E, L.ln1_w, L.ln1_b, hp.eps, ws.norm.data(), c);
  LES_RETURN_IF_ERROR(vit_self_attention(L.q_w, L.q_b, L.k_w, L.k_b, L.v_w, L.v_b, L.o_w, L.o_b, hp, ws.norm.data(),
                                         n, n, ws.tmp.data(), c, ws));
  if (L.ls1.present()) scale_rows(ws.tmp.data(), n, E, reinterpret_cast<const float*>(L.ls1.data));
  add_inplace(x, ws.tmp.data(), n * E);

  layer_norm_rows(x, n, E, L.ln2_w, L.ln2_b, hp.eps, ws.norm.data(), c);
  LES_RETURN_IF_ERROR(linear(L.up_w, L.up_b, ws.norm.data(), n, ws.ff.data(), c));
  gelu_inplace(ws.ff.data(), n * hp.n_ff, Gelu::tanh, c);
  LES_RETURN_IF_ERROR(linear(L.down_w, L.down_b, ws.ff.data(), n, ws.tmp.data(), c));
  if (L.ls2.present()) scale_rows(ws.tmp.data(), n, E, reinterpret_cast<const float*>(L.ls2.data));
  add_inplace(x, ws.tmp.data(), n * E);
  return Status();
}

}  // namespace les::vision
