// Scalar reference kernels of the lattice i-quants (see ref_iquants.h for the
// exact arithmetic). Every float operation is its own statement or a plain
// product, so no compiler may contract it into an FMA.

#include "kernels/ref_iquants.h"

#include "kernels/iq_elements.h"
#include "kernels/unaligned.h"

namespace les::kernels {

using namespace les::blocks;

namespace {

// ---- per-type description: elements per scale, the integer scale 2 s + 1 of
// scale group g, the code of element e, and the float sub-block scale that
// ggml's dequantisation computes from d and s ----

struct IQ2XXS {
  using Block = block_iq2_xxs;
  static constexpr int kGroup = 32;
  static int s(const Block& b, int g) { return iq2_xxs_scale(b, g); }
  static int code(const Block& b, int e) { return iq2_xxs_code(b, e); }
};
struct IQ2XS {
  using Block = block_iq2_xs;
  static constexpr int kGroup = 16;
  static int s(const Block& b, int g) { return iq2_xs_scale(b, g / 2, g % 2); }
  static int code(const Block& b, int e) { return iq2_xs_code(b, e); }
};
struct IQ2S {
  using Block = block_iq2_s;
  static constexpr int kGroup = 16;
  static int s(const Block& b, int g) { return iq2_s_scale(b, g / 2, g % 2); }
  static int code(const Block& b, int e) { return iq2_s_code(b, e); }
};
struct IQ3XXS {
  using Block = block_iq3_xxs;
  static constexpr int kGroup = 32;
  static int s(const Block& b, int g) { return iq3_xxs_scale(b, g); }
  static int code(const Block& b, int e) { return iq3_xxs_code(b, e); }
};
struct IQ3S {
  using Block = block_iq3_s;
  static constexpr int kGroup = 32;
  static int s(const Block& b, int g) { return iq3_s_scale(b, g); }
  static int code(const Block& b, int e) { return iq3_s_code(b, e); }
};
struct IQ1S {
  using Block = block_iq1_s;
  static constexpr int kGroup = 32;
  static int s(const Block& b, int g) { return iq1_s_scale(b, g); }
  static int code(const Block& b, int e) { return iq1_s_code8(b, e); }
};
struct IQ1M {
  using Block = block_iq1_m;
  static constexpr int kGroup = 16;
  static int s(const Block& b, int g) { return iq1_m_scale(b, g / 2, g % 2); }
  static int code(const Block& b, int e) { return iq1_m_code8(b, e); }
};

template <typename T>
KQuantBlockSums lattice_sums(const typename T::Block& w, const block_q8_K& x) {
  KQuantBlockSums r;
  for (int g = 0; g < kQKK / T::kGroup; ++g) {
    int32_t sub = 0;
    for (int e = T::kGroup * g; e < T::kGroup * (g + 1); ++e) sub += T::code(w, e) * x.qs[e];
    r.isum += (2 * T::s(w, g) + 1) * sub;
  }
  return r;
}

template <typename T>
float lattice_dot(int64_t n, const void* vw, const void* vx, float factor) {
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const auto wb = load_unaligned<typename T::Block>(vw, b);
    const block_q8_K xb = load_unaligned<block_q8_K>(vx, b);
    const int32_t isum = lattice_sums<T>(wb, xb).isum;
    const float d = fp16_to_fp32(iq_block_d(wb)) * xb.d;
    const float term = static_cast<float>(isum) * d;
    acc += term;
  }
  return acc * factor;
}

// Dequantisation of the sign-and-magnitude formats: x = db(d, s) * code, with
// db as ggml computes it (DbFn), per scale group.
template <typename T, typename DbFn>
void lattice_dequant(const typename T::Block* x, float* y, int64_t n, DbFn db_of) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const auto blk = load_unaligned<typename T::Block>(x, b);
    const float d = fp16_to_fp32(iq_block_d(blk));
    for (int g = 0; g < kQKK / T::kGroup; ++g) {
      const float db = db_of(d, T::s(blk, g));
      for (int e = T::kGroup * g; e < T::kGroup * (g + 1); ++e)
        y[b * kQKK + e] = db * static_cast<float>(T::code(blk, e));
    }
  }
}

// (d * (0.5 + s)) * quarter_or_half: IQ2_* (0.25) and IQ3_XXS (0.5).
inline float db_half_offset(float d, int s, float factor) {
  const float m = 0.5f + static_cast<float>(s);
  const float dm = d * m;
  return dm * factor;
}

