// Weighted scale search for the weight quantisers (ref.h, weight_quantizers.h).
//
// A group of n values x_i with importance weights w_i >= 0 is represented as
//   symmetric:  x_i ~ d * L[k_i]          (L: ascending levels, contiguous
//                                          integers lo..hi or a 16-entry table)
//   affine:     x_i ~ d * q_i + b,  q_i in 0..qmax
// minimising E = sum_i w_i (x_i - xhat_i)^2.
//
// Method: the codes for an inverse scale s are the nearest levels of x * s
// (affine: of (x - x0) * s), and for fixed codes the least-squares scale (and
// offset) solve E in closed form, so each candidate s has an exact error.
// The search evaluates a coarse grid of candidates s = f * extreme_level /
// max|x| (f in [f_lo, f_hi]; both signs of d for the symmetric codes), then a
// fine grid around the best coarse f, then re-derives the codes from the
// least-squares scale until E stops falling. A grid wider than +-1 level
// matters: the best scale often clips the largest element (3-bit codes
// especially). The candidates are evaluated by FitKernels (kernels.h), whose
// SIMD tiers are bit-identical to the scalar reference, so the chosen codes
// do not depend on the tier.
//
// Non-finite x or w in a group give d = 0 (and b = 0) with the codes of 0;
// all-zero weights fall back to unit weights.
//
// Thread-safety: pure functions; no allocation.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace les::kernels::fit {

// clamp(round-half-to-even(v), lo, hi) for finite v and |lo|, |hi| < 2^21,
// as an exact float; what the FitKernels compute. (v is clamped to
// [lo - 1, hi + 1] first, where adding and subtracting 1.5 * 2^23 rounds to
// the nearest integer, ties to even, in the default rounding mode; no libm
// call.) NaN gives NaN.
inline float clamp_round(float v, float lo, float hi) {
  const float c = v < lo - 1.0f ? lo - 1.0f : (v > hi + 1.0f ? hi + 1.0f : v);
  const float r = (c + 12582912.0f) - 12582912.0f;
  return r < lo ? lo : (r > hi ? hi : r);
}

// The levels of a symmetric code, ascending.
struct Levels {
  const int8_t* table;  // null: the contiguous integers lo..hi; else `count` (= 16) entries
  int count;
  int lo, hi;           // smallest and largest level
};

// Contiguous integer levels lo..hi.
inline Levels contiguous_levels(int lo, int hi) { return Levels{nullptr, hi - lo + 1, lo, hi}; }

// Level value of index k (0..count-1).
inline int level_value(const Levels& levels, int k) { return levels.table ? levels.table[k] : levels.lo + k; }

// Index of the level nearest to v (ties: to even for contiguous levels, to
// the lower level for a table; NaN: index 0).
int nearest_level(const Levels& levels, float v);

// The candidate grid of one format (see the top of this file).
struct SearchSpec {
  float f_lo = 0.6f, f_hi = 1.6f;  // coarse range, as multiples of the extreme level
  int n_coarse = 16;               // coarse candidates per sign (>= 2)
  int n_fine = 16;                 // fine candidates per sign across two coarse steps (>= 2)
  int refinements = 4;             // least-squares / re-code rounds at most
};

// Symmetric fit of n values (n % 8 == 0, n <= 256). Writes level indices to
// k[0..n) and returns d (0 when every x is 0). w may be null (unit weights).
float fit_symmetric(const FitKernels& kern, const float* x, const float* w, int n, const Levels& levels,
                    const SearchSpec& spec, uint8_t* k);

// Affine fit with q in 0..qmax (n % 8 == 0, n <= 256). Writes q[0..n), d >= 0
// and b. With `b_nonpositive` the offset is constrained to b <= 0 (the
// K-quants store b = -dmin * m with m >= 0). w may be null.
void fit_affine(const FitKernels& kern, const float* x, const float* w, int n, int qmax, bool b_nonpositive,
                const SearchSpec& spec, uint8_t* q, float& d, float& b);

// Codes for a fixed symmetric scale: k_i = nearest level of x_i / d (the
// level nearest 0 when d == 0).
void codes_for_scale(const float* x, int n, float d, const Levels& levels, uint8_t* k);

// Codes for a fixed affine scale: q_i = clamp(round((x_i - b) / d), 0, qmax) (0 if d == 0).
void codes_for_affine(const float* x, int n, float d, float b, int qmax, uint8_t* q);

// Weighted squared error of fixed codes: sum w_i (x_i - d L[k_i])^2, and
// sum w_i (x_i - (d q_i + b))^2 (w null: unit weights).
double symmetric_error(const float* x, const float* w, int n, const Levels& levels, const uint8_t* k, float d);
double affine_error(const float* x, const float* w, int n, const uint8_t* q, float d, float b);

}  // namespace les::kernels::fit
