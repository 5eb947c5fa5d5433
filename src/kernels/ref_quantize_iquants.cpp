// Weight quantisers of the sign-and-magnitude lattice i-quants (IQ2_XXS,
// IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S): see ref_iquants.h for the method.
//
// Own formulation of the search ggml's quantize_row_iq*_impl performs (sign
// parity fix, scale search over grid points): instead of rounding every
// coordinate and looking among a precomputed neighbour list, each group's
// weighted error is written as  sum w (u p - t)^2 = u^2 A_p - 2 u B_p + const
// with A_p = sum w p^2 and B_p = sum w t p over the grid points p, so the
// best grid point of a group for any unit u is an exact argmin over the grid,
// and the unit and super-block scale searches only re-evaluate these sums.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/iq_grids.h"
#include "kernels/ref_iquants.h"
#include "kernels/unaligned.h"

namespace les::kernels {
namespace {

// One lattice format: grid points of `group` coordinates, x = u * p * sign
// with u = d * (2 k + 1) / unit_div per `scale_group` elements.
struct Lattice {
  int group;           // 8 or 4 coordinates per grid point
  int n_points;
  int scale_group;     // 32 or 16
  float unit_div;      // 8 (IQ2), 4 (IQ3_XXS), 1 (IQ3_S)
  bool parity;         // 7 stored sign bits per 8 elements, the 8th by even parity
  const float* points;   // n_points x group magnitudes
  const float* points_t; // the same, coordinate-major: group x n_points
};

template <size_t N, typename Word>
std::vector<float> expand_points(const std::array<Word, N>& grid, int group, bool transposed = false) {
  std::vector<float> p(N * static_cast<size_t>(group));
  for (size_t i = 0; i < N; ++i)
    for (int j = 0; j < group; ++j) {
      const float v = static_cast<float>((grid[i] >> (8 * j)) & 0xFF);
      if (transposed) p[static_cast<size_t>(j) * N + i] = v;
      else p[i * group + j] = v;
    }
  return p;
}

const Lattice& lattice(GgmlType t) {
  // Immutable after the first call (thread-safe static initialisation).
  static const std::vector<float> p2xxs = expand_points(iq::kIQ2XXSGrid, 8), p2xs = expand_points(iq::kIQ2XSGrid, 8),
                                  p2s = expand_points(iq::kIQ2SGrid, 8), p3xxs = expand_points(iq::kIQ3XXSGrid, 4),
                                  p3s = expand_points(iq::kIQ3SGrid, 4);
  static const std::vector<float> t2xxs = expand_points(iq::kIQ2XXSGrid, 8, true),
                                  t2xs = expand_points(iq::kIQ2XSGrid, 8, true), t2s = expand_points(iq::kIQ2SGrid, 8, true),
                                  t3xxs = expand_points(iq::kIQ3XXSGrid, 4, true), t3s = expand_points(iq::kIQ3SGrid, 4, true);
  static const Lattice l2xxs{8, 256, 32, 8.0f, true, p2xxs.data(), t2xxs.data()},
      l2xs{8, 512, 16, 8.0f, true, p2xs.data(), t2xs.data()}, l2s{8, 1024, 16, 8.0f, false, p2s.data(), t2s.data()},
      l3xxs{4, 256, 32, 4.0f, true, p3xxs.data(), t3xxs.data()}, l3s{4, 512, 32, 1.0f, false, p3s.data(), t3s.data()};
  switch (t) {
    case GgmlType::IQ2_XS: return l2xs;
    case GgmlType::IQ2_S: return l2s;
    case GgmlType::IQ3_XXS: return l3xxs;
    case GgmlType::IQ3_S: return l3s;
    default: return l2xxs;
  }
}

// Importance is shrunk toward its row mean (as the other LES quantisers do)
// and multiplied by sqrt(sigma^2 + x^2), which favours the block's large
// weights; without importance only the second factor remains.
constexpr float kImportanceFloor = 0.5f;

// The decisions for one super-block.
struct BlockChoice {
  float d = 0;                  // the F16-rounded super-block scale
  uint8_t k[16] = {};           // integer scale per scale group
  uint16_t index[64] = {};      // grid point per grid group
  uint8_t neg[kQKK] = {};       // stored sign per element (1: negative)
};

// Per super-block search state: targets, weights, and A/B of every grid point for every grid group.
class BlockSearch {
 public:
  explicit BlockSearch(const Lattice& L)
      : L_(L), A_(static_cast<size_t>(kQKK / L.group) * L.n_points), B_(A_.size()), env_pt_(A_.size()),
        env_x_(A_.size()), env_n_(static_cast<size_t>(kQKK / L.group)), env_lo_(env_n_.size()), env_hi_(env_n_.size()) {
    for (int i = 0; i < L.n_points * L.group; ++i) p_max_ = std::max(p_max_, L.points[i]);
  }

