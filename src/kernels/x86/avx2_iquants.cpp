// AVX2 dot products of the lattice i-quants against Q8_K, one and several
// activation rows (ref_iquants.h defines the arithmetic).
//
// Method (own formulation): each sub-block of 32 weights is decoded once into
//   u     32 unsigned bytes, the magnitudes |code| (grid coordinates looked up
//         per group of 8 or 4: one 64- or 32-bit load per group),
//   sgn   32 bytes whose sign is the code's sign (+-1, or the code itself),
//   scale int16 lanes holding 2 s + 1 of the elements' (half) sub-block,
// and met by every activation row as madd(maddubs(u, sign(q8, sgn)), scale):
// int16 pair sums are at most 2 * 62 * 127 = 15748 (IQ3_XXS), so nothing
// saturates, and every int32 lane is exact. IQ1 codes are code8 = 8 g +- 1
// (g = -1, 0, 1), built as sign(8, g) + delta. The block's lanes are summed
// to its int32 isum and the float part is the reference's, block after block
// in one F32 accumulator (acc += float(isum) * (d_w * d_x); s = acc * F), so
// every result is bit-identical to the scalar reference; this TU is built
// without FMA contraction (LesKernels.cmake) for that reason.
#include "kernels/iq_block_formats.h"
#include "kernels/iq_grids.h"
#include "kernels/x86/avx2_common.h"
#include "kernels/x86/avx2_kernels.h"

namespace les::kernels::avx2 {
namespace {

using iq::kSignMultipliers;

// Lines of the super-block 8 KiB ahead into L2 (as avx2_kquants.cpp's decode matvec).
template <typename Block>
inline void prefetch_block(const Block* blk) {
  const char* p = reinterpret_cast<const char*>(blk) + 8192;
  for (size_t o = 0; o < sizeof(Block); o += 64) _mm_prefetch(p + o, _MM_HINT_T1);
  _mm_prefetch(p + sizeof(Block) - 1, _MM_HINT_T1);
}

inline const block_q8_K& xblock(const uint8_t* x, size_t x_stride, int t, int64_t b) {
  return reinterpret_cast<const block_q8_K*>(x + static_cast<size_t>(t) * x_stride)[b];
}

// One decoded sub-block (see the file comment).
struct Sub {
  __m256i u, sgn, scale;
};

// int16 scale lanes: `a` for elements 0..15 (low 128 bits), `b` for 16..31.
inline __m256i halves16(int a, int b) {
  return _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(b)), _mm_set1_epi16(static_cast<int16_t>(a)));
}

// Sign multipliers (+-1 bytes) of four groups from 4 x 7 stored sign bits.
inline __m256i signs7x4(uint32_t bits) {
  return _mm256_set_epi64x(static_cast<int64_t>(kSignMultipliers[(bits >> 21) & 127]),
                           static_cast<int64_t>(kSignMultipliers[(bits >> 14) & 127]),
                           static_cast<int64_t>(kSignMultipliers[(bits >> 7) & 127]),
                           static_cast<int64_t>(kSignMultipliers[bits & 127]));
}

// Sign multipliers (+-1 bytes) from 32 explicit sign bits (bit e: element e negative).
inline __m256i signs32(uint32_t bits) { return _mm256_or_si256(bits_to_bytes(bits), _mm256_set1_epi8(1)); }

inline __m256i grid4x64(const uint64_t* g, int i0, int i1, int i2, int i3) {
  return _mm256_set_epi64x(static_cast<int64_t>(g[i3]), static_cast<int64_t>(g[i2]), static_cast<int64_t>(g[i1]),
                           static_cast<int64_t>(g[i0]));
}

struct IQ2XXS {
  using Block = block_iq2_xxs;
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) { return b.d; }
  static Sub decode(const Block& b, int ib) {
    const uint8_t* q = reinterpret_cast<const uint8_t*>(b.qs) + 8 * ib;
    const uint32_t aux = load_u32(q + 4);
    const int ls = 2 * static_cast<int>(aux >> 28) + 1;
    return {grid4x64(iq::kIQ2XXSGrid.data(), q[0], q[1], q[2], q[3]), signs7x4(aux), _mm256_set1_epi16(static_cast<int16_t>(ls))};
  }
};

