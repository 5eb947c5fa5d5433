// Weight quantisers (see ref.h and weight_quantizers.h): fit scales with
// quant_fit.h, round them to the stored precision, search the integer
// sub-block scales of the K-quants locally, recompute the codes for the
// scales actually stored, and pack the codes in the layouts that
// block_elements.h decodes. Every function takes the FitKernels that run the
// scale search; the SIMD tiers' kernels are bit-identical to the scalar
// reference, so the bytes do not depend on the tier.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/block_elements.h"
#include "kernels/quant_fit.h"
#include "kernels/ref.h"
#include "kernels/row_weights.h"
#include "kernels/ref_iquants.h"
#include "kernels/unaligned.h"
#include "kernels/weight_quantizers.h"

namespace les::kernels {
namespace {

using fit::Levels;
using fit::SearchSpec;

inline float dec16(fp16_t h) { return fp16_to_fp32(h); }

// Search grids (quant_fit.h), chosen on the fixture rows and Gaussian blocks
// against an exhaustive search over every scale at which a code changes:
// each stays within 0.3 % of that optimum's error.
constexpr SearchSpec kSpec32 = {0.6f, 1.6f, 16, 16, 4};       // 4/5-bit codes of 32-blocks and K-quant sub-blocks
constexpr SearchSpec kSpecQ8 = {0.8f, 1.05f, 12, 12, 4};      // 8-bit codes: the best scale is within a few levels
constexpr SearchSpec kSpec3bit = {0.6f, 2.0f, 16, 16, 4};     // 2/3-bit codes clip their largest element often
constexpr SearchSpec kSpecScales = {0.5f, 1.5f, 16, 16, 4};   // integer sub-block scales

// Symmetric 32-element formats: stored level index k_e goes to nibble32 slot e (+ bit 4 in qh).
template <typename Block>
void pack_nibbles(Block& b, const uint8_t* k) {
  std::memset(b.qs, 0, sizeof(b.qs));
  for (int e = 0; e < 16; ++e) b.qs[e] = static_cast<uint8_t>((k[e] & 0x0F) | ((k[e + 16] & 0x0F) << 4));
  if constexpr (requires { b.qh; }) {
    std::memset(b.qh, 0, sizeof(b.qh));
    for (int e = 0; e < 32; ++e) b.qh[e / 8] |= static_cast<uint8_t>(((k[e] >> 4) & 1) << (e % 8));
  }
}

template <typename Block>
void quantize_symmetric_32(const FitKernels& fk, const float* x, Block* y, int64_t n, const float* importance,
                           const Levels& levels, const SearchSpec& spec) {
  RowWeights rw(importance, n);
  uint8_t k[32];
  for (int64_t b = 0; b < n / 32; ++b) {
    const float* xb = x + b * 32;
    const float d = fit::fit_symmetric(fk, xb, rw.group(b * 32, 32), 32, levels, spec, k);
    Block out{};
    out.d = fp32_to_fp16(d);
    fit::codes_for_scale(xb, 32, dec16(out.d), levels, k);
    if constexpr (std::is_same_v<Block, block_q8_0>) {
      for (int e = 0; e < 32; ++e) out.qs[e] = static_cast<int8_t>(fit::level_value(levels, k[e]));
    } else {
      pack_nibbles(out, k);  // the stored nibble (and bit 4) is the level index
    }
    store_unaligned(y, b, out);
  }
}

template <typename Block>
void quantize_affine_32(const FitKernels& fk, const float* x, Block* y, int64_t n, const float* importance,
                        int qmax) {
  RowWeights rw(importance, n);
  uint8_t q[32];
  for (int64_t b = 0; b < n / 32; ++b) {
    const float* xb = x + b * 32;
    float d = 0, off = 0;
    fit::fit_affine(fk, xb, rw.group(b * 32, 32), 32, qmax, false, kSpec32, q, d, off);
    Block out{};
    out.d = fp32_to_fp16(d);
    out.m = fp32_to_fp16(off);
    fit::codes_for_affine(xb, 32, dec16(out.d), dec16(out.m), qmax, q);
    pack_nibbles(out, q);
    store_unaligned(y, b, out);
  }
}

// Sensitivity of one sub-block's stored scale: sum_i w_i c_i^2 (an error of
// delta in the scale adds delta^2 times this), and of its offset: sum_i w_i.
void sub_block_weights(const float* w, int len, const uint8_t* k, const Levels& levels, float& scale_weight,
                       float& offset_weight) {
  double sw = 0, ow = 0;
  for (int i = 0; i < len; ++i) {
    const double wi = w ? w[i] : 1.0;
    const double c = fit::level_value(levels, k[i]);
    sw += wi * c * c;
    ow += wi;
  }
  scale_weight = static_cast<float>(sw);
  offset_weight = static_cast<float>(ow);
}

// Two-level symmetric K-quant (Q3_K, Q6_K): per sub-block of `sub` elements a
// signed float scale is fitted with codes in `code_levels`; those scales are
// then fitted as integers in `scale_levels` times one F16 super-scale, each
// integer scale is moved by +-1 where that lowers its sub-block's error, and
// the codes are recomputed for the stored scales. Outputs: super-scale (F16),
// integer sub-scales, and final codes (values, not indices). code_levels may
// be contiguous or a 16-entry table (IQ4_XS).
void quantize_k_symmetric(const FitKernels& fk, const float* x, const float* w, int sub, const Levels& code_levels,
                          const SearchSpec& code_spec, const Levels& scale_levels, fp16_t& d_out, int* scales,
                          int* codes) {
  const int nsub = kQKK / sub;
  float sub_scale[16], scale_weight[16], unused;
  uint8_t k[kQKK];
  for (int j = 0; j < nsub; ++j) {
    const float* wj = w ? w + j * sub : nullptr;
    sub_scale[j] = fit::fit_symmetric(fk, x + j * sub, wj, sub, code_levels, code_spec, k + j * sub);
    sub_block_weights(wj, sub, k + j * sub, code_levels, scale_weight[j], unused);
  }
  uint8_t sk[16];
  const float d = fit::fit_symmetric(fk, sub_scale, scale_weight, nsub, scale_levels, kSpecScales, sk);
  d_out = fp32_to_fp16(d);
  const float ds = dec16(d_out);
  fit::codes_for_scale(sub_scale, nsub, ds, scale_levels, sk);
  for (int j = 0; j < nsub; ++j) {
    const float* xj = x + j * sub;
    const float* wj = w ? w + j * sub : nullptr;
    double sxx = 0;
    for (int i = 0; i < sub; ++i) sxx += (wj ? wj[i] : 1.0) * xj[i] * xj[i];
    int best_sc = 0;
    double best_e = sxx;  // scale 0: every value 0
    float s[3];
    int scs[3], nc = 0;
    for (int delta = -1; delta <= 1; ++delta) {
      const int sc = fit::level_value(scale_levels, sk[j]) + delta;
      if (sc < scale_levels.lo || sc > scale_levels.hi || sc == 0 || ds == 0.0f) continue;
      scs[nc] = sc;
      s[nc++] = 1.0f / (ds * static_cast<float>(sc));
    }
    double sxl[3], sll[3];
    if (nc > 0 && code_levels.table) {
      fk.eval_symmetric_table16(xj, wj, sub, code_levels.table, s, nc, sxl, sll);
    } else if (nc > 0) {
      fk.eval_symmetric(xj, wj, sub, code_levels.lo, code_levels.hi, s, nc, sxl, sll);
    }
    for (int c = 0; c < nc; ++c) {
      const double dl = static_cast<double>(ds * static_cast<float>(scs[c]));
      const double e = sxx - 2 * dl * sxl[c] + dl * dl * sll[c];
      if (e < best_e) best_e = e, best_sc = scs[c];
    }
    scales[j] = best_sc;
    const float dl = ds * static_cast<float>(best_sc);
    fit::codes_for_scale(xj, sub, dl, code_levels, k + j * sub);
    for (int i = 0; i < sub; ++i) codes[j * sub + i] = fit::level_value(code_levels, k[j * sub + i]);
  }
}

// Two-level affine K-quant (Q2_K, Q4_K, Q5_K): per sub-block x ~ dj * q - mj
// with q in 0..qmax, dj >= 0, mj >= 0; dj and mj are then fitted as integers
// 0..scale_max times the F16 super-scales d and dmin. Then, twice at most:
// each (scale, min) pair is moved by +-1 where that lowers its sub-block's
// error, and (d, dmin) are re-solved by least squares over the whole
// super-block for the chosen integers and codes (kept if the block's error
// falls). The codes are finally those of the stored values.
struct KAffineState {
  fp16_t d, dmin;
  int scales[16], mins[16];
  uint8_t q[kQKK];
  double err;
};

// Local +-1 search of every sub-block's (scale, min) for fixed super-scales
// (errors from the FitKernels' sums); fills st.scales/mins/q/err.
void k_affine_local_search(const FitKernels& fk, const float* x, const float* w, int sub, int qmax, int scale_max,
                           const int* sc0, const int* m0, KAffineState& st) {
  const int nsub = kQKK / sub;
  const float ds = dec16(st.d), dm = dec16(st.dmin);
  st.err = 0;
  for (int j = 0; j < nsub; ++j) {
    const float* xj = x + j * sub;
    const float* wj = w ? w + j * sub : nullptr;
    double S = 0, Sx = 0, Sxx = 0;
    for (int i = 0; i < sub; ++i) {
      const double wi = wj ? wj[i] : 1.0;
      S += wi, Sx += wi * xj[i], Sxx += wi * xj[i] * xj[i];
    }
    int best_sc = sc0[j], best_m = m0[j];
    double best_e = -1;
    for (int dmn = -1; dmn <= 1; ++dmn) {
      const int mn = m0[j] + dmn;
      if (mn < 0 || mn > scale_max) continue;
      const float ml = dm * static_cast<float>(mn);
      const double b = -static_cast<double>(ml);
      float s[3];
      int scs[3], nc = 0;
      for (int dsc = -1; dsc <= 1; ++dsc) {
        const int sc = sc0[j] + dsc;
        if (sc < 0 || sc > scale_max) continue;
        const float dl = ds * static_cast<float>(sc);
        if (dl == 0.0f) {  // every code 0: xhat = b
          const double e = Sxx - 2 * b * Sx + b * b * S;
          if (best_e < 0 || e < best_e) best_e = e, best_sc = sc, best_m = mn;
          continue;
        }
        scs[nc] = sc;
        s[nc++] = 1.0f / dl;
      }
      double sq[3], sqq[3], sxq[3];
      if (nc > 0) fk.eval_affine(xj, wj, sub, -ml, qmax, s, nc, sq, sqq, sxq);
      for (int c = 0; c < nc; ++c) {
        const double d = static_cast<double>(ds * static_cast<float>(scs[c]));
        const double e = Sxx - 2 * d * sxq[c] - 2 * b * Sx + d * d * sqq[c] + 2 * d * b * sq[c] + b * b * S;
        if (best_e < 0 || e < best_e) best_e = e, best_sc = scs[c], best_m = mn;
      }
    }
    st.scales[j] = best_sc;
    st.mins[j] = best_m;
    st.err += best_e;
    fit::codes_for_affine(xj, sub, ds * static_cast<float>(best_sc), -(dm * static_cast<float>(best_m)), qmax,
                          st.q + j * sub);
  }
}

void quantize_k_affine(const FitKernels& fk, const float* x, const float* w, int sub, int qmax, int scale_max,
                       const SearchSpec& code_spec, fp16_t& d_out, fp16_t& dmin_out, int* scales, int* mins,
                       int* codes) {
  const int nsub = kQKK / sub;
  float sub_d[16], sub_m[16], wd[16], wm[16];
  uint8_t q[kQKK];
  const Levels code_levels = fit::contiguous_levels(0, qmax);
  for (int j = 0; j < nsub; ++j) {
    const float* wj = w ? w + j * sub : nullptr;
    float d = 0, b = 0;
    fit::fit_affine(fk, x + j * sub, wj, sub, qmax, true, code_spec, q + j * sub, d, b);
    sub_d[j] = d;
    sub_m[j] = -b;
    sub_block_weights(wj, sub, q + j * sub, code_levels, wd[j], wm[j]);
  }
  const Levels levels = fit::contiguous_levels(0, scale_max);
  uint8_t sk[16], mk[16];
  KAffineState best;
  best.d = fp32_to_fp16(fit::fit_symmetric(fk, sub_d, wd, nsub, levels, kSpecScales, sk));
  best.dmin = fp32_to_fp16(fit::fit_symmetric(fk, sub_m, wm, nsub, levels, kSpecScales, mk));
  fit::codes_for_scale(sub_d, nsub, dec16(best.d), levels, sk);
  fit::codes_for_scale(sub_m, nsub, dec16(best.dmin), levels, mk);
  int sc0[16], m0[16];
  for (int j = 0; j < nsub; ++j) sc0[j] = sk[j], m0[j] = mk[j];
  k_affine_local_search(fk, x, w, sub, qmax, scale_max, sc0, m0, best);
  for (int round = 0; round < 2; ++round) {
    // Least squares of x ~ d (sc_j q) - dmin m_j over the super-block.
    double a11 = 0, a12 = 0, a22 = 0, r1 = 0, r2 = 0;
    for (int i = 0; i < kQKK; ++i) {
      const double wi = w ? w[i] : 1.0;
      const double u = static_cast<double>(best.scales[i / sub]) * best.q[i], v = -best.mins[i / sub];
      a11 += wi * u * u, a12 += wi * u * v, a22 += wi * v * v;
      r1 += wi * u * x[i], r2 += wi * v * x[i];
    }
    const double det = a11 * a22 - a12 * a12;
    if (!(det > 0)) break;
    const double d = (r1 * a22 - r2 * a12) / det, dmin = (a11 * r2 - a12 * r1) / det;
    if (!(d > 0) || dmin < 0) break;
    KAffineState trial;
    trial.d = fp32_to_fp16(static_cast<float>(d));
    trial.dmin = fp32_to_fp16(static_cast<float>(dmin));
    k_affine_local_search(fk, x, w, sub, qmax, scale_max, best.scales, best.mins, trial);
    if (!(trial.err < best.err)) break;
    best = trial;
  }
  d_out = best.d;
  dmin_out = best.dmin;
  for (int j = 0; j < nsub; ++j) scales[j] = best.scales[j], mins[j] = best.mins[j];
  for (int i = 0; i < kQKK; ++i) codes[i] = best.q[i];
}

// Inverse of blocks::k4_scale_min: packs eight 6-bit scales and mins into 12 bytes.
void pack_k4_scales(const int* sc, const int* m, uint8_t* out) {
  std::memset(out, 0, kKScaleSize);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      out[j] |= static_cast<uint8_t>(sc[j] & 63);
      out[j + 4] |= static_cast<uint8_t>(m[j] & 63);
    } else {
      out[j + 4] |= static_cast<uint8_t>((sc[j] & 0x0F) | ((m[j] & 0x0F) << 4));
      out[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
      out[j] |= static_cast<uint8_t>((m[j] >> 4) << 6);
    }
  }
}

// 4-bit codes of a Q4_K/Q5_K super-block at their byte and nibble (block_elements.h).
void pack_k4_codes(const int* codes, uint8_t* qs) {
  std::memset(qs, 0, kQKK / 2);
  for (int e = 0; e < kQKK; ++e) {
    qs[32 * (e / 64) + e % 32] |= static_cast<uint8_t>((codes[e] & 0x0F) << ((e % 64) < 32 ? 0 : 4));
  }
}

void q4_0(const FitKernels& fk, const float* x, void* y, int64_t n, const float* imp) {
  quantize_symmetric_32(fk, x, static_cast<block_q4_0*>(y), n, imp, fit::contiguous_levels(-8, 7), kSpec32);
}

void q5_0(const FitKernels& fk, const float* x, void* y, int64_t n, const float* imp) {
  quantize_symmetric_32(fk, x, static_cast<block_q5_0*>(y), n, imp, fit::contiguous_levels(-16, 15), kSpec32);
}

void q4_1(const FitKernels& fk, const float* x, void* y, int64_t n, const float* imp) {
  quantize_affine_32(fk, x, static_cast<block_q4_1*>(y), n, imp, 15);
}

void q5_1(const FitKernels& fk, const float* x, void* y, int64_t n, const float* imp) {
  quantize_affine_32(fk, x, static_cast<block_q5_1*>(y), n, imp, 31);
}

void iq4_nl(const FitKernels& fk, const float* x, void* y, int64_t n, const float* imp) {
  const Levels levels{kIQ4NLValues, 16, kIQ4NLValues[0], kIQ4NLValues[15]};
  quantize_symmetric_32(fk, x, static_cast<block_iq4_nl*>(y), n, imp, levels, kSpec32);
}

void q8_0(const FitKernels& fk, const float* x, void* y, int64_t n, const float* imp) {
  quantize_symmetric_32(fk, x, static_cast<block_q8_0*>(y), n, imp, fit::contiguous_levels(-127, 127), kSpecQ8);
}

void q2_K(const FitKernels& fk, const float* x, void* y, int64_t n, const float* imp) {
  RowWeights rw(imp, n);
  int scales[16], mins[16], codes[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    block_q2_K out{};
    quantize_k_affine(fk, x + b * kQKK, rw.group(b * kQKK, kQKK), 16, 3, 15, kSpec3bit, out.d, out.dmin, scales,
                      mins, codes);
    for (int j = 0; j < 16; ++j) out.scales[j] = static_cast<uint8_t>(scales[j] | (mins[j] << 4));
    std::memset(out.qs, 0, sizeof(out.qs));
    for (int e = 0; e < kQKK; ++e) {
      const int h = e / 128, r = e % 128;
      out.qs[32 * h + r % 32] |= static_cast<uint8_t>(codes[e] << (2 * (r / 32)));
    }
    store_unaligned(static_cast<block_q2_K*>(y), b, out);
  }
}

void q3_K(const FitKernels& fk, const float* x, void* y, int64_t n, const float* imp) {
  RowWeights rw(imp, n);
  int scales[16], codes[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    block_q3_K out{};
    quantize_k_symmetric(fk, x + b * kQKK, rw.group(b * kQKK, kQKK), 16, fit::contiguous_levels(-4, 3), kSpec3bit,
                         fit::contiguous_levels(-32, 31), out.d, scales, codes);
    std::memset(out.scales, 0, sizeof(out.scales));
    for (int i = 0; i < 16; ++i) {
      const int u = scales[i] + 32;  // stored 6-bit value
      if (i < 8) {
        out.scales[i] |= static_cast<uint8_t>(u & 0x0F);
      } else {
        out.scales[i - 8] |= static_cast<uint8_t>((u & 0x0F) << 4);
      }
      out.scales[8 + i % 4] |= static_cast<uint8_t>((u >> 4) << (2 * (i / 4)));
    }
    std::memset(out.qs, 0, sizeof(out.qs));
    std::memset(out.hmask, 0, sizeof(out.hmask));
    for (int e = 0; e < kQKK; ++e) {
      const int h = e / 128, r = e % 128;
      const int k = codes[e] + 4;  // 0..7: low 2 bits in qs, bit 2 in hmask
      out.qs[32 * h + r % 32] |= static_cast<uint8_t>((k & 3) << (2 * (r / 32)));
      out.hmask[e % 32] |= static_cast<uint8_t>((k >> 2) << (4 * h + r / 32));
    }
    store_unaligned(static_cast<block_q3_K*>(y), b, out);
  }
}

void q4_K(const FitKernels& fk, const float* x, void* y, int64_t n, const float* imp) {
  RowWeights rw(imp, n);
  int scales[8], mins[8], codes[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    block_q4_K out{};
    quantize_k_affine(fk, x + b * kQKK, rw.group(b * kQKK, kQKK), 32, 15, 63, kSpec32, out.d, out.dmin, scales, mins,
                      codes);
    pack_k4_scales(scales, mins, out.scales);
    pack_k4_codes(codes, out.qs);
    store_unaligned(static_cast<block_q4_K*>(y), b, out);
  }
}

void q5_K(const FitKernels& fk, const float* x, void* y, int64_t n, const float* imp) {
  RowWeights rw(imp, n);
  int scales[8], mins[8], codes[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    block_q5_K out{};
    quantize_k_affine(fk, x + b * kQKK, rw.group(b * kQKK, kQKK), 32, 31, 63, kSpec32, out.d, out.dmin, scales, mins,
                      codes);
    pack_k4_scales(scales, mins, out.scales);
    pack_k4_codes(codes, out.qs);
    std::memset(out.qh, 0, sizeof(out.qh));
    for (int e = 0; e < kQKK; ++e) out.qh[e % 32] |= static_cast<uint8_t>((codes[e] >> 4) << (e / 32));
    store_unaligned(static_cast<block_q5_K*>(y), b, out);
  }
}

// IQ4_XS: Q3_K's two-level fit with sub-blocks of 32, IQ4_NL's levels for the
// codes and 6-bit signed integer sub-block scales.
void iq4_xs(const FitKernels& fk, const float* x, void* y, int64_t n, const float* imp) {
  RowWeights rw(imp, n);
  const Levels levels{kIQ4NLValues, 16, kIQ4NLValues[0], kIQ4NLValues[15]};
  int scales[8], codes[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    block_iq4_xs out{};
    quantize_k_symmetric(fk, x + b * kQKK, rw.group(b * kQKK, kQKK), 32, levels, kSpec32,
                         fit::contiguous_levels(-32, 31), out.d, scales, codes);
    for (int j = 0; j < 8; ++j) {
      const int u = scales[j] + 32;  // stored 6-bit value
      out.scales_l[j / 2] |= static_cast<uint8_t>((u & 0x0F) << (4 * (j % 2)));
      out.scales_h |= static_cast<uint16_t>((u >> 4) << (2 * j));
    }
    for (int e = 0; e < kQKK; ++e) {
      int k = 0;  // the level index of the code value
      while (kIQ4NLValues[k] != codes[e]) ++k;
      out.qs[16 * (e / 32) + e % 16] |= static_cast<uint8_t>(k << (e % 32 < 16 ? 0 : 4));
    }
    store_unaligned(static_cast<block_iq4_xs*>(y), b, out);
  }
}

void q6_K(const FitKernels& fk, const float* x, void* y, int64_t n, const float* imp) {
  RowWeights rw(imp, n);
  int scales[16], codes[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    block_q6_K out{};
    quantize_k_symmetric(fk, x + b * kQKK, rw.group(b * kQKK, kQKK), 16, fit::contiguous_levels(-32, 31), kSpec32,
                         fit::contiguous_levels(-128, 127), out.d, scales, codes);
    for (int j = 0; j < 16; ++j) out.scales[j] = static_cast<int8_t>(scales[j]);
    std::memset(out.ql, 0, sizeof(out.ql));
    std::memset(out.qh, 0, sizeof(out.qh));
    for (int e = 0; e < kQKK; ++e) {
      const int h = e / 128, r = e % 128, k = r / 32, l = r % 32;
      const int u = codes[e] + 32;  // 0..63
      out.ql[64 * h + 32 * (k % 2) + l] |= static_cast<uint8_t>((u & 0x0F) << (k < 2 ? 0 : 4));
      out.qh[32 * h + l] |= static_cast<uint8_t>((u >> 4) << (2 * k));
    }
    store_unaligned(static_cast<block_q6_K*>(y), b, out);
  }
}

}  // namespace

