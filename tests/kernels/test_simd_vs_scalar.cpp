// Every SIMD tier this machine runs against the scalar reference, on the same
// quantised bytes.
//
// Float bound. Both the reference and a SIMD kernel evaluate
//   s = sum_b ( float(isum_b) * (d_w * d_x)  [- float(msum_b) * (dmin_w * d_x)]  [+ m_w * s_x] )
// (plain types: sum_i a_i b_i) with exact integer parts and differently ordered
// float sums (FMA, 8/16 lane partial sums). For m <= n accumulated terms each
// result is within (m + 3) * eps * A of the exact value, where A is the sum of
// the absolute values of every product that enters the sum (abs_magnitude()
// below; it counts the scale and min parts separately, because they can
// cancel) and the 3 covers the scale products. Hence
//   |s - s_ref| <= 2 (n + 3) eps A <= c * n * eps * A   with c = 4 (n >= 3),
// plus n * FLT_MIN for results that pass through the subnormal range (tiny
// scales), where the relative bound does not hold.
//
// Integer parts are checked bit-exactly by setting the float scales to 1 (and
// the other scale or min to 0): the kernel's result is then float(isum) (or
// -float(msum)), exact for |isum| < 2^24, and must equal the reference's
// KQuantBlockSums / code-by-code integer sum.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernel_tiers.h"
#include "kernels/block_elements.h"
#include "kernels/kernels.h"
#include "kernels/ref.h"
#include "random_blocks.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::kernels;
using les::test::ScaleMode;

