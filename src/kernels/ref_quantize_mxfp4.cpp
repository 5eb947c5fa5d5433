// MXFP4 weight quantiser (weight_quantizers.h, ref.h). A block of 32 is
// x_i ~ 2^(e - 128) * v_i with v_i one of MXFP4's doubled E2M1 levels
// (0, +-1, +-2, +-3, +-4, +-6, +-8, +-12) and e the block's E8M0 exponent.
// The scale is a power of two, so there is no scale to fit: for a given e
// the best codes are the nearest levels of x_i / 2^(e - 128) (exact
// divisions), and the block's exponent is the one of
//   e0 - 1, e0, e0 + 1,  e0 = floor(log2 max|x|) + 125
// (e0 maps the largest |x| to [8, 16): the top levels, clipping above 12)
// whose codes give the least (importance-weighted) squared error; ties go to
// the smaller exponent. ggml's quantiser takes e0 with nearest codes; this
// search can only lower the error. Exponents stay in 1..254 (0xFF is the
// OCP format's NaN code). A block of zeros, or with a non-finite value, gets
// e = 0 and the codes of 0.
//
// Plain scalar code built with -ffp-contract=off (LesKernels.cmake), so the
// bytes are the same on every machine and tier.

#include <cmath>
#include <cstring>

#include "kernels/ref.h"
#include "kernels/row_weights.h"
#include "kernels/unaligned.h"
#include "kernels/weight_quantizers.h"

namespace les::kernels {
namespace {

// The code (nibble) of the level nearest v: magnitude by the midpoints of
// 0, 1, 2, 3, 4, 6, 8, 12 (a tie goes to the smaller magnitude), bit 3 the
// sign; 0 is stored as +0.
uint8_t nearest_code(float v) {
  static constexpr float kMid[7] = {0.5f, 1.5f, 2.5f, 3.5f, 5.0f, 7.0f, 10.0f};
  const float a = std::fabs(v);
  uint8_t k = 0;
  while (k < 7 && a > kMid[k]) ++k;
  return k == 0 ? 0 : static_cast<uint8_t>(k | (v < 0 ? 8 : 0));
}

// Weighted squared error of the block's nearest codes for exponent e, and the codes.
double block_error(const float* x, const float* w, uint8_t e, uint8_t* codes) {
  const float h = e8m0_half_to_fp32(e);
  double err = 0;
  for (int i = 0; i < kQKMXFP4; ++i) {
    codes[i] = nearest_code(x[i] / h);
    const double diff = static_cast<double>(x[i]) - static_cast<double>(kMXFP4Values[codes[i]]) * h;
    err += (w ? w[i] : 1.0) * diff * diff;
  }
  return err;
}

}  // namespace

void quantize_mxfp4(const FitKernels& /*fit*/, const float* x, void* y, int64_t n, const float* importance) {
  RowWeights rw(importance, n);
  for (int64_t b = 0; b < n / kQKMXFP4; ++b) {
    const float* xb = x + b * kQKMXFP4;
    const float* wb = rw.group(b * kQKMXFP4, kQKMXFP4);
    float amax = 0.0f;
    bool finite = true;
    for (int i = 0; i < kQKMXFP4; ++i) {
      finite = finite && std::isfinite(xb[i]);
      amax = std::fmax(amax, std::fabs(xb[i]));
    }
    block_mxfp4 out{};
    if (finite && amax > 0.0f) {
      int p = 0;
      std::frexp(amax, &p);  // amax = m 2^p, m in [0.5, 1): floor(log2 amax) = p - 1
      const int e0 = p + 125;
      double best = -1;
      uint8_t codes[kQKMXFP4];
      for (int e = e0 - 1; e <= e0 + 1; ++e) {
        if (e < 1 || e > 254) continue;
        const double err = block_error(xb, wb, static_cast<uint8_t>(e), codes);
        if (best < 0 || err < best) {
          best = err;
          out.e = static_cast<uint8_t>(e);
          for (int i = 0; i < kQKMXFP4 / 2; ++i) out.qs[i] = static_cast<uint8_t>(codes[i] | (codes[i + 16] << 4));
        }
      }
    }
    store_unaligned(static_cast<block_mxfp4*>(y), b, out);
  }
}

}  // namespace les::kernels