  void run(const float* x, const float* imp, float imp_floor, BlockChoice& out) {
    set_targets(x, imp, imp_floor, out);
    const int n_groups = kQKK / L_.group;
    const int n_scales = kQKK / L_.scale_group;
    const int per_scale = L_.scale_group / L_.group;
    for (int s = 0; s < n_scales; ++s) {
      // Every unit the searches below try lies in [0.45, 2] u_ref but for rare
      // least-squares steps, which best_point() serves by a full pass.
      float t_max = 0;
      for (int i = s * L_.scale_group; i < (s + 1) * L_.scale_group; ++i) t_max = std::max(t_max, t_[i]);
      u_ref_[s] = t_max / p_max_;
      for (int g = s * per_scale; g < (s + 1) * per_scale; ++g) {
        fill_sums(g);
        build_envelope(g, 0.45f * u_ref_[s], 2.0f * u_ref_[s]);
      }
    }
    // Continuous best unit per scale group.
    float u[16];
    float u_max = 0;
    for (int s = 0; s < n_scales; ++s) {
      u[s] = best_unit(s);
      u_max = std::max(u_max, u[s]);
    }
    if (!(u_max > 0)) {
      for (int g = 0; g < n_groups; ++g) out.index[g] = static_cast<uint16_t>(best_point(g, 0.0f));
      out.d = 0;
      return;
    }
    // Super-block scale: candidates around the one that maps u_max to k = 15,
    // each F16-rounded; per candidate every scale group takes its best k.
    // Below F16's range every candidate would round to 0: the smallest
    // subnormal is then the only non-zero choice (k picks the unit).
    // A candidate must beat the all-zero block (error term 0).
    const float d0 = u_max * L_.unit_div / 31.0f;
    double best_err = 0;
    out.d = 0;
    for (int c = -5; c <= 4; ++c) {
      const float d = c < -4 ? fp16_to_fp32(fp16_t{1}) : fp16_to_fp32(fp32_to_fp16(d0 * (1.0f + 0.04f * static_cast<float>(c))));
      if (!(d > 0) || std::isinf(d)) continue;
      double err = 0;
      uint8_t ks[16];
      for (int s = 0; s < n_scales; ++s) {
        const int k0 = static_cast<int>(std::lround((u[s] * L_.unit_div / d - 1.0f) * 0.5f));
        double be = INFINITY;
        for (int k = std::max(0, k0 - 1); k <= std::min(15, k0 + 1); ++k) {
          const double e = scale_group_error(s, d * static_cast<float>(2 * k + 1) / L_.unit_div);
          if (e < be) {
            be = e;
            ks[s] = static_cast<uint8_t>(k);
          }
        }
        err += be;
      }
      if (err < best_err) {
        best_err = err;
        out.d = d;
        std::memcpy(out.k, ks, sizeof(ks));
      }
    }
    if (out.d == 0) std::memset(out.k, 0, sizeof(out.k));
    for (int s = 0; s < n_scales; ++s) {
      const float us = out.d * static_cast<float>(2 * out.k[s] + 1) / L_.unit_div;
      for (int g = s * per_scale; g < (s + 1) * per_scale; ++g) out.index[g] = static_cast<uint16_t>(best_point(g, us));
    }
  }

 private:
  // Signs and magnitudes; with parity, each 8-element sign group with an odd
  // number of negatives gives up the element of least weighted magnitude,
  // whose target magnitude becomes -|x|.
  void set_targets(const float* x, const float* imp, float imp_floor, BlockChoice& out) {
    double sumx2 = 0;
    for (int i = 0; i < kQKK; ++i) sumx2 += double(x[i]) * x[i];
    const float sigma2 = static_cast<float>(sumx2 / kQKK);
    for (int i = 0; i < kQKK; ++i) {
      const float base = std::sqrt(sigma2 + x[i] * x[i]);
      w_[i] = imp ? (imp[i] + imp_floor) * base : base;
      t_[i] = std::fabs(x[i]);
      out.neg[i] = x[i] < 0 ? 1 : 0;
    }
    if (!L_.parity) return;
    for (int g = 0; g < kQKK; g += 8) {
      int parity = 0, least = g;
      for (int i = g; i < g + 8; ++i) {
        parity ^= out.neg[i];
        if (w_[i] * t_[i] * t_[i] < w_[least] * t_[least] * t_[least]) least = i;
      }
      if (parity) {
        out.neg[least] ^= 1;
        t_[least] = -t_[least];
      }
    }
  }

