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
#include "kernels/x86/prefetch.h"

namespace les::kernels::avx2 {
namespace {

using iq::kSignMultipliers;

using x86::prefetch_ahead;  // the decode matvec's prefetch (x86/prefetch.h)

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

// int16 lanes 0..7: 2 s + 1 for the low nibbles of the 8 bytes at p, lanes
// 8..15: for their high nibbles (IQ2_XS / IQ2_S: the scales of the first and
// second half of each sub-block). Built once per block.
inline __m256i nibble_scales16(const uint8_t* p) {
  const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  const __m128i lo = _mm_and_si128(v, _mm_set1_epi8(0x0F));
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(0x0F));
  const __m256i w = _mm256_set_m128i(_mm_cvtepu8_epi16(hi), _mm_cvtepu8_epi16(lo));
  return _mm256_add_epi16(_mm256_add_epi16(w, w), _mm256_set1_epi16(1));
}

// pshufb index broadcasting int16 word k of each 128-bit lane to the whole lane.
inline __m256i word_bcast(int k) { return _mm256_set1_epi16(static_cast<int16_t>((2 * k) | ((2 * k + 1) << 8))); }

struct NoPre {};

struct IQ2XXS {
  using Block = block_iq2_xxs;
  using Pre = NoPre;
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) { return b.d; }
  static Pre prepare(const Block&) { return {}; }
  static Sub decode(const Block& b, int ib, const Pre&) {
    const uint8_t* q = reinterpret_cast<const uint8_t*>(b.qs) + 8 * ib;
    const uint32_t aux = load_u32(q + 4);
    const int ls = 2 * static_cast<int>(aux >> 28) + 1;
    return {grid4x64(iq::kIQ2XXSGrid.data(), q[0], q[1], q[2], q[3]), signs7x4(aux), _mm256_set1_epi16(static_cast<int16_t>(ls))};
  }
};

// IQ2_XS: the four 16-bit words of a sub-block read as one uint64 (index in
// bits 0..8 of each word, 7 sign bits in 9..15); scales prepared per block.
struct IQ2XS {
  using Block = block_iq2_xs;
  struct Pre {
    __m256i sc;
  };
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) { return b.d; }
  static Pre prepare(const Block& b) { return {nibble_scales16(b.scales)}; }
  static Sub decode(const Block& b, int ib, const Pre& pre) {
    uint64_t q;
    std::memcpy(&q, b.qs + 4 * ib, 8);
    const uint64_t* g = iq::kIQ2XSGrid.data();
    const auto& sm = kSignMultipliers;
    const __m256i u = _mm256_set_epi64x(static_cast<int64_t>(g[(q >> 48) & 511]), static_cast<int64_t>(g[(q >> 32) & 511]),
                                        static_cast<int64_t>(g[(q >> 16) & 511]), static_cast<int64_t>(g[q & 511]));
    const __m256i sg = _mm256_set_epi64x(static_cast<int64_t>(sm[q >> 57]), static_cast<int64_t>(sm[(q >> 41) & 127]),
                                         static_cast<int64_t>(sm[(q >> 25) & 127]), static_cast<int64_t>(sm[(q >> 9) & 127]));
    return {u, sg, _mm256_shuffle_epi8(pre.sc, word_bcast(ib))};
  }
};

struct IQ2S {
  using Block = block_iq2_s;
  struct Pre {
    __m256i sc;
  };
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) { return b.d; }
  static Pre prepare(const Block& b) { return {nibble_scales16(b.scales)}; }
  static Sub decode(const Block& b, int ib, const Pre& pre) {
    const uint8_t* qs = b.qs + 4 * ib;
    const int h = b.qh[ib];
    const __m256i u = grid4x64(iq::kIQ2SGrid.data(), qs[0] | ((h << 8) & 0x300), qs[1] | ((h << 6) & 0x300),
                               qs[2] | ((h << 4) & 0x300), qs[3] | ((h << 2) & 0x300));
    return {u, signs32(load_u32(b.qs + 32 + 4 * ib)), _mm256_shuffle_epi8(pre.sc, word_bcast(ib))};
  }
};

inline __m256i grid8x32(const uint32_t* g, const int* i) {
  return _mm256_set_epi32(static_cast<int>(g[i[7]]), static_cast<int>(g[i[6]]), static_cast<int>(g[i[5]]),
                          static_cast<int>(g[i[4]]), static_cast<int>(g[i[3]]), static_cast<int>(g[i[2]]),
                          static_cast<int>(g[i[1]]), static_cast<int>(g[i[0]]));
}

struct IQ3XXS {
  using Block = block_iq3_xxs;
  using Pre = NoPre;
  static constexpr float kFactor = 0.25f;
  static fp16_t d(const Block& b) { return b.d; }
  static Pre prepare(const Block&) { return {}; }
  static Sub decode(const Block& b, int ib, const Pre&) {
    const uint8_t* q = b.qs + 8 * ib;
    const int idx[8] = {q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]};
    const uint32_t aux = load_u32(b.qs + 64 + 4 * ib);
    return {grid8x32(iq::kIQ3XXSGrid.data(), idx), signs7x4(aux),
            _mm256_set1_epi16(static_cast<int16_t>(2 * (aux >> 28) + 1))};
  }
};

