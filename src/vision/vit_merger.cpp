// See vit_merger.h.
#include "vision/vit_merger.h"

#include <cstring>

namespace les::vision {
namespace {

void grow(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

// Row-major index of the k-th token (k < 4) of window w of a gh x gw grid
// ((gw / 2) windows per row): the window-major order of README step 4.
int64_t window_token(int64_t w, int k, int64_t gw) {
  const int64_t wr = w / (gw / 2), wc = w % (gw / 2);
  return (2 * wr + k / 2) * gw + 2 * wc + k % 2;
}

}  // namespace

Status vit_merger_window_attention(const VitMergerWeights& m, const MmprojHparams& hp, float* x, int64_t gh,
                                   int64_t gw, VitCompute& c, VitWorkspace& ws) {
  const int64_t E = hp.n_embd, n = gh * gw;
  grow(ws.norm, n * E);
  grow(ws.tmp, n * E);
  grow(ws.ff, n * E);
  // LayerNorm commutes with the reorder (row-wise), so normalise while gathering.
  float* ordered = ws.ff.data();
  for (int64_t w = 0; w < n / 4; ++w)
    for (int k = 0; k < 4; ++k)
      std::memcpy(ordered + (4 * w + k) * E, x + window_token(w, k, gw) * E, static_cast<size_t>(E) * sizeof(float));
  layer_norm_rows(ordered, n, E, m.ln1_w, m.ln1_b, hp.eps, ws.norm.data(), c);
  LES_RETURN_IF_ERROR(vit_self_attention(m.q_w, m.q_b, m.k_w, m.k_b, m.v_w, m.v_b, m.o_w, m.o_b, hp, ws.norm.data(),
                                         n, 4, ws.tmp.data(), c, ws));
  for (int64_t w = 0; w < n / 4; ++w)
    for (int k = 0; k < 4; ++k) add_inplace(x + window_token(w, k, gw) * E, ws.tmp.data() + (4 * w + k) * E, E);
  return Status();
}

Status vit_merger_downsample(const VitMergerWeights& m, const MmprojHparams& hp, const float* x, int64_t gh,
                             int64_t gw, float* out, VitCompute& c, VitWorkspace& ws) {
  const int64_t E = hp.n_embd, n_out = (gh / 2) * (gw / 2);
  grow(ws.norm, n_out * 4 * E);
  grow(ws.tmp, n_out * 4 * E);
  grow(ws.ff, n_out * hp.n_ff_ds);
  float* cat = ws.tmp.data();
  gather_2x2(x, gh, gw, E, cat, out);  // out = mean(p0..p3): the residual
  layer_norm_rows(cat, n_out, 4 * E, m.ds_ln_w, m.ds_ln_b, hp.eps, ws.norm.data(), c);
  LES_RETURN_IF_ERROR(linear(m.ds_up_w, m.ds_up_b, ws.norm.data(), n_out, ws.ff.data(), c));
  gelu_inplace(ws.ff.data(), n_out * hp.n_ff_ds, Gelu::tanh, c);
  LES_RETURN_IF_ERROR(linear(m.ds_down_w, m.ds_down_b, ws.ff.data(), n_out, ws.tmp.data(), c));
  add_inplace(out, ws.tmp.data(), n_out * E);
  return Status();
}

}  // namespace les::vision
