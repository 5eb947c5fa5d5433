// See vision_projector.h.
#include "vision/vision_projector.h"

namespace les::vision {
namespace {

void grow(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

}  // namespace

Status vision_projector_forward(const ProjectorWeights& p, const MmprojHparams& hp, const float* x, int64_t gh,
                                int64_t gw, float* out, VitCompute& c, VitWorkspace& ws,
                                const std::function<void(const float* normed, int64_t n, int64_t width)>& normed) {
  const int64_t E4 = 4 * hp.n_embd, n_out = (gh / 2) * (gw / 2);
  grow(ws.tmp, n_out * E4);
  grow(ws.norm, n_out * E4);
  grow(ws.ff, n_out * hp.n_ff_mm);
  gather_2x2(x, gh, gw, hp.n_embd, ws.tmp.data(), nullptr);
  layer_norm_rows(ws.tmp.data(), n_out, E4, p.norm_w, p.norm_b, hp.eps, ws.norm.data(), c);
  if (normed) normed(ws.norm.data(), n_out, E4);
  LES_RETURN_IF_ERROR(linear(p.up_w, p.up_b, ws.norm.data(), n_out, ws.ff.data(), c));
  gelu_inplace(ws.ff.data(), n_out * hp.n_ff_mm, Gelu::erf, c);
  return linear(p.down_w, p.down_b, ws.ff.data(), n_out, out, c);
}

}  // namespace les::vision