struct IQ2XS {
  using Block = block_iq2_xs;
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) { return b.d; }
  static Sub decode(const Block& b, int ib) {
    uint16_t q[4];
    std::memcpy(q, b.qs + 4 * ib, 8);
    const uint32_t sbits = static_cast<uint32_t>((q[0] >> 9) | ((q[1] >> 9) << 7) | ((q[2] >> 9) << 14)) |
                          (static_cast<uint32_t>(q[3] >> 9) << 21);
    const __m256i u = grid4x64(iq::kIQ2XSGrid.data(), q[0] & 511, q[1] & 511, q[2] & 511, q[3] & 511);
    return {u, signs7x4(sbits), halves16(2 * (b.scales[ib] & 15) + 1, 2 * (b.scales[ib] >> 4) + 1)};
  }
};

struct IQ2S {
  using Block = block_iq2_s;
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) { return b.d; }
  static Sub decode(const Block& b, int ib) {
    const uint8_t* qs = b.qs + 4 * ib;
    const int h = b.qh[ib];
    const __m256i u = grid4x64(iq::kIQ2SGrid.data(), qs[0] | ((h << 8) & 0x300), qs[1] | ((h << 6) & 0x300),
                               qs[2] | ((h << 4) & 0x300), qs[3] | ((h << 2) & 0x300));
    return {u, signs32(load_u32(b.qs + 32 + 4 * ib)), halves16(2 * (b.scales[ib] & 15) + 1, 2 * (b.scales[ib] >> 4) + 1)};
  }
};

struct IQ3XXS {
  using Block = block_iq3_xxs;
  static constexpr float kFactor = 0.25f;
  static fp16_t d(const Block& b) { return b.d; }
  static Sub decode(const Block& b, int ib) {
    const uint8_t* q = b.qs + 8 * ib;
    const uint32_t* g = iq::kIQ3XXSGrid.data();
    const __m256i u = _mm256_set_epi32(static_cast<int>(g[q[7]]), static_cast<int>(g[q[6]]), static_cast<int>(g[q[5]]),
                                       static_cast<int>(g[q[4]]), static_cast<int>(g[q[3]]), static_cast<int>(g[q[2]]),
                                       static_cast<int>(g[q[1]]), static_cast<int>(g[q[0]]));
    const uint32_t aux = load_u32(b.qs + 64 + 4 * ib);
    return {u, signs7x4(aux), _mm256_set1_epi16(static_cast<int16_t>(2 * (aux >> 28) + 1))};
  }
};

struct IQ3S {
  using Block = block_iq3_s;
  static constexpr float kFactor = 1.0f;
  static fp16_t d(const Block& b) { return b.d; }
  static Sub decode(const Block& b, int ib) {
    const uint8_t* q = b.qs + 8 * ib;
    const int h = b.qh[ib];
    const uint32_t* g = iq::kIQ3SGrid.data();
    auto at = [&](int k) { return static_cast<int>(g[q[k] | (((h >> k) & 1) << 8)]); };
    const __m256i u = _mm256_set_epi32(at(7), at(6), at(5), at(4), at(3), at(2), at(1), at(0));
    const int s = ib % 2 == 0 ? (b.scales[ib / 2] & 15) : (b.scales[ib / 2] >> 4);
    return {u, signs32(load_u32(b.signs + 4 * ib)), _mm256_set1_epi16(static_cast<int16_t>(2 * s + 1))};
  }
};

// code8 = sign(8, g) + delta bytes; u = |code8|, sgn = code8 (never 0).
inline Sub iq1_sub(__m256i g, __m256i delta, __m256i scale) {
  const __m256i code8 = _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), g), delta);
  return {_mm256_abs_epi8(code8), code8, scale};
}

struct IQ1S {
  using Block = block_iq1_s;
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) { return b.d; }
  static Sub decode(const Block& b, int ib) {
    const uint8_t* q = b.qs + 4 * ib;
    const int h = b.qh[ib];
    const __m256i g = grid4x64(iq::kIQ1SGrid.data(), q[0] | ((h << 8) & 0x700), q[1] | ((h << 5) & 0x700),
                               q[2] | ((h << 2) & 0x700), q[3] | ((h >> 1) & 0x700));
    const __m256i delta = _mm256_set1_epi8(static_cast<char>((h & 0x8000) ? -1 : 1));
    return iq1_sub(g, delta, _mm256_set1_epi16(static_cast<int16_t>(2 * ((h >> 12) & 7) + 1)));
  }
};