namespace {

constexpr double kC = 4.0;  // the constant c of the bound above

// Sum of |every product entering the dot| for one weight row and one activation row.
template <typename WB, typename XB, typename CodeFn>
double abs_blocks(int64_t n, const void* vw, const void* vx, CodeFn code, int block, bool has_min) {
  const WB* w = static_cast<const WB*>(vw);
  const XB* x = static_cast<const XB*>(vx);
  double a = 0;
  for (int64_t b = 0; b < n / block; ++b) {
    double isum = 0;
    for (int e = 0; e < block; ++e) isum += std::fabs(double(code(w[b], e)) * x[b].qs[e]);
    a += isum * std::fabs(double(fp16_to_fp32(w[b].d)) * fp16_to_fp32(x[b].d));
    if constexpr (requires { w[b].m; x[b].s; }) {
      if (has_min) a += std::fabs(double(fp16_to_fp32(w[b].m)) * fp16_to_fp32(x[b].s));
    }
  }
  return a;
}

template <typename WB, typename CodeFn, typename ScaleFn, typename MinFn>
double abs_kquant(int64_t n, const void* vw, const void* vx, CodeFn code, int sub, ScaleFn scale, MinFn min) {
  const WB* w = static_cast<const WB*>(vw);
  const block_q8_K* x = static_cast<const block_q8_K*>(vx);
  double a = 0;
  for (int64_t b = 0; b < n / kQKK; ++b) {
    double iabs = 0, mabs = 0;
    for (int j = 0; j < kQKK / sub; ++j) {
      double s = 0, bs = 0;
      for (int e = sub * j; e < sub * j + sub; ++e) {
        s += std::fabs(double(code(w[b], e)) * x[b].qs[e]);
        bs += x[b].qs[e];
      }
      iabs += std::fabs(double(scale(w[b], j))) * s;
      mabs += std::fabs(double(min(w[b], j)) * bs);
    }
    a += iabs * std::fabs(double(x[b].d) * fp16_to_fp32(w[b].d));
    if constexpr (requires { w[b].dmin; }) a += mabs * std::fabs(double(x[b].d) * fp16_to_fp32(w[b].dmin));
  }
  return a;
}

int k4_sc(const uint8_t* s, int j) { int sc, m; blocks::k4_scale_min(s, j, sc, m); return sc; }
int k4_m(const uint8_t* s, int j) { int sc, m; blocks::k4_scale_min(s, j, sc, m); return m; }

// Formats without a min part whose dot is float(integer block sum) times a
// product of scales (IQ4_XS, MXFP4, the i-quants): each float term is at most
// sum |w_i x_i| over its block of the dequantised operands (up to their own
// rounding, which the constant c covers), so that sum bounds A.
double abs_dequantised(GgmlType t, int64_t n, const void* w, const void* x) {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  std::vector<float> wd(static_cast<size_t>(n)), xd(static_cast<size_t>(n));
  scalar.of(t).dequantize_row(w, wd.data(), n);
  scalar.of(scalar.of(t).vec_dot_type).dequantize_row(x, xd.data(), n);
  double a = 0;
  for (int64_t i = 0; i < n; ++i) a += std::fabs(double(wd[i]) * xd[i]);
  return a;
}

double abs_magnitude(GgmlType t, int64_t n, const void* w, const void* x) {
  using namespace les::blocks;
  auto zero = [](const auto&, int) { return 0; };
  switch (t) {
    case GgmlType::F32: {
      double a = 0;
      for (int64_t i = 0; i < n; ++i) a += std::fabs(double(static_cast<const float*>(w)[i]) * static_cast<const float*>(x)[i]);
      return a;
    }
    case GgmlType::F16: {
      double a = 0;
      for (int64_t i = 0; i < n; ++i)
        a += std::fabs(double(fp16_to_fp32(static_cast<const fp16_t*>(w)[i])) * fp16_to_fp32(static_cast<const fp16_t*>(x)[i]));
      return a;
    }
    case GgmlType::BF16: {
      double a = 0;
      for (int64_t i = 0; i < n; ++i)
        a += std::fabs(double(bf16_to_fp32(static_cast<const bf16_t*>(w)[i])) * bf16_to_fp32(static_cast<const bf16_t*>(x)[i]));
      return a;
    }
    case GgmlType::Q4_0: return abs_blocks<block_q4_0, block_q8_0>(n, w, x, q4_0_code, 32, false);
    case GgmlType::Q5_0: return abs_blocks<block_q5_0, block_q8_0>(n, w, x, q5_0_code, 32, false);
    case GgmlType::Q8_0: return abs_blocks<block_q8_0, block_q8_0>(n, w, x, [](const block_q8_0& b, int e) { return int{b.qs[e]}; }, 32, false);
    case GgmlType::IQ4_NL: return abs_blocks<block_iq4_nl, block_q8_0>(n, w, x, iq4_nl_code, 32, false);
    case GgmlType::Q4_1: return abs_blocks<block_q4_1, block_q8_1>(n, w, x, q4_1_code, 32, true);
    case GgmlType::Q5_1: return abs_blocks<block_q5_1, block_q8_1>(n, w, x, q5_1_code, 32, true);
    case GgmlType::Q2_K: return abs_kquant<block_q2_K>(n, w, x, q2_K_code, 16, q2_K_scale, q2_K_min);
    case GgmlType::Q3_K: return abs_kquant<block_q3_K>(n, w, x, q3_K_code, 16, q3_K_scale, zero);
    case GgmlType::Q4_K:
      return abs_kquant<block_q4_K>(n, w, x, q4_K_code, 32, [](const block_q4_K& b, int j) { return k4_sc(b.scales, j); },
                                    [](const block_q4_K& b, int j) { return k4_m(b.scales, j); });
    case GgmlType::Q5_K:
      return abs_kquant<block_q5_K>(n, w, x, q5_K_code, 32, [](const block_q5_K& b, int j) { return k4_sc(b.scales, j); },
                                    [](const block_q5_K& b, int j) { return k4_m(b.scales, j); });
    case GgmlType::Q6_K: return abs_kquant<block_q6_K>(n, w, x, q6_K_code, 16, q6_K_scale, zero);
    default: return abs_dequantised(t, n, w, x);
  }
}

double dot_bound(int64_t n, double A) {
  return kC * double(n) * double(FLT_EPSILON) * A + double(n) * double(FLT_MIN);
}

// Compares one dot product of `table` with the scalar reference on the same bytes.
void check_dot(const KernelTable& table, GgmlType t, int64_t n, const void* w, const void* x, const char* what) {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  float s = 0, s_ref = 0;
  table.of(t).vec_dot(n, &s, w, x);
  scalar.of(t).vec_dot(n, &s_ref, w, x);
  const double A = abs_magnitude(t, n, w, x);
  INFO("tier " << kernel_tier_name(table.tier) << " type " << ggml_type_name(t) << " n " << n << " " << what
               << ": s=" << s << " s_ref=" << s_ref << " A=" << A);
  if (std::isinf(s_ref) || std::isnan(s_ref)) {
    CHECK(std::isnan(s) == std::isnan(s_ref));
    return;
  }
  CHECK(std::fabs(double(s) - double(s_ref)) <= dot_bound(n, A));
}

}  // namespace