// IQ3_S: the 8 scales 2 s + 1 (sub-block order) as int16 words, in both lanes.
struct IQ3S {
  using Block = block_iq3_s;
  struct Pre {
    __m256i sc;
  };
  static constexpr float kFactor = 1.0f;
  static fp16_t d(const Block& b) { return b.d; }
  static Pre prepare(const Block& b) {
    const __m128i v = _mm_cvtsi32_si128(static_cast<int>(load_u32(b.scales)));
    const __m128i lo = _mm_and_si128(v, _mm_set1_epi8(0x0F));
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(0x0F));
    const __m128i w = _mm_cvtepu8_epi16(_mm_unpacklo_epi8(lo, hi));  // sub-blocks 0..7
    return {_mm256_broadcastsi128_si256(_mm_add_epi16(_mm_add_epi16(w, w), _mm_set1_epi16(1)))};
  }
  static Sub decode(const Block& b, int ib, const Pre& pre) {
    const uint8_t* q = b.qs + 8 * ib;
    const int h = b.qh[ib];
    int idx[8];
    for (int k = 0; k < 8; ++k) idx[k] = q[k] | (((h >> k) & 1) << 8);
    return {grid8x32(iq::kIQ3SGrid.data(), idx), signs32(load_u32(b.signs + 4 * ib)),
            _mm256_shuffle_epi8(pre.sc, word_bcast(ib))};
  }
};

// code8 = sign(8, g) + delta bytes; u = |code8|, sgn = code8 (never 0).
inline Sub iq1_sub(__m256i g, __m256i delta, __m256i scale) {
  const __m256i code8 = _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), g), delta);
  return {_mm256_abs_epi8(code8), code8, scale};
}

struct IQ1S {
  using Block = block_iq1_s;
  using Pre = NoPre;
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) { return b.d; }
  static Pre prepare(const Block&) { return {}; }
  static Sub decode(const Block& b, int ib, const Pre&) {
    const uint8_t* q = b.qs + 4 * ib;
    const int h = b.qh[ib];
    const __m256i g = grid4x64(iq::kIQ1SGrid.data(), q[0] | ((h << 8) & 0x700), q[1] | ((h << 5) & 0x700),
                               q[2] | ((h << 2) & 0x700), q[3] | ((h >> 1) & 0x700));
    const __m256i delta = _mm256_set1_epi8(static_cast<char>((h & 0x8000) ? -1 : 1));
    return iq1_sub(g, delta, _mm256_set1_epi16(static_cast<int16_t>(2 * ((h >> 12) & 7) + 1)));
  }
};

// IQ1_M's delta bytes of a sub-block's 4 groups from their 4 sign bits (bit l: group l negative).
struct alignas(32) DeltaTable {
  uint64_t v[16][4];
};
constexpr DeltaTable make_delta_table() {
  DeltaTable t{};
  for (int m = 0; m < 16; ++m)
    for (int l = 0; l < 4; ++l) t.v[m][l] = (m >> l) & 1 ? ~uint64_t{0} : uint64_t{0x0101010101010101ULL};
  return t;
}
constexpr DeltaTable kIQ1MDelta = make_delta_table();

// IQ1_M: the scales of both halves of every sub-block prepared per block
// (lanes 0..7: first halves, 8..15: second halves), as IQ2_XS.
struct IQ1M {
  using Block = block_iq1_m;
  struct Pre {
    __m256i sc;
  };
  static constexpr float kFactor = 0.125f;
  static fp16_t d(const Block& b) {
    uint16_t sc[4];
    std::memcpy(sc, b.scales, 8);
    return static_cast<fp16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000));
  }
  static Pre prepare(const Block& b) {
    uint64_t sc;
    std::memcpy(&sc, b.scales, 8);
    alignas(32) int16_t v[16];
    for (int ib = 0; ib < 8; ++ib) {
      const int s = static_cast<int>(sc >> (16 * (ib / 2) + 6 * (ib % 2)));
      v[ib] = static_cast<int16_t>(2 * (s & 7) + 1);
      v[8 + ib] = static_cast<int16_t>(2 * ((s >> 3) & 7) + 1);
    }
    return {_mm256_load_si256(reinterpret_cast<const __m256i*>(v))};
  }
  static Sub decode(const Block& b, int ib, const Pre& pre) {
    const uint8_t* q = b.qs + 4 * ib;
    const int h0 = b.qh[2 * ib], h1 = b.qh[2 * ib + 1];
    const __m256i g = grid4x64(iq::kIQ1SGrid.data(), q[0] | ((h0 << 8) & 0x700), q[1] | ((h0 << 4) & 0x700),
                               q[2] | ((h1 << 8) & 0x700), q[3] | ((h1 << 4) & 0x700));
    const int m = ((h0 >> 3) & 1) | ((h0 >> 6) & 2) | ((h1 >> 1) & 4) | ((h1 >> 4) & 8);
    const __m256i delta = _mm256_load_si256(reinterpret_cast<const __m256i*>(kIQ1MDelta.v[m]));
    return iq1_sub(g, delta, _mm256_shuffle_epi8(pre.sc, word_bcast(ib)));
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
    if constexpr (NX == 1) prefetch_ahead(w + b);
    __m256i isum[NX];
    for (int t = 0; t < NX; ++t) isum[t] = _mm256_setzero_si256();
    const typename T::Pre pre = T::prepare(w[b]);
    for (int ib = 0; ib < kQKK / 32; ++ib) {
      const Sub sub = T::decode(w[b], ib, pre);
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
