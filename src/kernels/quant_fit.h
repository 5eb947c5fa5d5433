// Weighted scale fitting for the reference weight quantisers (ref.h).
//
// A group of n values x_i with importance weights w_i >= 0 is represented as
//   symmetric:  x_i ~ d * L[q_i]          (L: a sorted table of integer levels)
//   affine:     x_i ~ d * q_i + b,  q_i in 0..qmax
// minimising E = sum_i w_i (x_i - xhat_i)^2. The method is a plain grid search
// followed by least squares: for each candidate scale the codes are the
// nearest levels, then the scale (and offset) that minimise E for those codes
// are solved in closed form, and the candidate with the smallest E wins.
// Candidates put the extreme value of the group at the extreme levels with the
// step widened or narrowed by up to +-1 level in steps of 0.1 level.
//
// Thread-safety: pure functions; no allocation.
#pragma once

#include <cstdint>

namespace les::kernels::fit {

// The n levels of a symmetric code, ascending (e.g. -8..7 for Q4_0, or IQ4_NL's table).
struct Levels {
  const int* values;  // null: the contiguous integers lo..hi
  int count;
  int lo, hi;         // smallest and largest level
};

// Contiguous integer levels lo..hi.
inline Levels contiguous_levels(int lo, int hi) { return Levels{nullptr, hi - lo + 1, lo, hi}; }

// Index into the levels (0..count-1) of the level nearest to v (ties: to even for
// contiguous levels, to the lower level for a table).
int nearest_level(const Levels& levels, float v);

// Level value of index k.
inline int level_value(const Levels& levels, int k) {
  return levels.values ? levels.values[k] : levels.lo + k;
}

// Symmetric fit. Writes level indices (0..count-1) to k[0..n) and returns d
// (0 when every x is 0 or every weight is 0). w may be null (all weights 1).
float fit_symmetric(const float* x, const float* w, int n, const Levels& levels, uint8_t* k);

// Affine fit with q in 0..qmax. Writes q[0..n), sets d >= 0 and b. With
// `b_nonpositive` the offset is constrained to b <= 0 (the K-quants store
// b = -dmin * m with m >= 0). w may be null.
void fit_affine(const float* x, const float* w, int n, int qmax, bool b_nonpositive, uint8_t* q, float& d,
                float& b);

// Codes for a fixed symmetric scale: k_i = nearest level of x_i / d (level 0
// index of value 0 if d == 0, or the nearest to 0).
void codes_for_scale(const float* x, int n, float d, const Levels& levels, uint8_t* k);

// Codes for a fixed affine scale: q_i = clamp(round((x_i - b) / d), 0, qmax) (0 if d == 0).
void codes_for_affine(const float* x, int n, float d, float b, int qmax, uint8_t* q);

}  // namespace les::kernels::fit
