// GeGLU with ggml's F16 GELU table: the gated feed-forward activation of
// gemma-family models as llama.cpp's CPU backend computes it
// (ggml_vec_geglu_f32 with GGML_GELU_FP16, llama.cpp 81ff7abe ggml-cpu/vec.h).
//
// out[i] = 0                      if gate[i] <= -10
//          gate[i] * up[i]        if gate[i] >= 10
//          T(f16(gate[i])) * up[i] otherwise,
// where f16() rounds to binary16 (nearest even) and T is a 65536-entry table:
// T(h) = f32(f16(gelu(f32(h)))), gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2)))
// in float with the one fused multiply-add ggml's x86 build (GCC, FMA)
// contracts (the 1 + 0.044715 x x term). So the GELU is tanh-approximate and
// its result has F16 precision, unlike the F32 gelu_tanh of the vision ops.
//
// Thread-safety: the table is built once, on first use, thread-safely
// (function-local static) and never changes.
#pragma once

#include <cstdint>

namespace les::ops {

// out may alias gate or up.
void geglu_f16_table(const float* gate, const float* up, int64_t n, float* out);

// gelu(x) in float, as ggml_gelu_f32 computes it (for the table; exposed for tests).
float gelu_tanh_ggml(float x);

}  // namespace les::ops
