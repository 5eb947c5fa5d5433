// Weighted scale fitting (see quant_fit.h for the method).

#include "kernels/quant_fit.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace les::kernels::fit {
namespace {

constexpr int kMaxGroup = 256;  // largest group any format fits at once
constexpr int kSteps = 10;      // candidates: +-kSteps tenths of a level around the extreme
constexpr int kRefinements = 3; // nearest-codes / least-squares rounds after the search

inline double weight(const float* w, int i) { return w ? static_cast<double>(w[i]) : 1.0; }

// Rounds v to the nearest integer (ties to even), then returns it minus lo,
// clamped to [0, count - 1]. NaN gives 0, so non-finite input never reaches an
// undefined float-to-int conversion.
inline int round_clamped(float v, int lo, int count) {
  const float r = std::nearbyint(v) - static_cast<float>(lo);
  if (!(r > 0.0f)) return 0;
  return r < static_cast<float>(count - 1) ? static_cast<int>(r) : count - 1;
}

// Least-squares d for fixed symmetric codes; returns false if sum w L^2 == 0.
bool solve_symmetric(const float* x, const float* w, int n, const Levels& levels, const uint8_t* k, double& d,
                     double& err) {
  double sxl = 0, sll = 0, sxx = 0;
  for (int i = 0; i < n; ++i) {
    const double l = level_value(levels, k[i]);
    sxl += weight(w, i) * x[i] * l;
    sll += weight(w, i) * l * l;
    sxx += weight(w, i) * x[i] * x[i];
  }
  if (sll <= 0) return false;
  d = sxl / sll;
  err = sxx - sxl * sxl / sll;
  return true;
}

// Least-squares (d, b) for fixed affine codes, with the optional b <= 0 constraint.
void solve_affine(const float* x, const float* w, int n, const uint8_t* q, bool b_nonpositive, double& d,
                  double& b) {
  double s = 0, sq = 0, sqq = 0, sx = 0, sxq = 0;
  for (int i = 0; i < n; ++i) {
    const double wi = weight(w, i);
    s += wi;
    sq += wi * q[i];
    sqq += wi * q[i] * q[i];
    sx += wi * x[i];
    sxq += wi * x[i] * q[i];
  }
  const double det = s * sqq - sq * sq;
  if (det > 0) {
    d = (s * sxq - sq * sx) / det;
    b = (sqq * sx - sq * sxq) / det;
  } else if (s > 0) {  // all codes equal: only the offset is determined
    b = (sx - d * sq) / s;
  }
  if (b_nonpositive && b > 0) {
    b = 0;
    if (sqq > 0) d = sxq / sqq;
  }
  if (d < 0) d = 0;
}

double affine_error(const float* x, const float* w, int n, const uint8_t* q, double d, double b) {
  double e = 0;
  for (int i = 0; i < n; ++i) {
    const double r = x[i] - (d * q[i] + b);
    e += weight(w, i) * r * r;
  }
  return e;
}

}  // namespace

int nearest_level(const Levels& levels, float v) {
  if (!levels.values) {
    return round_clamped(v, levels.lo, levels.count);
  }
  // Levels are ascending: the nearest is the first level >= v or the one before it.
  const int* first = levels.values;
  const int* it = std::lower_bound(first, first + levels.count, v,
                                   [](int level, float value) { return static_cast<float>(level) < value; });
  if (it == first) return 0;
  if (it == first + levels.count) return levels.count - 1;
  const float above = static_cast<float>(*it) - v, below = v - static_cast<float>(*(it - 1));
  return static_cast<int>(it - first) - (below <= above ? 1 : 0);
}

void codes_for_scale(const float* x, int n, float d, const Levels& levels, uint8_t* k) {
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int i = 0; i < n; ++i) k[i] = static_cast<uint8_t>(nearest_level(levels, x[i] * id));
}

void codes_for_affine(const float* x, int n, float d, float b, int qmax, uint8_t* q) {
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int i = 0; i < n; ++i) {
    q[i] = static_cast<uint8_t>(round_clamped((x[i] - b) * id, 0, qmax + 1));
  }
}

