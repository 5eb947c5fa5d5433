// Weighted scale search (see quant_fit.h for the method).

#include "kernels/quant_fit.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace les::kernels::fit {
namespace {

constexpr int kMaxGroup = 256;  // largest group any format fits at once
constexpr int kMaxCand = 64;    // candidates per kernel call

inline double weight(const float* w, int i) { return w ? static_cast<double>(w[i]) : 1.0; }

// The index (0..count-1) of the integer nearest v among lo..lo+count-1
// (ties to even, clamped); NaN gives 0, so non-finite input never reaches an
// undefined float-to-int conversion. Same codes as the FitKernels.
inline int round_clamped(float v, int lo, int count) {
  const float r = clamp_round(v, static_cast<float>(lo), static_cast<float>(lo + count - 1)) - static_cast<float>(lo);
  return r > 0.0f ? static_cast<int>(r) : 0;
}

bool finite_group(const float* x, const float* w, int n) {
  for (int i = 0; i < n; ++i)
    if (!std::isfinite(x[i]) || (w && !std::isfinite(w[i]))) return false;
  return true;
}

// Null when every weight is zero (the fit then uses unit weights).
const float* usable_weights(const float* w, int n) {
  if (!w) return nullptr;
  for (int i = 0; i < n; ++i)
    if (w[i] > 0.0f) return w;
  return nullptr;
}

void eval_symmetric(const FitKernels& kern, const float* x, const float* w, int n, const Levels& levels,
                    const float* s, int nc, double* sxl, double* sll) {
  if (levels.table) {
    kern.eval_symmetric_table16(x, w, n, levels.table, s, nc, sxl, sll);
  } else {
    kern.eval_symmetric(x, w, n, levels.lo, levels.hi, s, nc, sxl, sll);
  }
}

// Gain sxl^2 / sll of symmetric codes (error = sum w x^2 - gain); -1 if undefined.
inline double gain(double sxl, double sll) { return sll > 0 ? sxl * sxl / sll : -1.0; }

// Candidate factors f of a grid: n points from lo to hi.
inline float grid_point(float lo, float hi, int j, int n) {
  return lo + (hi - lo) * static_cast<float>(j) / static_cast<float>(n - 1);
}

// Affine least squares for fixed codes from the sums; returns the error.
struct AffineSums {
  double s, sx, sxx;  // sum w, sum w x, sum w x^2 (code-independent)
};
double solve_affine(const AffineSums& k, double sq, double sqq, double sxq, bool b_nonpositive, double& d,
                    double& b) {
  const double det = k.s * sqq - sq * sq;
  if (det > 0) {
    d = (k.s * sxq - sq * k.sx) / det;
    b = (sqq * k.sx - sq * sxq) / det;
  } else {
    d = 0;
    b = k.s > 0 ? k.sx / k.s : 0;
  }
  if (b_nonpositive && b > 0) {
    b = 0;
    d = sqq > 0 ? sxq / sqq : 0;
  }
  if (d < 0) {
    d = 0;
    b = k.s > 0 ? k.sx / k.s : 0;
    if (b_nonpositive && b > 0) b = 0;
  }
  return k.sxx - 2 * d * sxq - 2 * b * k.sx + d * d * sqq + 2 * d * b * sq + b * b * k.s;
}

// Codes for q = clamp(round((x - x0) * s), 0, qmax), as the kernels form them.
void affine_codes(const float* x, int n, float x0, float s, int qmax, uint8_t* q) {
  for (int i = 0; i < n; ++i) q[i] = static_cast<uint8_t>(round_clamped((x[i] - x0) * s, 0, qmax + 1));
}

}  // namespace

int nearest_level(const Levels& levels, float v) {
  if (!levels.table) return round_clamped(v, levels.lo, levels.count);
  // The number of midpoints strictly below v (ties go to the lower level), as
  // FitKernels::eval_symmetric_table16 defines it; NaN compares false: 0.
  int k = 0;
  for (int j = 0; j + 1 < levels.count; ++j)
    k += 0.5f * (static_cast<float>(levels.table[j]) + static_cast<float>(levels.table[j + 1])) < v ? 1 : 0;
  return k;
}

void codes_for_scale(const float* x, int n, float d, const Levels& levels, uint8_t* k) {
  if (d == 0.0f || !std::isfinite(d)) {
    const uint8_t z = static_cast<uint8_t>(nearest_level(levels, 0.0f));
    std::memset(k, z, static_cast<size_t>(n));
    return;
  }
  const float id = 1.0f / d;
  for (int i = 0; i < n; ++i) k[i] = static_cast<uint8_t>(nearest_level(levels, x[i] * id));
}