WeightQuantizerImpl weight_quantizer_impl(GgmlType type) noexcept {
  switch (type) {
    case GgmlType::Q4_0: return q4_0;
    case GgmlType::Q4_1: return q4_1;
    case GgmlType::Q5_0: return q5_0;
    case GgmlType::Q5_1: return q5_1;
    case GgmlType::Q8_0: return q8_0;
    case GgmlType::IQ4_NL: return iq4_nl;
    case GgmlType::Q2_K: return q2_K;
    case GgmlType::Q3_K: return q3_K;
    case GgmlType::Q4_K: return q4_K;
    case GgmlType::Q5_K: return q5_K;
    case GgmlType::Q6_K: return q6_K;
    case GgmlType::IQ4_XS: return iq4_xs;
    case GgmlType::MXFP4: return quantize_mxfp4;
    default: return lattice_weight_quantizer_impl(type);  // ref_iquants.h
  }
}

void quantize_row_q4_0_ref(const float* x, block_q4_0* y, int64_t n, const float* importance) {
  q4_0(reference_fit_kernels(), x, y, n, importance);
}
void quantize_row_q4_1_ref(const float* x, block_q4_1* y, int64_t n, const float* importance) {
  q4_1(reference_fit_kernels(), x, y, n, importance);
}
void quantize_row_q5_0_ref(const float* x, block_q5_0* y, int64_t n, const float* importance) {
  q5_0(reference_fit_kernels(), x, y, n, importance);
}
void quantize_row_q5_1_ref(const float* x, block_q5_1* y, int64_t n, const float* importance) {
  q5_1(reference_fit_kernels(), x, y, n, importance);
}
void quantize_row_q8_0_weights_ref(const float* x, block_q8_0* y, int64_t n, const float* importance) {
  q8_0(reference_fit_kernels(), x, y, n, importance);
}
void quantize_row_iq4_nl_ref(const float* x, block_iq4_nl* y, int64_t n, const float* importance) {
  iq4_nl(reference_fit_kernels(), x, y, n, importance);
}
void quantize_row_q2_K_ref(const float* x, block_q2_K* y, int64_t n, const float* importance) {
  q2_K(reference_fit_kernels(), x, y, n, importance);
}
void quantize_row_q3_K_ref(const float* x, block_q3_K* y, int64_t n, const float* importance) {
  q3_K(reference_fit_kernels(), x, y, n, importance);
}
void quantize_row_q4_K_ref(const float* x, block_q4_K* y, int64_t n, const float* importance) {
  q4_K(reference_fit_kernels(), x, y, n, importance);
}
void quantize_row_q5_K_ref(const float* x, block_q5_K* y, int64_t n, const float* importance) {
  q5_K(reference_fit_kernels(), x, y, n, importance);
}
void quantize_row_q6_K_ref(const float* x, block_q6_K* y, int64_t n, const float* importance) {
  q6_K(reference_fit_kernels(), x, y, n, importance);
}
void quantize_row_iq4_xs_ref(const float* x, block_iq4_xs* y, int64_t n, const float* importance) {
  iq4_xs(reference_fit_kernels(), x, y, n, importance);
}
void quantize_row_mxfp4_ref(const float* x, block_mxfp4* y, int64_t n, const float* importance) {
  quantize_mxfp4(reference_fit_kernels(), x, y, n, importance);
}

}  // namespace les::kernels