struct IQ1M {
  using Block = block_iq1_m;
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) {
    uint16_t sc[4];
    std::memcpy(sc, b.scales, 8);
    return static_cast<fp16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000));
  }
  static Sub decode(const Block& b, int ib) {
    const uint8_t* q = b.qs + 4 * ib;
    const int h0 = b.qh[2 * ib], h1 = b.qh[2 * ib + 1];
    const __m256i g = grid4x64(iq::kIQ1SGrid.data(), q[0] | ((h0 << 8) & 0x700), q[1] | ((h0 << 4) & 0x700),
                               q[2] | ((h1 << 8) & 0x700), q[3] | ((h1 << 4) & 0x700));
    auto dl = [](int bit) { return bit ? int64_t{-1} : int64_t{0x0101010101010101LL}; };
    const __m256i delta = _mm256_set_epi64x(dl(h1 & 0x80), dl(h1 & 0x08), dl(h0 & 0x80), dl(h0 & 0x08));
    uint16_t sc;
    std::memcpy(&sc, b.scales + 2 * (ib / 2), 2);
    const int s = sc >> (6 * (ib % 2));
    return iq1_sub(g, delta, halves16(2 * (s & 7) + 1, 2 * ((s >> 3) & 7) + 1));
  }
};

// The weight row against NX activation rows; row t's result has the bits of NX = 1.
template <typename T, int NX>
inline void dot_rows(int64_t n, float* s, int64_t s_stride, const void* vw, const void* vx, size_t x_stride) {
  const typename T::Block* w = static_cast<const typename T::Block*>(vw);
  const uint8_t* x = static_cast<const uint8_t*>(vx);
  float acc[NX];
  for (int t = 0; t < NX; ++t) acc[t] = 0.0f;
  for (int64_t b = 0; b < n / kQKK; ++b) {
    if constexpr (NX == 1) prefetch_block(w + b);
    __m256i isum[NX];
    for (int t = 0; t < NX; ++t) isum[t] = _mm256_setzero_si256();
    for (int ib = 0; ib < kQKK / 32; ++ib) {
      const Sub sub = T::decode(w[b], ib);
      for (int t = 0; t < NX; ++t) {
        const __m256i q8 = loadu(xblock(x, x_stride, t, b).qs + 32 * ib);
        const __m256i p = _mm256_maddubs_epi16(sub.u, _mm256_sign_epi8(q8, sub.sgn));
        isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(p, sub.scale));
      }
    }
    const float dw = f16(T::d(w[b]));
    for (int t = 0; t < NX; ++t) {
      const float d = dw * xblock(x, x_stride, t, b).d;
      const float term = static_cast<float>(hsum_epi32(isum[t])) * d;
      acc[t] += term;
    }
  }
  for (int t = 0; t < NX; ++t) s[t * s_stride] = acc[t] * T::kFactor;
}

template <typename T>
void dot_one(int64_t n, float* s, const void* w, const void* x) {
  dot_rows<T, 1>(n, s, 1, w, x, 0);
}

template <typename T>
void dot_multi(int64_t n, float* s, int64_t s_stride, const void* w, const void* x, size_t x_stride, int nx) {
  switch (nx) {
    case 1: dot_rows<T, 1>(n, s, s_stride, w, x, x_stride); break;
    case 2: dot_rows<T, 2>(n, s, s_stride, w, x, x_stride); break;
    case 3: dot_rows<T, 3>(n, s, s_stride, w, x, x_stride); break;
    default: dot_rows<T, 4>(n, s, s_stride, w, x, x_stride); break;
  }
}

}  // namespace

void install_iquant_kernels(KernelTable& t) {
  auto set = [&t](GgmlType type, VecDotFn one, VecDotMultiFn multi) {
    t.types[static_cast<uint32_t>(type)].vec_dot = one;
    t.types[static_cast<uint32_t>(type)].vec_dot_multi = multi;
  };
  using G = GgmlType;
  set(G::IQ2_XXS, dot_one<IQ2XXS>, dot_multi<IQ2XXS>);
  set(G::IQ2_XS, dot_one<IQ2XS>, dot_multi<IQ2XS>);
  set(G::IQ2_S, dot_one<IQ2S>, dot_multi<IQ2S>);
  set(G::IQ3_XXS, dot_one<IQ3XXS>, dot_multi<IQ3XXS>);
  set(G::IQ3_S, dot_one<IQ3S>, dot_multi<IQ3S>);
  set(G::IQ1_S, dot_one<IQ1S>, dot_multi<IQ1S>);
  set(G::IQ1_M, dot_one<IQ1M>, dot_multi<IQ1M>);
}

}  // namespace les::kernels::avx2
