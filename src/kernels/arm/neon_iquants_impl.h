// NEON dot products of the lattice i-quants (IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) against Q8_K, one and several activation rows.
//
// Each sub-block of 32 weights is decoded once into two int8x16 halves of
// signed codes (grid coordinates looked up per group, times the +-1 bytes of
// the sign tables of iq_grids.h; IQ1: code8 = 8 g +- 1) and met by every row
// with exact int8 dots (dot_s8: SDOT, or SMULL + SADALP), weighted by the
// integer scale 2 s + 1 of each half in int32 lanes. The block's lanes give
// the reference's int32 isum (ref_iquants.h) and the float part is the
// reference's (acc += float(isum) * (d_w * d_x) block after block, s = acc * F),
// so results are bit-identical to the scalar reference.
//
// Internal: included once per instruction-set variant by a .cpp that defines
// LES_NEON_KERNEL(name) (neon_iquants.cpp: _neon, neon_iquants_dotprod.cpp:
// _neon_dotprod); no include guard on purpose.
#include <arm_neon.h>

#include <cstddef>
#include <cstring>

#include "kernels/arm/neon_kernels.h"
#include "kernels/arm/neon_simd.h"
#include "kernels/iq_block_formats.h"
#include "kernels/iq_grids.h"

namespace les::kernels {
namespace {

using neon::dot_s8;

// One decoded sub-block: codes of elements 0..15 and 16..31, and the integer
// scales of the two halves.
struct IqSub {
  int8x16_t lo, hi;
  int32_t ls_lo, ls_hi;
};

inline int8x16_t pair64(uint64_t a, uint64_t b) { return vcombine_s8(vcreate_s8(a), vcreate_s8(b)); }
inline int8x16_t quad32(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  const uint32_t v[4] = {a, b, c, d};
  return vreinterpretq_s8_u32(vld1q_u32(v));
}
inline uint32_t le32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

struct NeonIQ2XXS {
  using Block = block_iq2_xxs;
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) { return b.d; }
  static IqSub decode(const Block& b, int ib) {
    const uint8_t* q = reinterpret_cast<const uint8_t*>(b.qs) + 8 * ib;
    const uint32_t aux = le32(q + 4);
    const auto& g = iq::kIQ2XXSGrid;
    const auto& sm = iq::kSignMultipliers;
    const int8x16_t lo = vmulq_s8(pair64(g[q[0]], g[q[1]]), pair64(sm[aux & 127], sm[(aux >> 7) & 127]));
    const int8x16_t hi = vmulq_s8(pair64(g[q[2]], g[q[3]]), pair64(sm[(aux >> 14) & 127], sm[(aux >> 21) & 127]));
    const int32_t ls = 2 * static_cast<int32_t>(aux >> 28) + 1;
    return {lo, hi, ls, ls};
  }
};

struct NeonIQ2XS {
  using Block = block_iq2_xs;
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) { return b.d; }
  static IqSub decode(const Block& b, int ib) {
    uint16_t q[4];
    std::memcpy(q, b.qs + 4 * ib, 8);
    const auto& g = iq::kIQ2XSGrid;
    const auto& sm = iq::kSignMultipliers;
    const int8x16_t lo = vmulq_s8(pair64(g[q[0] & 511], g[q[1] & 511]), pair64(sm[q[0] >> 9], sm[q[1] >> 9]));
    const int8x16_t hi = vmulq_s8(pair64(g[q[2] & 511], g[q[3] & 511]), pair64(sm[q[2] >> 9], sm[q[3] >> 9]));
    return {lo, hi, 2 * (b.scales[ib] & 15) + 1, 2 * (b.scales[ib] >> 4) + 1};
  }
};

struct NeonIQ2S {
  using Block = block_iq2_s;
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) { return b.d; }
  static IqSub decode(const Block& b, int ib) {
    const uint8_t* qs = b.qs + 4 * ib;
    const uint8_t* sg = b.qs + 32 + 4 * ib;
    const int h = b.qh[ib];
    const auto& g = iq::kIQ2SGrid;
    const auto& sm = iq::kSignMultipliers256;
    const int8x16_t lo = vmulq_s8(pair64(g[qs[0] | ((h << 8) & 0x300)], g[qs[1] | ((h << 6) & 0x300)]),
                                  pair64(sm[sg[0]], sm[sg[1]]));
    const int8x16_t hi = vmulq_s8(pair64(g[qs[2] | ((h << 4) & 0x300)], g[qs[3] | ((h << 2) & 0x300)]),
                                  pair64(sm[sg[2]], sm[sg[3]]));
    return {lo, hi, 2 * (b.scales[ib] & 15) + 1, 2 * (b.scales[ib] >> 4) + 1};
  }
};

