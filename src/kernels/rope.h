// Rotary position embedding (RoPE) with frequency scaling: plain, linear
// (position interpolation), YaRN, and per-pair frequency factors (Llama 3's
// rope_freqs), on NORM or NEOX pairs, and the interleaved multi-section form
// (IMRoPE) of qwen3-vl / qwen35moe.
//
// The math is ggml's ggml_rope_ext (ggml-cpu ops.cpp, ggml.c at llama.cpp
// 81ff7abe), which follows the YaRN paper (Peng et al. 2023, "YaRN: Efficient
// Context Window Extension of Large Language Models"). For pair i < n_rot/2
// at position p:
//   theta_extrap = p * base^(-2i/n_rot) / ff[i]      (ff: frequency factors, 1 if none;
//                                                      base^(-2i/n_rot) as a running product in float)
//   theta_interp = freq_scale * theta_extrap          (freq_scale = 1 / scaling factor)
//   theta        = theta_interp                        if ext_factor == 0, else
//                  theta_interp (1 - m) + theta_extrap m with m = ramp(i) * ext_factor,
//                  ramp(i) = 1 - clamp((i - corr_dims[0]) / max(0.001, corr_dims[1] - corr_dims[0]), 0, 1)
//   mscale       = attn_factor, times (1 + 0.1 ln(1 / freq_scale)) if ext_factor != 0
//   (x0, x1)    -> (x0 c - x1 s, x0 s + x1 c),  c = cos(theta) mscale, s = sin(theta) mscale
// in float, with the fused multiply-adds that GCC contracts ggml's x86 build
// (-march with FMA) into. Dims >= n_rot pass through.
//
// Thread-safety: pure functions on caller-owned buffers.
#pragma once

#include <cstdint>

namespace les::ops {

// Which dims pair up: NORM rotates (2i, 2i + 1) (llama), NEOX (i, i + n_rot/2)
// (qwen2, qwen3, gemma). Values are ggml's rope mode bits.
enum class RopeType { norm = 0, neox = 2 };

// The frequency parameters of one layer's RoPE (ggml_rope_ext's freq_base,
// freq_scale, ext_factor, attn_factor and the YaRN correction dims derived
// from beta_fast / beta_slow). Defaults: unscaled RoPE of base 10000.
struct RopeScaling {
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;     // 1 / factor of linear and YaRN scaling; 1 = none
  float ext_factor = 0.0f;     // YaRN extrapolation mix; 0 = pure interpolation (linear scaling)
  float attn_factor = 1.0f;    // multiplies cos and sin (YaRN's magnitude, after llama.cpp's corrections)
  float corr_dims[2] = {0.0f, 0.0f};  // YaRN ramp: pairs below [0] extrapolate, above [1] interpolate
  // n_rot/2 divisors of theta (a model's rope_freqs.weight, F32), or null.
  // Borrowed: must outlive every rope() call that uses this value.
  const float* freq_factors = nullptr;

  // Unscaled RoPE of base `base`.
  static RopeScaling plain(float base) {
    RopeScaling r;
    r.freq_base = base;
    return r;
  }
};

// YaRN correction dims as ggml_rope_yarn_corr_dims computes them: for beta in
// {beta_fast, beta_slow}, d(beta) = n_rot ln(n_ctx_orig / (2 pi beta)) / (2 ln base);
// dims = {max(0, floor(d(beta_fast))), min(n_rot - 1, ceil(d(beta_slow)))}.
// Preconditions: n_rot > 0, n_ctx_orig > 0, base > 0 and != 1, betas > 0.
void yarn_corr_dims(int n_rot, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow, float dims[2]);

// The attn_factor llama.cpp 81ff7abe hands ggml_rope_ext for YaRN scaling
// with freq_scale = 1 / factor (llama_context, built without FMA):
// mscale(factor) * (1 / (1 + 0.1 ln factor)) * rope_attn_factor, where
// mscale(f) = 1 if f <= 1, else 0.1 ln f + 1, each operation rounded to float.
// The middle term cancels the magnitude ggml's rope applies itself, so the
// net cos/sin scale is ~mscale(factor) * rope_attn_factor (as HF's YaRN).
// rope_attn_factor: {arch}.rope.scaling.attn_factor (1 when absent).
float yarn_attn_factor(float freq_scale, float rope_attn_factor);

// Rotates, in place, `n_heads` heads of `head_dim` floats stored back to back
// (x[h * head_dim + d]) for position `pos`; only the first n_rot dims of each
// head rotate (the formula above). Preconditions: n_rot even, n_rot <= head_dim;
// freq_factors (if set) has n_rot/2 entries.
void rope(float* x, int n_heads, int head_dim, int n_rot, int64_t pos, const RopeScaling& sc, RopeType type);

// Interleaved multi-section RoPE (ggml's GGML_ROPE_TYPE_IMROPE, used by
// qwen3-vl and qwen35/qwen35moe), NEOX pairing (i, i + n_rot/2), in place on
// n_heads heads of head_dim floats. Pair i < n_rot/2 lies in sector
// m = i % (s0 + s1 + s2 + s3) of sections = {s0, s1, s2, s3} and rotates by
// theta_c * base^(-2i/n_rot) (the running product of rope()), where the
// position component c is 1 (h) if m % 3 == 1 and m < 3 s1, 2 (w) if
// m % 3 == 2 and m < 3 s2, 0 (t) if m % 3 == 0 and m < 3 s0, else 3 (e);
// theta_c = pos[c]. Frequency scaling as rope(). Text positions are
// {p, p, p, 0}, which equals rope(neox) at p unless a sector falls through to
// the 4th component. Preconditions: n_rot even, <= head_dim; s0+s1+s2+s3 > 0.
void rope_imrope(float* x, int n_heads, int head_dim, int n_rot, const int64_t pos[4], const int sections[4],
                 const RopeScaling& sc);

}  // namespace les::ops
