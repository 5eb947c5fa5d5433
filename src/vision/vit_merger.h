// The ViT merger of MiniCPM-V 4.6, run after block insert_layer_id
// (README "Graph" steps 4 and 5; llama.cpp clip_graph_minicpmv4_6):
//
//   window attention: tokens are reordered window-major (each 2x2 window
//     (2r,2c), (2r,2c+1), (2r+1,2c), (2r+1,2c+1) contiguous), every token
//     attends only inside its window, x += o(MHA(LN(x))) with vit_merger.ln1
//     and attn_*, and the result is put back in row-major order;
//   downsample: p0..p3 = the 2x2 block of each output token (row-major over
//     (r, c)); x = ds_down(gelu_tanh(ds_up(LN_ds(concat(p0..p3))))) + mean(p0..p3),
//     (gh/2) x (gw/2) tokens.
//
// Shapes: x is gh x gw tokens (row-major patch grid, gh and gw even) of E floats.
// Thread-safety: uses the caller's VitCompute and VitWorkspace.
#pragma once

#include <cstdint>
#include <vector>

#include "util/status.h"
#include "vision/mmproj_model.h"
#include "vision/vit_block.h"
#include "vision/vit_ops.h"

namespace les::vision {

// In place on x (gh * gw tokens x E): the window-attention residual step.
Status vit_merger_window_attention(const VitMergerWeights& m, const MmprojHparams& hp, float* x, int64_t gh,
                                   int64_t gw, VitCompute& c, VitWorkspace& ws);

// out ((gh/2) * (gw/2) tokens x E) = the downsample of x (gh * gw tokens x E).
// out must not alias x.
Status vit_merger_downsample(const VitMergerWeights& m, const MmprojHparams& hp, const float* x, int64_t gh,
                             int64_t gw, float* out, VitCompute& c, VitWorkspace& ws);

}  // namespace les::vision
