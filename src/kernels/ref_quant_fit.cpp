// Scalar reference of the scale-search kernels (FitKernels, kernels.h): plain
// loops in the lane order the contract fixes, so that every SIMD tier can
// reproduce them bit for bit.

#include <cmath>

#include "kernels/quant_fit.h"
#include "kernels/ref.h"

namespace les::kernels {
namespace {

// Eight double lane accumulators combined in the contract's fixed order.
struct Lanes8 {
  double l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  double sum() const { return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7])); }
};

inline double weight_of(const float* w, int i) { return w ? static_cast<double>(w[i]) : 1.0; }

}  // namespace

void fit_eval_symmetric_ref(const float* x, const float* w, int n, int lo, int hi, const float* s, int n_cand,
                            double* sxl, double* sll) {
  const float flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
  for (int c = 0; c < n_cand; ++c) {
    Lanes8 a, b;
    for (int i = 0; i < n; ++i) {
      const double wi = weight_of(w, i);
      const double q = fit::clamp_round(x[i] * s[c], flo, fhi);
      a.l[i % 8] += (wi * x[i]) * q;
      b.l[i % 8] += (wi * q) * q;
    }
    sxl[c] = a.sum();
    sll[c] = b.sum();
  }
}

void fit_eval_symmetric_table16_ref(const float* x, const float* w, int n, const int8_t* levels, const float* s,
                                    int n_cand, double* sxl, double* sll) {
  float mid[15];
  for (int j = 0; j < 15; ++j) mid[j] = 0.5f * (static_cast<float>(levels[j]) + static_cast<float>(levels[j + 1]));
  for (int c = 0; c < n_cand; ++c) {
    Lanes8 a, b;
    for (int i = 0; i < n; ++i) {
      const double wi = weight_of(w, i);
      const float v = x[i] * s[c];
      int k = 0;
      for (int j = 0; j < 15; ++j) k += mid[j] < v ? 1 : 0;
      const double q = levels[k];
      a.l[i % 8] += (wi * x[i]) * q;
      b.l[i % 8] += (wi * q) * q;
    }
    sxl[c] = a.sum();
    sll[c] = b.sum();
  }
}

void fit_eval_affine_ref(const float* x, const float* w, int n, float x0, int qmax, const float* s, int n_cand,
                         double* sq, double* sqq, double* sxq) {
  const float fmax = static_cast<float>(qmax);
  for (int c = 0; c < n_cand; ++c) {
    Lanes8 a, b, e;
    for (int i = 0; i < n; ++i) {
      const double wi = weight_of(w, i);
      const double q = fit::clamp_round((x[i] - x0) * s[c], 0.0f, fmax);
      a.l[i % 8] += wi * q;
      b.l[i % 8] += (wi * q) * q;
      e.l[i % 8] += (wi * x[i]) * q;
    }
    sq[c] = a.sum();
    sqq[c] = b.sum();
    sxq[c] = e.sum();
  }
}

const FitKernels& reference_fit_kernels() noexcept {
  static const FitKernels k{fit_eval_symmetric_ref, fit_eval_symmetric_table16_ref, fit_eval_affine_ref};
  return k;
}

}  // namespace les::kernels