TEST_CASE("SIMD dot products match the scalar reference within the derived bound", "[kernels][simd]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  const auto tables = les::test::simd_tables();
  if (tables.empty()) les::test::mark_skipped("no SIMD tier runs on this machine");
  std::mt19937 rng(1234);
  for (const KernelTable* table : tables) {
    for (GgmlType t : les::test::dot_weight_types()) {
      const int64_t bs = std::max<int64_t>(ggml_type_traits(t).block_size,
                                           ggml_type_traits(scalar.of(t).vec_dot_type).block_size);
      const int64_t block = std::max<int64_t>(bs, 32);  // plain types: multiples of 32 plus odd tails below
      for (int64_t nblocks : {1, 2, 3, 5, 8}) {
        for (ScaleMode mode : {ScaleMode::normal, ScaleMode::zero, ScaleMode::huge, ScaleMode::tiny}) {
          for (float mag : {1.0f, 0.0f, 1e4f}) {
            const int64_t n = nblocks * block;
            auto w = les::test::random_weights(scalar, t, 1, n, mode, rng);
            auto x = les::test::random_activations(scalar, t, 1, n, mag, rng);
            check_dot(*table, t, n, w.data(), x.data(), "random");
          }
        }
      }
      if (bs == 1) {  // plain types take any length: lengths that are not a multiple of the vector width
        for (int64_t n : {1, 3, 7, 15, 17, 31, 33, 63, 65, 100}) {
          auto w = les::test::random_weights(scalar, t, 1, n, ScaleMode::normal, rng);
          auto x = les::test::random_activations(scalar, t, 1, n, 1.0f, rng);
          check_dot(*table, t, n, w.data(), x.data(), "odd length");
        }
      }
    }
  }
}

TEST_CASE("SIMD dot products that keep the reference's float order give its bits", "[kernels][simd]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  const auto tables = les::test::simd_tables();
  if (tables.empty()) les::test::mark_skipped("no SIMD tier runs on this machine");
  std::mt19937 rng(4321);
  for (const KernelTable* table : tables) {
    for (GgmlType t : les::test::ordered_dot_types()) {
      const int64_t bs = ggml_type_traits(t).block_size;
      for (int64_t nblocks : {1, 2, 3, 8, 17}) {
        for (ScaleMode mode : {ScaleMode::normal, ScaleMode::zero, ScaleMode::huge, ScaleMode::tiny}) {
          for (float mag : {1.0f, 0.0f, 1e4f, 1e-30f}) {
            const int64_t n = nblocks * bs;
            auto w = les::test::random_weights(scalar, t, 1, n, mode, rng);
            auto x = les::test::random_activations(scalar, t, 1, n, mag, rng);
            float s = 0, s_ref = 0;
            table->of(t).vec_dot(n, &s, w.data(), x.data());
            scalar.of(t).vec_dot(n, &s_ref, w.data(), x.data());
            INFO("tier " << kernel_tier_name(table->tier) << " type " << ggml_type_name(t) << " n " << n << " s=" << s
                         << " s_ref=" << s_ref);
            CHECK(std::memcmp(&s, &s_ref, sizeof(float)) == 0);
          }
        }
      }
    }
  }
}