float fit_symmetric(const float* x, const float* w, int n, const Levels& levels, uint8_t* k) {
  float m = 0.0f, amax = 0.0f;  // m: the element of largest magnitude, signed
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      m = x[i];
    }
  }
  if (amax == 0.0f || n > kMaxGroup) {
    codes_for_scale(x, n, 0.0f, levels, k);
    return 0.0f;
  }
  uint8_t trial[kMaxGroup];
  double best_d = 0, best_err = std::numeric_limits<double>::infinity();
  bool found = false;
  for (const int side : {levels.lo, levels.hi}) {
    if (side == 0) continue;
    const float sign = side < 0 ? -1.0f : 1.0f;
    for (int step = -kSteps; step <= kSteps; ++step) {
      const float denom = static_cast<float>(side) + sign * 0.1f * static_cast<float>(step);
      if (std::fabs(denom) < 0.5f) continue;
      codes_for_scale(x, n, m / denom, levels, trial);
      double d = 0, err = 0;
      if (solve_symmetric(x, w, n, levels, trial, d, err) && err < best_err) {
        best_err = err;
        best_d = d;
        std::memcpy(k, trial, static_cast<size_t>(n));
        found = true;
      }
    }
  }
  if (!found) {  // every weight zero: plain max scaling
    const float d = m / static_cast<float>(m < 0 ? levels.lo : levels.hi);
    codes_for_scale(x, n, d, levels, k);
    return d;
  }
  for (int it = 0; it < kRefinements; ++it) {
    codes_for_scale(x, n, static_cast<float>(best_d), levels, trial);
    double d = 0, err = 0;
    if (!solve_symmetric(x, w, n, levels, trial, d, err) || err >= best_err) break;
    best_err = err;
    best_d = d;
    std::memcpy(k, trial, static_cast<size_t>(n));
  }
  return static_cast<float>(best_d);
}

void fit_affine(const float* x, const float* w, int n, int qmax, bool b_nonpositive, uint8_t* q, float& d_out,
                float& b_out) {
  float xmin = x[0], xmax = x[0];
  for (int i = 1; i < n; ++i) {
    xmin = std::min(xmin, x[i]);
    xmax = std::max(xmax, x[i]);
  }
  if (b_nonpositive) xmin = std::min(xmin, 0.0f);
  if (xmax == xmin || n > kMaxGroup) {
    d_out = 0.0f;
    b_out = xmin;
    std::memset(q, 0, static_cast<size_t>(n));
    return;
  }
  uint8_t trial[kMaxGroup];
  double best_d = 0, best_b = xmin, best_err = std::numeric_limits<double>::infinity();
  for (int step = -kSteps; step <= kSteps; ++step) {
    const float denom = static_cast<float>(qmax) + 0.1f * static_cast<float>(step);
    double d = (xmax - xmin) / denom, b = xmin;
    codes_for_affine(x, n, static_cast<float>(d), static_cast<float>(b), qmax, trial);
    solve_affine(x, w, n, trial, b_nonpositive, d, b);
    const double err = affine_error(x, w, n, trial, d, b);
    if (err < best_err) {
      best_err = err;
      best_d = d;
      best_b = b;
      std::memcpy(q, trial, static_cast<size_t>(n));
    }
  }
  for (int it = 0; it < kRefinements; ++it) {
    double d = best_d, b = best_b;
    codes_for_affine(x, n, static_cast<float>(d), static_cast<float>(b), qmax, trial);
    solve_affine(x, w, n, trial, b_nonpositive, d, b);
    const double err = affine_error(x, w, n, trial, d, b);
    if (err >= best_err) break;
    best_err = err;
    best_d = d;
    best_b = b;
    std::memcpy(q, trial, static_cast<size_t>(n));
  }
  d_out = static_cast<float>(best_d);
  b_out = static_cast<float>(best_b);
}

}  // namespace les::kernels::fit