struct NeonIQ3XXS {
  using Block = block_iq3_xxs;
  static constexpr float kFactor = 0.25f;
  static fp16_t d(const Block& b) { return b.d; }
  static IqSub decode(const Block& b, int ib) {
    const uint8_t* q = b.qs + 8 * ib;
    const uint32_t aux = le32(b.qs + 64 + 4 * ib);
    const auto& g = iq::kIQ3XXSGrid;
    const auto& sm = iq::kSignMultipliers;
    const int8x16_t lo = vmulq_s8(quad32(g[q[0]], g[q[1]], g[q[2]], g[q[3]]), pair64(sm[aux & 127], sm[(aux >> 7) & 127]));
    const int8x16_t hi =
        vmulq_s8(quad32(g[q[4]], g[q[5]], g[q[6]], g[q[7]]), pair64(sm[(aux >> 14) & 127], sm[(aux >> 21) & 127]));
    const int32_t ls = 2 * static_cast<int32_t>(aux >> 28) + 1;
    return {lo, hi, ls, ls};
  }
};

struct NeonIQ3S {
  using Block = block_iq3_s;
  static constexpr float kFactor = 1.0f;
  static fp16_t d(const Block& b) { return b.d; }
  static IqSub decode(const Block& b, int ib) {
    const uint8_t* q = b.qs + 8 * ib;
    const uint8_t* sg = b.signs + 4 * ib;
    const int h = b.qh[ib];
    const auto& g = iq::kIQ3SGrid;
    const auto& sm = iq::kSignMultipliers256;
    auto at = [&](int k) { return g[q[k] | (((h >> k) & 1) << 8)]; };
    const int8x16_t lo = vmulq_s8(quad32(at(0), at(1), at(2), at(3)), pair64(sm[sg[0]], sm[sg[1]]));
    const int8x16_t hi = vmulq_s8(quad32(at(4), at(5), at(6), at(7)), pair64(sm[sg[2]], sm[sg[3]]));
    const int s = ib % 2 == 0 ? (b.scales[ib / 2] & 15) : (b.scales[ib / 2] >> 4);
    return {lo, hi, 2 * s + 1, 2 * s + 1};
  }
};

// code8 = 8 g + delta (g = -1, 0, 1 bytes; delta = +-1 bytes).
inline int8x16_t iq1_code8(uint64_t g0, uint64_t g1, uint64_t d0, uint64_t d1) {
  return vaddq_s8(vshlq_n_s8(pair64(g0, g1), 3), pair64(d0, d1));
}
constexpr uint64_t kPlusOnes = 0x0101010101010101ULL;
constexpr uint64_t kMinusOnes = ~uint64_t{0};

struct NeonIQ1S {
  using Block = block_iq1_s;
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) { return b.d; }
  static IqSub decode(const Block& b, int ib) {
    const uint8_t* q = b.qs + 4 * ib;
    const int h = b.qh[ib];
    const auto& g = iq::kIQ1SGrid;
    const uint64_t dl = (h & 0x8000) ? kMinusOnes : kPlusOnes;
    const int8x16_t lo = iq1_code8(g[q[0] | ((h << 8) & 0x700)], g[q[1] | ((h << 5) & 0x700)], dl, dl);
    const int8x16_t hi = iq1_code8(g[q[2] | ((h << 2) & 0x700)], g[q[3] | ((h >> 1) & 0x700)], dl, dl);
    const int32_t ls = 2 * ((h >> 12) & 7) + 1;
    return {lo, hi, ls, ls};
  }
};

struct NeonIQ1M {
  using Block = block_iq1_m;
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) {
    uint16_t sc[4];
    std::memcpy(sc, b.scales, 8);
    return static_cast<fp16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000));
  }
  static IqSub decode(const Block& b, int ib) {
    const uint8_t* q = b.qs + 4 * ib;
    const int h0 = b.qh[2 * ib], h1 = b.qh[2 * ib + 1];
    const auto& g = iq::kIQ1SGrid;
    auto dl = [](int bit) { return bit ? kMinusOnes : kPlusOnes; };
    const int8x16_t lo = iq1_code8(g[q[0] | ((h0 << 8) & 0x700)], g[q[1] | ((h0 << 4) & 0x700)], dl(h0 & 0x08), dl(h0 & 0x80));
    const int8x16_t hi = iq1_code8(g[q[2] | ((h1 << 8) & 0x700)], g[q[3] | ((h1 << 4) & 0x700)], dl(h1 & 0x08), dl(h1 & 0x80));
    uint16_t sc;
    std::memcpy(&sc, b.scales + 2 * (ib / 2), 2);
    const int s = sc >> (6 * (ib % 2));
    return {lo, hi, 2 * (s & 7) + 1, 2 * ((s >> 3) & 7) + 1};
  }
};

