// One pre-LN ViT block of the vision encoder (README "Graph" steps 3 and 6,
// llama.cpp clip_graph_minicpmv4_6's two unrolled block loops):
//   x += ls1 * o(MHA(LN1(x)))            (full attention, biases as present)
//   x += ls2 * down(gelu_tanh(up(LN2(x))))
// ls1 / ls2 are optional layer scales (absent in MiniCPM-V 4.6).
//
// Thread-safety: uses the caller's VitCompute and VitWorkspace (one call at a time).
#pragma once

#include <cstdint>
#include <vector>

#include "util/status.h"
#include "vision/mmproj_model.h"
#include "vision/vit_attention.h"
#include "vision/vit_ops.h"

namespace les::vision {

// Reusable buffers of the encoder's stages (grown on demand, never shrunk).
struct VitWorkspace {
  std::vector<float> norm, q, k, v, attn, ff, tmp;
  VitAttentionScratch attn_scratch;
};

// x: n tokens x E (in place). Errors: unsupported (a weight type without a kernel).
Status vit_block_forward(const VitLayerWeights& layer, const MmprojHparams& hp, float* x, int64_t n, VitCompute& c,
                         VitWorkspace& ws);

// The attention half shared by the blocks and the ViT merger: out (n x E) =
// o(MHA(q(xn), k(xn), v(xn))) + o_b, attention within groups of `group`
// tokens (vit_attention.h). xn: n x E (already normalised). out must not alias xn.
Status vit_self_attention(const WeightView& q_w, const WeightView& q_b, const WeightView& k_w, const WeightView& k_b,
                          const WeightView& v_w, const WeightView& v_b, const WeightView& o_w, const WeightView& o_b,
                          const MmprojHparams& hp, const float* xn, int64_t n, int64_t group, float* out,
                          VitCompute& c, VitWorkspace& ws);

}  // namespace les::vision