void codes_for_affine(const float* x, int n, float d, float b, int qmax, uint8_t* q) {
  if (d == 0.0f || !std::isfinite(d) || !std::isfinite(b)) {
    std::memset(q, 0, static_cast<size_t>(n));
    return;
  }
  affine_codes(x, n, b, 1.0f / d, qmax, q);
}

double symmetric_error(const float* x, const float* w, int n, const Levels& levels, const uint8_t* k, float d) {
  double e = 0;
  for (int i = 0; i < n; ++i) {
    const double r = static_cast<double>(x[i]) - static_cast<double>(d) * level_value(levels, k[i]);
    e += weight(w, i) * r * r;
  }
  return e;
}

double affine_error(const float* x, const float* w, int n, const uint8_t* q, float d, float b) {
  double e = 0;
  for (int i = 0; i < n; ++i) {
    const double r = static_cast<double>(x[i]) - (static_cast<double>(d) * q[i] + static_cast<double>(b));
    e += weight(w, i) * r * r;
  }
  return e;
}

float fit_symmetric(const FitKernels& kern, const float* x, const float* w, int n, const Levels& levels,
                    const SearchSpec& spec, uint8_t* k) {
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  if (n > kMaxGroup || n % 8 != 0 || amax == 0.0f || !finite_group(x, w, n)) {
    codes_for_scale(x, n, 0.0f, levels, k);
    return 0.0f;
  }
  // Groups so small that 1 / max|x| overflows are zero for every stored scale.
  if (!std::isfinite(static_cast<float>(std::max(levels.hi, -levels.lo)) * spec.f_hi / amax)) {
    codes_for_scale(x, n, 0.0f, levels, k);
    return 0.0f;
  }
  w = usable_weights(w, n);
  const int nc = std::clamp(spec.n_coarse, 2, kMaxCand / 2), nf = std::clamp(spec.n_fine, 2, kMaxCand);
  float s[kMaxCand];
  double sxl[kMaxCand], sll[kMaxCand];
  // Coarse grid, both signs of d (for asymmetric levels like -8..7 they differ).
  int sign_of[kMaxCand];
  float f_of[kMaxCand];
  int m = 0;
  for (const int sign : {1, -1}) {
    const int ext = sign > 0 ? levels.hi : -levels.lo;
    if (ext <= 0) continue;
    for (int j = 0; j < nc; ++j) {
      f_of[m] = grid_point(spec.f_lo, spec.f_hi, j, nc);
      sign_of[m] = sign;
      s[m] = static_cast<float>(sign * ext) * f_of[m] / amax;
      ++m;
    }
  }
  eval_symmetric(kern, x, w, n, levels, s, m, sxl, sll);
  int best = 0;
  for (int c = 1; c < m; ++c)
    if (gain(sxl[c], sll[c]) > gain(sxl[best], sll[best])) best = c;
  double best_g = gain(sxl[best], sll[best]), best_d = best_g > 0 ? sxl[best] / sll[best] : 0;
  float best_s = s[best];
  // Fine grid over the two coarse steps around the best coarse point.
  {
    const int sign = sign_of[best];
    const float ext = static_cast<float>(sign > 0 ? levels.hi : -levels.lo);
    const float step = (spec.f_hi - spec.f_lo) / static_cast<float>(nc - 1);
    const float lo = std::max(f_of[best] - step, 0.05f), hi = f_of[best] + step;
    for (int j = 0; j < nf; ++j) s[j] = static_cast<float>(sign) * ext * grid_point(lo, hi, j, nf) / amax;
    eval_symmetric(kern, x, w, n, levels, s, nf, sxl, sll);
    for (int c = 0; c < nf; ++c) {
      const double g = gain(sxl[c], sll[c]);
      if (g > best_g) best_g = g, best_d = sxl[c] / sll[c], best_s = s[c];
    }
  }
  // Re-derive the codes from the least-squares scale while the error falls.
  for (int it = 0; it < spec.refinements && best_d != 0; ++it) {
    s[0] = static_cast<float>(1.0 / best_d);
    if (!std::isfinite(s[0])) break;
    eval_symmetric(kern, x, w, n, levels, s, 1, sxl, sll);
    const double g = gain(sxl[0], sll[0]);
    if (!(g > best_g)) break;
    best_g = g, best_d = sxl[0] / sll[0], best_s = s[0];
  }
  if (!(best_g > 0)) {  // no candidate explains any of the weighted signal
    codes_for_scale(x, n, 0.0f, levels, k);
    return 0.0f;
  }
  for (int i = 0; i < n; ++i) k[i] = static_cast<uint8_t>(nearest_level(levels, x[i] * best_s));
  return static_cast<float>(best_d);
}