// The weight row against NX activation rows (x_stride bytes apart); each row's
// result has the bits of NX = 1 and of the scalar reference.
template <typename T, int NX>
inline void iq_dot_rows(int64_t n, float* s, int64_t s_stride, const void* vw, const void* vx, size_t x_stride) {
  const uint8_t* w = static_cast<const uint8_t*>(vw);
  const uint8_t* x = static_cast<const uint8_t*>(vx);
  float acc[NX];
  for (int t = 0; t < NX; ++t) acc[t] = 0.0f;
  for (int64_t b = 0; b < n / kQKK; ++b) {
    typename T::Block blk;
    std::memcpy(&blk, w + b * sizeof(blk), sizeof(blk));
    int32x4_t isum[NX];
    for (int t = 0; t < NX; ++t) isum[t] = vdupq_n_s32(0);
    const uint8_t* xb[NX];
    for (int t = 0; t < NX; ++t) xb[t] = x + t * x_stride + b * sizeof(block_q8_K);
    for (int ib = 0; ib < kQKK / 32; ++ib) {
      const IqSub sub = T::decode(blk, ib);
      for (int t = 0; t < NX; ++t) {
        const int8_t* q8 = reinterpret_cast<const int8_t*>(xb[t] + offsetof(block_q8_K, qs)) + 32 * ib;
        const int32x4_t plo = dot_s8(vdupq_n_s32(0), sub.lo, vld1q_s8(q8));
        const int32x4_t phi = dot_s8(vdupq_n_s32(0), sub.hi, vld1q_s8(q8 + 16));
        isum[t] = vmlaq_n_s32(isum[t], plo, sub.ls_lo);
        isum[t] = vmlaq_n_s32(isum[t], phi, sub.ls_hi);
      }
    }
    const float dw = neon::f16_to_f32(T::d(blk));
    for (int t = 0; t < NX; ++t) {
      const float d = dw * neon::load_f32(xb[t] + offsetof(block_q8_K, d));
      const float term = static_cast<float>(vaddvq_s32(isum[t])) * d;
      acc[t] += term;
    }
  }
  for (int t = 0; t < NX; ++t) s[t * s_stride] = acc[t] * T::kFactor;
}

template <typename T>
void iq_dot_one(int64_t n, float* s, const void* w, const void* x) {
  iq_dot_rows<T, 1>(n, s, 1, w, x, 0);
}

template <typename T>
void iq_dot_multi(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride, int nx) {
  switch (nx) {
    case 1: iq_dot_rows<T, 1>(n, s, s_stride, w, x, x_stride); break;
    case 2: iq_dot_rows<T, 2>(n, s, s_stride, w, x, x_stride); break;
    case 3: iq_dot_rows<T, 3>(n, s, s_stride, w, x, x_stride); break;
    default: iq_dot_rows<T, 4>(n, s, s_stride, w, x, x_stride); break;
  }
}

}  // namespace

void LES_NEON_KERNEL(install_iquant_kernels)(KernelTable& t) {
  auto set = [&t](GgmlType type, VecDotFn one, VecDotMultiFn multi) {
    t.types[static_cast<uint32_t>(type)].vec_dot = one;
    t.types[static_cast<uint32_t>(type)].vec_dot_multi = multi;
  };
  using G = GgmlType;
  set(G::IQ2_XXS, iq_dot_one<NeonIQ2XXS>, iq_dot_multi<NeonIQ2XXS>);
  set(G::IQ2_XS, iq_dot_one<NeonIQ2XS>, iq_dot_multi<NeonIQ2XS>);
  set(G::IQ2_S, iq_dot_one<NeonIQ2S>, iq_dot_multi<NeonIQ2S>);
  set(G::IQ3_XXS, iq_dot_one<NeonIQ3XXS>, iq_dot_multi<NeonIQ3XXS>);
  set(G::IQ3_S, iq_dot_one<NeonIQ3S>, iq_dot_multi<NeonIQ3S>);
  set(G::IQ1_S, iq_dot_one<NeonIQ1S>, iq_dot_multi<NeonIQ1S>);
  set(G::IQ1_M, iq_dot_one<NeonIQ1M>, iq_dot_multi<NeonIQ1M>);
}

}  // namespace les::kernels