  // A_p = sum_j w_j p_j^2 and B_p = sum_j w_j t_j p_j for every grid point p
  // (coordinate-major points, so the loop over p vectorises; j in order).
  void fill_sums(int g) {
    const int G = L_.group, np = L_.n_points;
    const float* w = w_ + g * G;
    const float* t = t_ + g * G;
    float* A = A_.data() + static_cast<size_t>(g) * np;
    float* B = B_.data() + static_cast<size_t>(g) * np;
    for (int p = 0; p < np; ++p) A[p] = B[p] = 0;
    for (int j = 0; j < G; ++j) {
      const float* q = L_.points_t + static_cast<size_t>(j) * np;
      const float wj = w[j], wt = w[j] * t[j];
      for (int p = 0; p < np; ++p) {
        A[p] += wj * q[p] * q[p];
        B[p] += wt * q[p];
      }
    }
  }

  // The best point as a function of u > 0 on [lo, hi]: the group's error
  // u^2 A_p - 2 u B_p is u times the line A_p u - 2 B_p, so the best points
  // form the lower envelope of these lines, a few segments in practice.
  // Walked from lo: the next segment's point is the line of smaller slope
  // that crosses the current one first (one pass over the grid per segment);
  // env_x_[k] is where segment k + 1 starts.
  void build_envelope(int g, float lo, float hi) {
    const size_t base = static_cast<size_t>(g) * L_.n_points;
    const float* A = A_.data() + base;
    const float* B = B_.data() + base;
    int* P = env_pt_.data() + base;
    float* X = env_x_.data() + base;
    env_lo_[g] = lo;
    env_hi_[g] = hi;
    env_n_[g] = 0;
    if (!(lo > 0) || !(hi > lo)) return;
    int c = full_scan(g, lo);
    int n = 0;
    float x = lo;
    for (;;) {
      P[n] = c;
      int next = -1;
      float next_x = hi;
      for (int q = 0; q < L_.n_points; ++q) {
        if (!(A[q] < A[c])) continue;
        const float xq = 2.0f * (B[c] - B[q]) / (A[c] - A[q]);
        if (xq > x && (xq < next_x || (xq == next_x && next >= 0 && A[q] < A[next]))) {
          next_x = xq;
          next = q;
        }
      }
      if (next < 0 || n + 1 >= L_.n_points) break;
      X[n++] = next_x;
      c = next;
      x = next_x;
    }
    env_n_[g] = n + 1;
  }

  // argmin_p u^2 A_p - 2 u B_p over all points (lowest index on ties).
  int full_scan(int g, float u) const {
    const float* A = A_.data() + static_cast<size_t>(g) * L_.n_points;
    const float* B = B_.data() + static_cast<size_t>(g) * L_.n_points;
    int best = 0;
    float be = INFINITY;
    for (int p = 0; p < L_.n_points; ++p) {
      const float e = u * A[p] - 2.0f * B[p];
      if (e < be) {
        be = e;
        best = p;
      }
    }
    return best;
  }

  // argmin_p u^2 A_p - 2 u B_p: the envelope inside its range, else a full
  // pass; point 0 for u <= 0 (every point then decodes to zero).
  int best_point(int g, float u) const {
    if (!(u > 0)) return 0;
    const int n = env_n_[g];
    if (n == 0 || u < env_lo_[g] || u > env_hi_[g]) return full_scan(g, u);
    const float* X = env_x_.data() + static_cast<size_t>(g) * L_.n_points;
    const int k = static_cast<int>(std::upper_bound(X, X + (n - 1), u) - X);
    return env_pt_[static_cast<size_t>(g) * L_.n_points + k];
  }

