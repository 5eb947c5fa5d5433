// The final merger / projector of MiniCPM-V 4.6 (README "Graph" step 7;
// llama.cpp's MiniCPMV4_6 DownsampleMLP): the 2x2 gather on the (post-LN)
// token grid, then LayerNorm(mm.input_norm) over the 4E concatenation, then
// mm.down(gelu_erf(mm.up(.))). Note the exact (erf) GELU here, against the
// tanh GELU of the ViT.
//
// Thread-safety: uses the caller's VitCompute and VitWorkspace.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "util/status.h"
#include "vision/mmproj_model.h"
#include "vision/vit_block.h"
#include "vision/vit_ops.h"

namespace les::vision {

// x: gh x gw tokens (gh, gw even) of E floats; out: (gh/2) * (gw/2) tokens of
// n_embd_out floats. `normed`, when not null, receives the LayerNorm output
// ((gh/2) * (gw/2) x 4E floats, the fixture's `merger_normed` tap) through
// the callback before the MLP runs. Errors: unsupported (a weight type without a kernel).
Status vision_projector_forward(const ProjectorWeights& p, const MmprojHparams& hp, const float* x, int64_t gh,
                                int64_t gw, float* out, VitCompute& c, VitWorkspace& ws,
                                const std::function<void(const float* normed, int64_t n, int64_t width)>& normed);

}  // namespace les::vision