void fit_affine(const FitKernels& kern, const float* x, const float* w, int n, int qmax, bool b_nonpositive,
                const SearchSpec& spec, uint8_t* q, float& d_out, float& b_out) {
  d_out = 0.0f;
  b_out = 0.0f;
  if (n > kMaxGroup || n % 8 != 0 || !finite_group(x, w, n)) {
    std::memset(q, 0, static_cast<size_t>(n));
    return;
  }
  float xmin = x[0], xmax = x[0];
  for (int i = 1; i < n; ++i) xmin = std::min(xmin, x[i]), xmax = std::max(xmax, x[i]);
  if (b_nonpositive) xmin = std::min(xmin, 0.0f);
  const float range = xmax - xmin;
  if (!std::isfinite(static_cast<float>(qmax) * spec.f_hi / range) || !std::isfinite(range)) {
    // Constant groups (d = 0 represents them exactly), |x| near FLT_MAX, or a range so small
    // that 1 / range overflows: every code 0, b the minimum.
    std::memset(q, 0, static_cast<size_t>(n));
    b_out = std::isfinite(range) ? xmin : 0.0f;
    return;
  }
  w = usable_weights(w, n);
  AffineSums k{0, 0, 0};
  for (int i = 0; i < n; ++i) {
    const double wx = weight(w, i) * x[i];
    k.s += weight(w, i);
    k.sx += wx;
    k.sxx += wx * x[i];
  }
  const int nc = std::clamp(spec.n_coarse, 2, kMaxCand), nf = std::clamp(spec.n_fine, 2, kMaxCand);
  float s[kMaxCand], f_of[kMaxCand];
  double sq[kMaxCand], sqq[kMaxCand], sxq[kMaxCand];
  for (int j = 0; j < nc; ++j) {
    f_of[j] = grid_point(spec.f_lo, spec.f_hi, j, nc);
    s[j] = static_cast<float>(qmax) * f_of[j] / range;
  }
  kern.eval_affine(x, w, n, xmin, qmax, s, nc, sq, sqq, sxq);
  double best_e = 0, best_d = 0, best_b = xmin;
  float best_s = s[0], best_x0 = xmin;
  int best = -1;
  for (int c = 0; c < nc; ++c) {
    double d, b;
    const double e = solve_affine(k, sq[c], sqq[c], sxq[c], b_nonpositive, d, b);
    if (best < 0 || e < best_e) best = c, best_e = e, best_d = d, best_b = b, best_s = s[c];
  }
  {
    const float step = (spec.f_hi - spec.f_lo) / static_cast<float>(nc - 1);
    const float lo = std::max(f_of[best] - step, 0.05f), hi = f_of[best] + step;
    for (int j = 0; j < nf; ++j) s[j] = static_cast<float>(qmax) * grid_point(lo, hi, j, nf) / range;
    kern.eval_affine(x, w, n, xmin, qmax, s, nf, sq, sqq, sxq);
    for (int c = 0; c < nf; ++c) {
      double d, b;
      const double e = solve_affine(k, sq[c], sqq[c], sxq[c], b_nonpositive, d, b);
      if (e < best_e) best_e = e, best_d = d, best_b = b, best_s = s[c];
    }
  }
  for (int it = 0; it < spec.refinements && best_d > 0; ++it) {
    const float x0 = static_cast<float>(best_b);
    s[0] = static_cast<float>(1.0 / best_d);
    if (!std::isfinite(s[0]) || !std::isfinite(x0)) break;
    kern.eval_affine(x, w, n, x0, qmax, s, 1, sq, sqq, sxq);
    double d, b;
    const double e = solve_affine(k, sq[0], sqq[0], sxq[0], b_nonpositive, d, b);
    if (!(e < best_e)) break;
    best_e = e, best_d = d, best_b = b, best_s = s[0], best_x0 = x0;
  }
  affine_codes(x, n, best_x0, best_s, qmax, q);
  d_out = static_cast<float>(best_d);
  b_out = static_cast<float>(best_b);
}

}  // namespace les::kernels::fit