  // sum over the scale group's grid groups of min_p (u^2 A_p - 2 u B_p).
  double scale_group_error(int s, float u) const {
    const int per_scale = L_.scale_group / L_.group;
    double e = 0;
    for (int g = s * per_scale; g < (s + 1) * per_scale; ++g) {
      const int p = best_point(g, u);
      const size_t at = static_cast<size_t>(g) * L_.n_points + p;
      e += double(u) * (double(u) * A_[at] - 2.0 * B_[at]);
    }
    return e;
  }

  // Best continuous unit of scale group s: a sweep around max|t| / (largest
  // level), then least-squares refinement for the chosen points.
  float best_unit(int s) const {
    const int per_scale = L_.scale_group / L_.group;
    const float u_ref = u_ref_[s];
    if (!(u_ref > 0)) return 0;
    float best_u = u_ref;
    double best_e = INFINITY;
    constexpr int kSweep = 32;
    for (int c = 0; c < kSweep; ++c) {
      const float u = u_ref * (0.5f + static_cast<float>(c) / (kSweep - 1) * 1.0f);
      const double e = scale_group_error(s, u);
      if (e < best_e) {
        best_e = e;
        best_u = u;
      }
    }
    for (int it = 0; it < 3; ++it) {  // least squares for the points of best_u
      double sa = 0, sb = 0;
      for (int g = s * per_scale; g < (s + 1) * per_scale; ++g) {
        const size_t at = static_cast<size_t>(g) * L_.n_points + best_point(g, best_u);
        sa += A_[at];
        sb += B_[at];
      }
      if (!(sa > 0) || !(sb > 0)) break;
      const float u = static_cast<float>(sb / sa);
      const double e = scale_group_error(s, u);
      if (!(e < best_e)) break;
      best_e = e;
      best_u = u;
    }
    return best_u;
  }

  const Lattice& L_;
  float w_[kQKK];
  float t_[kQKK];
  std::vector<float> A_, B_;
  std::vector<int> env_pt_;     // per group: envelope points (build_envelope)
  std::vector<float> env_x_;    // per group: where the next envelope point takes over
  std::vector<int> env_n_;      // per group: envelope segments (0: none)
  std::vector<float> env_lo_, env_hi_;  // per group: the envelope's range of u
  float u_ref_[16] = {};        // per scale group: max target / largest coordinate
  float p_max_ = 0;             // the largest grid coordinate
};

// 7 stored sign bits of the 8-element sign group starting at e.
inline uint32_t signs7(const BlockChoice& c, int e) {
  uint32_t s = 0;
  for (int j = 0; j < 7; ++j) s |= uint32_t{c.neg[e + j]} << j;
  return s;
}
inline uint8_t signs8(const BlockChoice& c, int e) { return static_cast<uint8_t>(signs7(c, e) | (c.neg[e + 7] << 7)); }

void pack(const BlockChoice& c, block_iq2_xxs& b) {
  b.d = fp32_to_fp16(c.d);
  for (int ib = 0; ib < 8; ++ib) {
    uint32_t w0 = 0, w1 = uint32_t{c.k[ib]} << 28;
    for (int l = 0; l < 4; ++l) {
      w0 |= uint32_t{c.index[4 * ib + l]} << (8 * l);
      w1 |= signs7(c, 32 * ib + 8 * l) << (7 * l);
    }
    std::memcpy(reinterpret_cast<uint8_t*>(b.qs) + 8 * ib, &w0, 4);
    std::memcpy(reinterpret_cast<uint8_t*>(b.qs) + 8 * ib + 4, &w1, 4);
  }
}

void pack(const BlockChoice& c, block_iq2_xs& b) {
  b.d = fp32_to_fp16(c.d);
  for (int g = 0; g < 32; ++g) b.qs[g] = static_cast<uint16_t>(c.index[g] | (signs7(c, 8 * g) << 9));
  for (int ib = 0; ib < 8; ++ib) b.scales[ib] = static_cast<uint8_t>(c.k[2 * ib] | (c.k[2 * ib + 1] << 4));
}

void pack(const BlockChoice& c, block_iq2_s& b) {
  b.d = fp32_to_fp16(c.d);
  std::memset(b.qh, 0, sizeof(b.qh));
  for (int g = 0; g < 32; ++g) {
    b.qs[g] = static_cast<uint8_t>(c.index[g] & 0xFF);
    b.qh[g / 4] |= static_cast<uint8_t>((c.index[g] >> 8) << (2 * (g % 4)));
    b.qs[32 + g] = signs8(c, 8 * g);
  }
  for (int ib = 0; ib < 8; ++ib) b.scales[ib] = static_cast<uint8_t>(c.k[2 * ib] | (c.k[2 * ib + 1] << 4));
}

void pack(const BlockChoice& c, block_iq3_xxs& b) {
  b.d = fp32_to_fp16(c.d);
  for (int g = 0; g < 64; ++g) b.qs[g] = static_cast<uint8_t>(c.index[g]);
  for (int ib = 0; ib < 8; ++ib) {
    uint32_t w = uint32_t{c.k[ib]} << 28;
    for (int l = 0; l < 4; ++l) w |= signs7(c, 32 * ib + 8 * l) << (7 * l);
    std::memcpy(b.qs + 64 + 4 * ib, &w, 4);
  }
}

void pack(const BlockChoice& c, block_iq3_s& b) {
  b.d = fp32_to_fp16(c.d);
  std::memset(b.qh, 0, sizeof(b.qh));
  for (int g = 0; g < 64; ++g) {
    b.qs[g] = static_cast<uint8_t>(c.index[g] & 0xFF);
    b.qh[g / 8] |= static_cast<uint8_t>((c.index[g] >> 8) << (g % 8));
  }
  for (int i = 0; i < 32; ++i) b.signs[i] = signs8(c, 8 * i);
  for (int i = 0; i < 4; ++i) b.scales[i] = static_cast<uint8_t>(c.k[2 * i] | (c.k[2 * i + 1] << 4));
}

template <typename Block, GgmlType T>
void quantize_lattice(const float* x, Block* y, int64_t n, const float* importance) {
  BlockSearch search(lattice(T));
  float floor = 0;
  if (importance) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += importance[i];
    floor = static_cast<float>(kImportanceFloor * sum / static_cast<double>(std::max<int64_t>(n, 1)));
  }
  for (int64_t b = 0; b < n / kQKK; ++b) {
    BlockChoice c;
    search.run(x + b * kQKK, importance ? importance + b * kQKK : nullptr, floor, c);
    Block blk{};
    pack(c, blk);
    store_unaligned(y, b, blk);
  }
}

template <typename Block, GgmlType T>
void impl(const FitKernels& /*fit*/, const float* x, void* y, int64_t n, const float* importance) {
  quantize_lattice<Block, T>(x, static_cast<Block*>(y), n, importance);
}

}  // namespace