// SIMD kernels need the blocks' natural alignment (alignof <= 4: F16 scale
// fields, Q8_K's float d; GGUF tensor data is 32-aligned and LES's own
// buffers are aligned) but no SIMD-width alignment: offsets 4, 12 and 36 are
// misaligned for every 16-, 32- and 64-byte load. (The scalar references
// accept any byte address: test_ref_misaligned.cpp.)
TEST_CASE("SIMD dot products give identical bits from SIMD-misaligned buffers", "[kernels][simd]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  std::mt19937 rng(99);
  for (const KernelTable* table : les::test::simd_tables()) {
    for (GgmlType t : les::test::dot_weight_types()) {
      const int64_t n = 1024;
      auto w = les::test::random_weights(scalar, t, 1, n, ScaleMode::normal, rng);
      auto x = les::test::random_activations(scalar, t, 1, n, 1.0f, rng);
      std::vector<uint8_t> wbuf(w.size() + 64), xbuf(x.size() + 64);
      float s_aligned = 0;
      table->of(t).vec_dot(n, &s_aligned, w.data(), x.data());
      for (size_t off : {4, 12, 36}) {
        std::memcpy(wbuf.data() + off, w.data(), w.size());
        std::memcpy(xbuf.data() + off + 4, x.data(), x.size());
        float s = 0;
        table->of(t).vec_dot(n, &s, wbuf.data() + off, xbuf.data() + off + 4);
        INFO("tier " << kernel_tier_name(table->tier) << " type " << ggml_type_name(t) << " offset " << off);
        CHECK(std::memcmp(&s, &s_aligned, 4) == 0);
      }
    }
  }
}

namespace {

// Runs vec_dot on one block with all float scales 1 and returns the result,
// which is then float(integer sum) exactly.
template <typename WB>
float unit_scale_dot(const KernelTable& table, GgmlType t, WB w, const std::vector<uint8_t>& x) {
  float s = 0;
  table.of(t).vec_dot(ggml_type_traits(t).block_size, &s, &w, x.data());
  return s;
}

}  // namespace

TEST_CASE("SIMD integer block sums are bit-exact", "[kernels][simd]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  std::mt19937 rng(7);
  const fp16_t one = fp32_to_fp16(1.0f);
  for (const KernelTable* table : les::test::simd_tables()) {
    INFO("tier " << kernel_tier_name(table->tier));
    for (int rep = 0; rep < 20; ++rep) {
      // Activations with d = 1 exactly; codes from the quantiser (|q| <= 127).
      auto xk = les::test::random_activations(scalar, GgmlType::Q4_K, 1, kQKK, 1.0f, rng);
      reinterpret_cast<block_q8_K*>(xk.data())->d = 1.0f;
      const block_q8_K& x8k = *reinterpret_cast<const block_q8_K*>(xk.data());

      auto kcheck = [&](GgmlType t, auto wblock, auto sums_fn, bool has_min) {
        using WB = decltype(wblock);
        WB w = wblock;
        const KQuantBlockSums ref = sums_fn(w, x8k);
        REQUIRE(std::abs(ref.isum) < (1 << 24));
        REQUIRE(std::abs(ref.msum) < (1 << 24));
        w.d = one;
        if constexpr (requires { w.dmin; }) w.dmin = 0;
        INFO(ggml_type_name(t) << " isum " << ref.isum);
        CHECK(unit_scale_dot(*table, t, w, xk) == static_cast<float>(ref.isum));
        if (has_min) {
          if constexpr (requires { w.dmin; }) {
            w.d = 0;
            w.dmin = one;
            INFO(ggml_type_name(t) << " msum " << ref.msum);
            CHECK(unit_scale_dot(*table, t, w, xk) == -static_cast<float>(ref.msum));
          }
        }
      };
      auto rnd_block = [&](GgmlType t, auto tag) {
        using WB = decltype(tag);
        auto bytes = les::test::random_weights(scalar, t, 1, kQKK, ScaleMode::normal, rng);
        WB b;
        std::memcpy(&b, bytes.data(), sizeof(WB));
        return b;
      };
      kcheck(GgmlType::Q2_K, rnd_block(GgmlType::Q2_K, block_q2_K{}), block_sums_q2_K_q8_K_ref, true);
      kcheck(GgmlType::Q3_K, rnd_block(GgmlType::Q3_K, block_q3_K{}), block_sums_q3_K_q8_K_ref, false);
      kcheck(GgmlType::Q4_K, rnd_block(GgmlType::Q4_K, block_q4_K{}), block_sums_q4_K_q8_K_ref, true);
      kcheck(GgmlType::Q5_K, rnd_block(GgmlType::Q5_K, block_q5_K{}), block_sums_q5_K_q8_K_ref, true);
      kcheck(GgmlType::Q6_K, rnd_block(GgmlType::Q6_K, block_q6_K{}), block_sums_q6_K_q8_K_ref, false);

      // 32-blocks against Q8_0 / Q8_1 with unit scales (and zero min).
      auto x80 = les::test::random_activations(scalar, GgmlType::Q8_0, 1, 32, 1.0f, rng);
      auto* xb = reinterpret_cast<block_q8_0*>(x80.data());
      xb->d = one;
      auto x81 = les::test::random_activations(scalar, GgmlType::Q4_1, 1, 32, 1.0f, rng);
      auto* xb1 = reinterpret_cast<block_q8_1*>(x81.data());
      xb1->d = one;
      auto check32 = [&](GgmlType t, auto tag, auto code, const std::vector<uint8_t>& x, const int8_t* q8) {
        using WB = decltype(tag);
        auto bytes = les::test::random_weights(scalar, t, 1, 32, ScaleMode::normal, rng);
        WB w;
        std::memcpy(&w, bytes.data(), sizeof(WB));
        w.d = one;
        if constexpr (requires { w.m; }) w.m = 0;
        int32_t isum = 0;
        for (int e = 0; e < 32; ++e) isum += code(w, e) * q8[e];
        INFO(ggml_type_name(t) << " isum " << isum);
        CHECK(unit_scale_dot(*table, t, w, x) == static_cast<float>(isum));
      };
      using namespace les::blocks;
      check32(GgmlType::Q4_0, block_q4_0{}, q4_0_code, x80, xb->qs);
      check32(GgmlType::Q5_0, block_q5_0{}, q5_0_code, x80, xb->qs);
      check32(GgmlType::Q8_0, block_q8_0{}, [](const block_q8_0& b, int e) { return int{b.qs[e]}; }, x80, xb->qs);
      check32(GgmlType::IQ4_NL, block_iq4_nl{}, iq4_nl_code, x80, xb->qs);
      check32(GgmlType::Q4_1, block_q4_1{}, q4_1_code, x81, xb1->qs);
      check32(GgmlType::Q5_1, block_q5_1{}, q5_1_code, x81, xb1->qs);
    }
  }
}