// IQ1: x = dl * (coordinate + delta); coordinate + delta = code8 / 8 exactly.
template <typename T>
void iq1_dequant(const typename T::Block* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const auto blk = load_unaligned<typename T::Block>(x, b);
    const float d = fp16_to_fp32(iq_block_d(blk));
    for (int g = 0; g < kQKK / T::kGroup; ++g) {
      const float dl = d * static_cast<float>(2 * T::s(blk, g) + 1);
      for (int e = T::kGroup * g; e < T::kGroup * (g + 1); ++e) {
        const float shifted = static_cast<float>(T::code(blk, e)) * 0.125f;  // exact
        y[b * kQKK + e] = dl * shifted;
      }
    }
  }
}

}  // namespace

fp16_t iq_block_d(const block_iq1_m& b) { return iq1_m_d(b); }

float iq_dot_factor(GgmlType t) noexcept {
  switch (t) {
    case GgmlType::IQ2_XXS:
    case GgmlType::IQ2_XS:
    case GgmlType::IQ2_S:
    case GgmlType::IQ1_S:
    case GgmlType::IQ1_M: return 0.125f;
    case GgmlType::IQ3_XXS: return 0.25f;
    case GgmlType::IQ3_S: return 1.0f;
    default: return 0.0f;
  }
}

// ---- dequantisation ----

void dequantize_row_iq2_xxs_ref(const block_iq2_xxs* x, float* y, int64_t n) {
  lattice_dequant<IQ2XXS>(x, y, n, [](float d, int s) { return db_half_offset(d, s, 0.25f); });
}
void dequantize_row_iq2_xs_ref(const block_iq2_xs* x, float* y, int64_t n) {
  lattice_dequant<IQ2XS>(x, y, n, [](float d, int s) { return db_half_offset(d, s, 0.25f); });
}
void dequantize_row_iq2_s_ref(const block_iq2_s* x, float* y, int64_t n) {
  lattice_dequant<IQ2S>(x, y, n, [](float d, int s) { return db_half_offset(d, s, 0.25f); });
}
void dequantize_row_iq3_xxs_ref(const block_iq3_xxs* x, float* y, int64_t n) {
  lattice_dequant<IQ3XXS>(x, y, n, [](float d, int s) { return db_half_offset(d, s, 0.5f); });
}
void dequantize_row_iq3_s_ref(const block_iq3_s* x, float* y, int64_t n) {
  lattice_dequant<IQ3S>(x, y, n, [](float d, int s) { return d * static_cast<float>(1 + 2 * s); });
}
void dequantize_row_iq1_s_ref(const block_iq1_s* x, float* y, int64_t n) { iq1_dequant<IQ1S>(x, y, n); }
void dequantize_row_iq1_m_ref(const block_iq1_m* x, float* y, int64_t n) { iq1_dequant<IQ1M>(x, y, n); }

// ---- integer block sums ----

KQuantBlockSums block_sums_iq2_xxs_q8_K_ref(const block_iq2_xxs& w, const block_q8_K& x) { return lattice_sums<IQ2XXS>(w, x); }
KQuantBlockSums block_sums_iq2_xs_q8_K_ref(const block_iq2_xs& w, const block_q8_K& x) { return lattice_sums<IQ2XS>(w, x); }
KQuantBlockSums block_sums_iq2_s_q8_K_ref(const block_iq2_s& w, const block_q8_K& x) { return lattice_sums<IQ2S>(w, x); }
KQuantBlockSums block_sums_iq3_xxs_q8_K_ref(const block_iq3_xxs& w, const block_q8_K& x) { return lattice_sums<IQ3XXS>(w, x); }
KQuantBlockSums block_sums_iq3_s_q8_K_ref(const block_iq3_s& w, const block_q8_K& x) { return lattice_sums<IQ3S>(w, x); }
KQuantBlockSums block_sums_iq1_s_q8_K_ref(const block_iq1_s& w, const block_q8_K& x) { return lattice_sums<IQ1S>(w, x); }
KQuantBlockSums block_sums_iq1_m_q8_K_ref(const block_iq1_m& w, const block_q8_K& x) { return lattice_sums<IQ1M>(w, x); }

// ---- dot products ----

void vec_dot_iq2_xxs_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = lattice_dot<IQ2XXS>(n, w, x, 0.125f);
}
void vec_dot_iq2_xs_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = lattice_dot<IQ2XS>(n, w, x, 0.125f);
}
void vec_dot_iq2_s_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = lattice_dot<IQ2S>(n, w, x, 0.125f);
}
void vec_dot_iq3_xxs_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = lattice_dot<IQ3XXS>(n, w, x, 0.25f);
}
void vec_dot_iq3_s_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = lattice_dot<IQ3S>(n, w, x, 1.0f);
}
void vec_dot_iq1_s_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = lattice_dot<IQ1S>(n, w, x, 0.125f);
}
void vec_dot_iq1_m_q8_K_ref(int64_t n, float* s, const void* w, const void* x) {
  *s = lattice_dot<IQ1M>(n, w, x, 0.125f);
}

}  // namespace les::kernels