void quantize_row_iq2_xxs_ref(const float* x, block_iq2_xxs* y, int64_t n, const float* importance) {
  quantize_lattice<block_iq2_xxs, GgmlType::IQ2_XXS>(x, y, n, importance);
}
void quantize_row_iq2_xs_ref(const float* x, block_iq2_xs* y, int64_t n, const float* importance) {
  quantize_lattice<block_iq2_xs, GgmlType::IQ2_XS>(x, y, n, importance);
}
void quantize_row_iq2_s_ref(const float* x, block_iq2_s* y, int64_t n, const float* importance) {
  quantize_lattice<block_iq2_s, GgmlType::IQ2_S>(x, y, n, importance);
}
void quantize_row_iq3_xxs_ref(const float* x, block_iq3_xxs* y, int64_t n, const float* importance) {
  quantize_lattice<block_iq3_xxs, GgmlType::IQ3_XXS>(x, y, n, importance);
}
void quantize_row_iq3_s_ref(const float* x, block_iq3_s* y, int64_t n, const float* importance) {
  quantize_lattice<block_iq3_s, GgmlType::IQ3_S>(x, y, n, importance);
}

WeightQuantizerImpl lattice_weight_quantizer_impl(GgmlType type) noexcept {
  switch (type) {
    case GgmlType::IQ2_XXS: return impl<block_iq2_xxs, GgmlType::IQ2_XXS>;
    case GgmlType::IQ2_XS: return impl<block_iq2_xs, GgmlType::IQ2_XS>;
    case GgmlType::IQ2_S: return impl<block_iq2_s, GgmlType::IQ2_S>;
    case GgmlType::IQ3_XXS: return impl<block_iq3_xxs, GgmlType::IQ3_XXS>;
    case GgmlType::IQ3_S: return impl<block_iq3_s, GgmlType::IQ3_S>;
    default: return nullptr;
  }
}

}  // namespace les::kernels