namespace {

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("Every tier reproduces ggml's matvec fixtures (quant/matvec_*.y.f32)", "[kernels][simd][fixtures]") {
  const struct {
    const char* name;
    GgmlType type;
  } cases[] = {{"q4_0", GgmlType::Q4_0}, {"q8_0", GgmlType::Q8_0}, {"q3_K", GgmlType::Q3_K},
               {"q4_K", GgmlType::Q4_K}, {"q5_K", GgmlType::Q5_K}, {"q6_K", GgmlType::Q6_K}};
  const int64_t rows = 64, cols = 1024;
  for (const auto& c : cases) {
    const std::string base = std::string("quant/matvec_") + c.name;
    LES_REQUIRE_FIXTURE(wpath, base + ".w.qbytes");
    LES_REQUIRE_FIXTURE(xpath, base + ".x_vecdot.qbytes");
    LES_REQUIRE_FIXTURE(ypath, base + ".y.f32");
    const auto w = read_file(wpath);
    const auto x = read_file(xpath);
    const auto yb = read_file(ypath);
    const size_t rb = *ggml_row_bytes(c.type, cols);
    REQUIRE(w.size() == rb * rows);
    REQUIRE(yb.size() == 4 * rows);
    std::vector<float> y_ggml(rows);
    std::memcpy(y_ggml.data(), yb.data(), yb.size());
    for (int i = 0; i < kKernelTierCount; ++i) {
      const KernelTable* table = kernel_table(static_cast<KernelTier>(i));
      if (!table) continue;
      std::vector<float> y(rows);
      for (int64_t r = 0; r < rows; ++r) table->of(c.type).vec_dot(cols, &y[r], w.data() + rb * r, x.data());
      for (int64_t r = 0; r < rows; ++r) {
        const double A = abs_magnitude(c.type, cols, w.data() + rb * r, x.data());
        INFO("tier " << kernel_tier_name(table->tier) << " " << c.name << " row " << r << " y=" << y[r]
                     << " ggml=" << y_ggml[r] << " A=" << A);
        CHECK(std::fabs(double(y[r]) - y_ggml[r]) <= dot_bound(cols, A));
      }
    }
  }
}

TEST_CASE("Q8_0 x Q8_0: every tier, the scalar reference included, gives ggml's matvec bits", "[kernels][fixtures]") {
  // Q8_0 models re-quantise every matmul input, so one ulp can flip a code:
  // the scalar reference and the x86 tiers follow ggml's x86 float order
  // exactly (8 lanes, FMA, hsum). The NEON tier keeps its own order (held to
  // the derived bound above).
  LES_REQUIRE_FIXTURE(wpath, "quant/matvec_q8_0.w.qbytes");
  LES_REQUIRE_FIXTURE(xpath, "quant/matvec_q8_0.x_vecdot.qbytes");
  LES_REQUIRE_FIXTURE(ypath, "quant/matvec_q8_0.y.f32");
  const auto w = read_file(wpath);
  const auto x = read_file(xpath);
  const auto yb = read_file(ypath);
  const int64_t rows = 64, cols = 1024;
  const size_t rb = *ggml_row_bytes(GgmlType::Q8_0, cols);
  REQUIRE(w.size() == rb * rows);
  REQUIRE(yb.size() == 4 * rows);
  for (int i = 0; i < kKernelTierCount; ++i) {
    const KernelTable* table = kernel_table(static_cast<KernelTier>(i));
    if (!table || table->tier == KernelTier::neon) continue;
    for (int64_t r = 0; r < rows; ++r) {
      float y = 0, y_ggml = 0;
      table->of(GgmlType::Q8_0).vec_dot(cols, &y, w.data() + rb * r, x.data());
      std::memcpy(&y_ggml, yb.data() + 4 * r, 4);
      INFO("tier " << kernel_tier_name(table->tier) << " row " << r);
      CHECK(y == y_ggml);
    }
  }
}

TEST_CASE("SIMD activation quantisers are byte-identical to the scalar reference", "[kernels][simd][quantize]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  std::mt19937 rng(2024);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t n = 1024;
  // Input patterns: random at several magnitudes, all zero, exact rounding
  // ties, +-max ties, NaN and inf, a single non-zero, subnormals.
  std::vector<std::vector<float>> inputs;
  for (float mag : {1.0f, 1e-3f, 1e5f}) {
    std::vector<float> v(n);
    for (auto& e : v) e = nd(rng) * mag;
    inputs.push_back(v);
  }
  inputs.emplace_back(n, 0.0f);
  {
    std::vector<float> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = (i % 32 == 0) ? 127.0f : static_cast<float>(i % 7) - 3.5f;  // x * 1 = k.5
    inputs.push_back(v);
  }
  {
    std::vector<float> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = (i % 5 == 0) ? -2.0f : (i % 5 == 3 ? 2.0f : 0.5f);  // +-max ties
    inputs.push_back(v);
  }
  {
    std::vector<float> v(n);
    for (auto& e : v) e = nd(rng);
    v[3] = nan;
    v[40] = inf;
    v[300] = -inf;
    v[600] = nan;
    for (int i = 512; i < 768; ++i) v[i] = nan;  // a whole Q8_K block of NaN
    inputs.push_back(v);
  }
  {
    std::vector<float> v(n, 0.0f);
    v[77] = -1e-40f;  // subnormal
    v[500] = 3.0f;
    inputs.push_back(v);
  }
  for (const KernelTable* table : les::test::simd_tables()) {
    for (GgmlType act : {GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q8_K, GgmlType::F16, GgmlType::BF16, GgmlType::F32}) {
      const size_t rb = *ggml_row_bytes(act, n);
      for (size_t k = 0; k < inputs.size(); ++k) {
        std::vector<uint8_t> a(rb + 4, 0xAB), b(rb + 4, 0xAB);
        scalar.of(act).quantize_row(inputs[k].data(), a.data(), n);
        // SIMD-misaligned destination and source (blocks keep their natural alignment, see above).
        std::vector<float> src(n + 1);
        std::memcpy(src.data() + 1, inputs[k].data(), n * 4);
        table->of(act).quantize_row(src.data() + 1, b.data() + 4, n);
        INFO("tier " << kernel_tier_name(table->tier) << " type " << ggml_type_name(act) << " input " << k);
        CHECK(std::memcmp(a.data(), b.data() + 4, rb) == 0);
      }
    }
  }
}
