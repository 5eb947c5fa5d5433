// The NEON kernels (src/kernels/arm) against the scalar reference (ref.h) and
// the llama.cpp fixtures (shared/fixtures/quant), called directly so every
// kernel is checked whatever the dispatcher picks: the int8 kernels in both
// their baseline (SMULL/SADALP) and SDOT variants when the CPU has SDOT
// (qemu-aarch64 does). Runs only in aarch64 builds
// (scripts/test-aarch64.sh runs it under qemu-aarch64); elsewhere it reports
// itself skipped.
//
// What is exact and what has a tolerance (u = eps_f32 / 2):
// * Activation quantisers (Q8_0, Q8_1, Q8_K): byte-identical to the reference.
// * K-quant integer block sums (isum, msum): bit-identical to block_sums_*_ref,
//   and whole K-quant dot products bit-identical to vec_dot_*_ref (same float
//   operations in the same order).
// * 32-element formats: the integer block sums are exact, but the NEON kernel
//   scales four int32 partial sums per block and accumulates in four F32 lanes.
//   Both it and the reference are within (nb + 4) u S of the exact value of
//   the formula, S = sum_i |w_i x_i| (+ sum_b |m_b s_b| for Q4_1/Q5_1) over
//   the dequantised operands, so  tol = (nb + 4) eps_f32 S.  With unit scales
//   every intermediate is an integer below 2^24, so there they must be equal.
// * F32/F16/BF16: products exact (FMA), n/16 + 4 rounded additions per lane
//   path plus at most 15 for the tail and 1 for the reference's final rounding:
//   tol = (n / 16 + 20) eps_f32 S.
// * Fixture matvecs: ggml's x86 kernel and NEON each within (nb + 4) u S of the
//   exact value: tol = (nb + 4) eps_f32 S.
#include <catch2/catch.hpp>

#include "support/fixtures.h"

#if defined(__aarch64__)

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/arm/neon_kernels.h"
#include "kernels/ggml_type.h"
#include "kernels/ref.h"
#include "kernels/tiers.h"
#include "quant_fixture.h"

namespace {

using les::GgmlType;
using namespace les::kernels;

constexpr double kEpsF32 = std::numeric_limits<float>::epsilon();

const KernelTable& scalar_table() {
  static const KernelTable t = [] {
    KernelTable s;
    fill_scalar_table(s);
    return s;
  }();
  return t;
}

// The NEON table with the baseline (dotprod = false) or SDOT int8 kernels.
const KernelTable& neon_table(bool dotprod) {
  static const KernelTable tables[2] = {[] {
                                          KernelTable s;
                                          fill_scalar_table(s);
                                          fill_neon_table_variant(s, false);
                                          return s;
                                        }(),
                                        [] {
                                          KernelTable s;
                                          fill_scalar_table(s);
                                          fill_neon_table_variant(s, neon_dotprod_supported());
                                          return s;
                                        }()};
  return tables[dotprod ? 1 : 0];
}

// The int8 kernel variants this CPU runs: baseline always, SDOT when supported.
std::vector<bool> variants() {
  if (neon_dotprod_supported()) return {false, true};
  WARN("this CPU has no SDOT: only the baseline NEON int8 kernels are tested");
  return {false};
}

enum class Pattern { random, zeros, ones, unit_scale };

// Random block bytes (or all 0x00 / 0xFF) with sane F16 scale fields.
template <typename B>
std::vector<B> make_blocks(int64_t nb, std::mt19937& rng, Pattern p) {
  std::vector<B> blocks(nb);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (B& b : blocks) {
    auto* raw = reinterpret_cast<uint8_t*>(&b);
    for (size_t i = 0; i < sizeof(B); ++i) {
      raw[i] = p == Pattern::zeros ? 0 : p == Pattern::ones ? 0xFF : static_cast<uint8_t>(byte(rng));
    }
    const bool unit = p == Pattern::unit_scale;
    if constexpr (requires { b.d; }) b.d = les::fp32_to_fp16(unit ? 1.0f : 0.02f * u(rng));
    if constexpr (requires { b.dmin; }) b.dmin = les::fp32_to_fp16(unit ? 1.0f : 0.01f * std::fabs(u(rng)));
    if constexpr (requires { b.m; }) b.m = les::fp32_to_fp16(unit ? 1.0f : 0.5f * u(rng));
    if constexpr (requires { b.e; }) b.e = static_cast<uint8_t>(unit ? 128 : 118 + rng() % 8);  // E8M0: 128 is 1
  }
  return blocks;
}

// Activation bytes in format `xt`: int8 codes random in -127..127 (pattern
// random / unit_scale), all -127 (zeros) or all +127 (ones), with consistent
// Q8_K bsums; unit or random scales. With unit scales the Q8_1 s field is an
// integer small enough to be exact in F16, so every product stays exact.
std::vector<uint8_t> make_activation_blocks(GgmlType xt, int64_t n, std::mt19937& rng, Pattern p) {
  std::uniform_int_distribution<int> code(-127, 127);
  std::uniform_real_distribution<float> u(0.001f, 0.05f);
  const bool unit = p == Pattern::unit_scale;
  auto fill = [&](int8_t* qs, int count) {
    for (int i = 0; i < count; ++i) {
      qs[i] = static_cast<int8_t>(p == Pattern::ones ? 127 : p == Pattern::zeros ? -127 : code(rng));
    }
  };
  std::vector<uint8_t> bytes(*les::ggml_row_bytes(xt, n));
  if (xt == GgmlType::Q8_K) {
    auto* x = reinterpret_cast<les::block_q8_K*>(bytes.data());
    for (int64_t b = 0; b < n / les::kQKK; ++b) {
      fill(x[b].qs, les::kQKK);
      for (int g = 0; g < les::kQKK / 16; ++g) {
        int s = 0;
        for (int i = 0; i < 16; ++i) s += x[b].qs[16 * g + i];
        x[b].bsums[g] = static_cast<int16_t>(s);
      }
      x[b].d = unit ? 1.0f : u(rng);
    }
  } else if (xt == GgmlType::Q8_0) {
    auto* x = reinterpret_cast<les::block_q8_0*>(bytes.data());
    for (int64_t b = 0; b < n / 32; ++b) {
      fill(x[b].qs, 32);
      x[b].d = les::fp32_to_fp16(unit ? 1.0f : u(rng));
    }
  } else {
    REQUIRE(xt == GgmlType::Q8_1);
    auto* x = reinterpret_cast<les::block_q8_1*>(bytes.data());
    for (int64_t b = 0; b < n / 32; ++b) {
      fill(x[b].qs, 32);
      const float d = unit ? 1.0f : u(rng);
      int s = 0;
      for (int i = 0; i < 32; ++i) s += x[b].qs[i];
      x[b].d = les::fp32_to_fp16(d);
      x[b].s = les::fp32_to_fp16(unit ? static_cast<float>(s % 1024) : d * static_cast<float>(s));
    }
  }
  return bytes;
}

// S = sum_i |w_i x_i| over the dequantised operands (+ sum_b |m_b s_b| for the Q8_1 pairs).
double magnitude(GgmlType type, const void* w, const void* x, int64_t n) {
  const KernelTable& t = scalar_table();
  std::vector<float> wd(n), xd(n);
  t.of(type).dequantize_row(w, wd.data(), n);
  t.of(t.of(type).vec_dot_type).dequantize_row(x, xd.data(), n);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::fabs(static_cast<double>(wd[i]) * xd[i]);
  if (type == GgmlType::Q4_1 || type == GgmlType::Q5_1) {
    const auto* xb = static_cast<const les::block_q8_1*>(x);
    const auto* wb = static_cast<const uint8_t*>(w);
    const size_t wbytes = les::ggml_type_traits(type).block_bytes;
    for (int64_t b = 0; b < n / 32; ++b) {
      les::fp16_t m;  // m is the second F16 of both block_q4_1 and block_q5_1
      std::memcpy(&m, wb + b * wbytes + 2, 2);
      s += std::fabs(static_cast<double>(les::fp16_to_fp32(m)) * les::fp16_to_fp32(xb[b].s));
    }
  }
  return s;
}

// Copies bytes to an address `align` bytes past a 16-byte boundary: legal for
// data of that alignment (the blocks' own alignof, ref.h), misaligned for every
// vector load.
struct Misaligned {
  std::vector<uint8_t> storage;
  void* ptr;
  Misaligned(const std::vector<uint8_t>& bytes, size_t align) : storage(bytes.size() + 32) {
    auto addr = reinterpret_cast<uintptr_t>(storage.data());
    ptr = storage.data() + ((16 - addr % 16) % 16) + align;
    if (!bytes.empty()) std::memcpy(ptr, bytes.data(), bytes.size());
  }
};

template <typename B>
void check_vec_dot(GgmlType type) {
  const int64_t bs = les::ggml_type_traits(type).block_size;
  const GgmlType xt = scalar_table().of(type).vec_dot_type;
  const bool k_quant = xt == GgmlType::Q8_K;
  uint32_t seed = 77;
  for (int64_t n : {bs, 3 * bs, bs == 32 ? int64_t{1024} : int64_t{4096}}) {
    for (Pattern p : {Pattern::random, Pattern::random, Pattern::zeros, Pattern::ones, Pattern::unit_scale}) {
      std::mt19937 rng(seed++);
      const std::vector<B> blocks = make_blocks<B>(n / bs, rng, p);
      std::vector<uint8_t> wbytes(blocks.size() * sizeof(B));
      std::memcpy(wbytes.data(), blocks.data(), wbytes.size());
      const Misaligned w(wbytes, alignof(B));
      const Misaligned x(make_activation_blocks(xt, n, rng, p),
                         xt == GgmlType::Q8_K ? alignof(les::block_q8_K) : alignof(les::block_q8_0));

      float ref = std::nanf("");
      scalar_table().of(type).vec_dot(n, &ref, w.ptr, x.ptr);
      const double tol = static_cast<double>(n / bs + 4) * kEpsF32 * magnitude(type, w.ptr, x.ptr, n);
      for (bool dotprod : variants()) {
        float got = std::nanf("");
        neon_table(dotprod).of(type).vec_dot(n, &got, w.ptr, x.ptr);
        INFO(les::ggml_type_name(type) << (dotprod ? " sdot" : " baseline") << " n=" << n << " pattern "
                                       << static_cast<int>(p) << " ref " << ref << " neon " << got << " tol "
                                       << tol);
        if (k_quant || p == Pattern::unit_scale) {
          CHECK(les::test::f32_bits(got) == les::test::f32_bits(ref));
        } else {
          CHECK(std::fabs(static_cast<double>(got) - ref) <= tol);
        }
      }
    }
  }
}

template <typename B>
using BlockSumsFn = KQuantBlockSums (*)(const B&, const les::block_q8_K&);

template <typename B>
void check_block_sums(BlockSumsFn<B> baseline, BlockSumsFn<B> sdot, BlockSumsFn<B> ref) {
  // Weight bits random / all 0 / all 1 against activation codes random / all
  // -127 / all +127 (the extremes of the int8 products).
  uint32_t seed = 5;
  for (Pattern wp : {Pattern::random, Pattern::zeros, Pattern::ones}) {
    for (Pattern xp : {Pattern::random, Pattern::zeros, Pattern::ones}) {
      for (int rep = 0; rep < (wp == Pattern::random ? 20 : 2); ++rep) {
        std::mt19937 rng(seed++);
        const std::vector<B> w = make_blocks<B>(1, rng, wp);
        const std::vector<uint8_t> x = make_activation_blocks(GgmlType::Q8_K, les::kQKK, rng, xp);
        const auto& xb = *reinterpret_cast<const les::block_q8_K*>(x.data());
        const KQuantBlockSums r = ref(w[0], xb);
        for (bool dotprod : variants()) {
          const KQuantBlockSums a = (dotprod ? sdot : baseline)(w[0], xb);
          INFO((dotprod ? "sdot" : "baseline") << " weights " << static_cast<int>(wp) << " activations "
                                               << static_cast<int>(xp) << " rep " << rep);
          CHECK(a.isum == r.isum);
          CHECK(a.msum == r.msum);
        }
      }
    }
  }
}

// Rows that exercise the quantisers' corner cases (n a multiple of 256):
// * elements 0..31: amax 127, so the Q8_0 scale is exactly 1 and the values
//   +-(i + 0.5) are rounding ties; +127 comes before -127, a magnitude tie for
//   Q8_K whose first element (+127) gives iscale = -1, so ties there too;
// * the rest of the first 256: N(0,1); after that N(0,1) with x30 outliers;
// * elements 256..511 (when n >= 512): zero, an all-zero block for every format;
// * a +-500 magnitude tie in block 2 (positive first) and block 3 (negative first);
// * (n >= 4096) NaN, +inf and -inf in three more blocks, and a 32-block that is
//   zero but for one subnormal (127 / amax overflows to inf).
std::vector<float> quantiser_input(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = g(rng) * (i >= 256 && i % 61 == 3 ? 30.0f : 1.0f);
  for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i % 2 ? -(i + 0.5) : i + 0.5);
  x[1] = 127.0f;
  x[2] = -127.0f;
  if (n >= 512) std::fill(x.begin() + 256, x.begin() + 512, 0.0f);
  if (n >= 1024) {
    x[600] = 500.0f, x[601] = -500.0f;
    x[800] = -500.0f, x[900] = 500.0f;
  }
  if (n >= 4096) {
    x[1100] = std::numeric_limits<float>::quiet_NaN();
    x[1500] = std::numeric_limits<float>::infinity();
    x[2100] = -std::numeric_limits<float>::infinity();
    std::fill(x.begin() + 2976, x.begin() + 3008, 0.0f);
    x[3000] = -1e-40f;
  }
  return x;
}

template <typename Fn>
void check_quantiser(GgmlType xt, Fn neon_fn) {
  for (int64_t n : {int64_t{256}, int64_t{1024}, int64_t{4096}}) {
    const std::vector<float> x = quantiser_input(n, static_cast<uint32_t>(n));
    std::vector<uint8_t> ref(*les::ggml_row_bytes(xt, n)), got(ref.size(), 0xAB);
    scalar_table().of(xt).quantize_row(x.data(), ref.data(), n);
    neon_fn(x.data(), got.data(), n);
    INFO(les::ggml_type_name(xt) << " n=" << n);
    CHECK(got == ref);
  }
}

template <typename T, typename Convert>
void check_float_dot(GgmlType type, Convert convert) {
  for (int64_t n : {0, 1, 15, 16, 17, 33, 1000, 1027}) {
    std::mt19937 rng(static_cast<uint32_t>(n) + 3);
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::vector<uint8_t> wb(n * sizeof(T)), xb(n * sizeof(T));
    double mag = 0;
    for (int64_t i = 0; i < n; ++i) {
      const T a = convert(g(rng)), b = convert(g(rng));
      std::memcpy(wb.data() + i * sizeof(T), &a, sizeof(T));
      std::memcpy(xb.data() + i * sizeof(T), &b, sizeof(T));
    }
    const Misaligned w(wb, alignof(T)), x(xb, alignof(T));
    std::vector<float> wd(n), xd(n);
    scalar_table().of(type).dequantize_row(w.ptr, wd.data(), n);
    scalar_table().of(type).dequantize_row(x.ptr, xd.data(), n);
    for (int64_t i = 0; i < n; ++i) mag += std::fabs(static_cast<double>(wd[i]) * xd[i]);
    float ref = std::nanf(""), got = std::nanf("");
    scalar_table().of(type).vec_dot(n, &ref, w.ptr, x.ptr);
    neon_table(false).of(type).vec_dot(n, &got, w.ptr, x.ptr);
    const double tol = static_cast<double>(n / 16 + 20) * kEpsF32 * mag;
    INFO(les::ggml_type_name(type) << " n=" << n << " ref " << ref << " neon " << got << " tol " << tol);
    CHECK(std::fabs(static_cast<double>(got) - ref) <= tol);
  }
}

}  // namespace

TEST_CASE("NEON K-quant integer block sums are bit-exact with the reference", "[kernels][neon]") {
  SECTION("Q2_K") { check_block_sums<les::block_q2_K>(block_sums_q2_K_q8_K_neon, block_sums_q2_K_q8_K_neon_dotprod,
                                                   block_sums_q2_K_q8_K_ref); }
  SECTION("Q3_K") { check_block_sums<les::block_q3_K>(block_sums_q3_K_q8_K_neon, block_sums_q3_K_q8_K_neon_dotprod,
                                                   block_sums_q3_K_q8_K_ref); }
  SECTION("Q4_K") { check_block_sums<les::block_q4_K>(block_sums_q4_K_q8_K_neon, block_sums_q4_K_q8_K_neon_dotprod,
                                                   block_sums_q4_K_q8_K_ref); }
  SECTION("Q5_K") { check_block_sums<les::block_q5_K>(block_sums_q5_K_q8_K_neon, block_sums_q5_K_q8_K_neon_dotprod,
                                                   block_sums_q5_K_q8_K_ref); }
  SECTION("Q6_K") { check_block_sums<les::block_q6_K>(block_sums_q6_K_q8_K_neon, block_sums_q6_K_q8_K_neon_dotprod,
                                                   block_sums_q6_K_q8_K_ref); }
}

TEST_CASE("NEON vec_dot matches the scalar reference on the same bytes", "[kernels][neon]") {
  SECTION("Q4_0") { check_vec_dot<les::block_q4_0>(GgmlType::Q4_0); }
  SECTION("Q4_1") { check_vec_dot<les::block_q4_1>(GgmlType::Q4_1); }
  SECTION("Q5_0") { check_vec_dot<les::block_q5_0>(GgmlType::Q5_0); }
  SECTION("Q5_1") { check_vec_dot<les::block_q5_1>(GgmlType::Q5_1); }
  SECTION("Q8_0") { check_vec_dot<les::block_q8_0>(GgmlType::Q8_0); }
  SECTION("IQ4_NL") { check_vec_dot<les::block_iq4_nl>(GgmlType::IQ4_NL); }
  SECTION("Q2_K") { check_vec_dot<les::block_q2_K>(GgmlType::Q2_K); }
  SECTION("Q3_K") { check_vec_dot<les::block_q3_K>(GgmlType::Q3_K); }
  SECTION("Q4_K") { check_vec_dot<les::block_q4_K>(GgmlType::Q4_K); }
  SECTION("Q5_K") { check_vec_dot<les::block_q5_K>(GgmlType::Q5_K); }
  SECTION("Q6_K") { check_vec_dot<les::block_q6_K>(GgmlType::Q6_K); }
  SECTION("IQ4_XS") { check_vec_dot<les::block_iq4_xs>(GgmlType::IQ4_XS); }
  SECTION("MXFP4") { check_vec_dot<les::block_mxfp4>(GgmlType::MXFP4); }
  SECTION("TQ1_0") { check_vec_dot<les::block_tq1_0>(GgmlType::TQ1_0); }
  SECTION("TQ2_0") { check_vec_dot<les::block_tq2_0>(GgmlType::TQ2_0); }
  SECTION("F32") { check_float_dot<float>(GgmlType::F32, [](float v) { return v; }); }
  SECTION("F16") { check_float_dot<les::fp16_t>(GgmlType::F16, les::fp32_to_fp16); }
  SECTION("BF16") { check_float_dot<les::bf16_t>(GgmlType::BF16, les::fp32_to_bf16); }
}

TEST_CASE("NEON activation quantisers are byte-identical to the reference", "[kernels][neon]") {
  SECTION("Q8_0") { check_quantiser(GgmlType::Q8_0, quantize_row_q8_0_neon); }
  SECTION("Q8_1") { check_quantiser(GgmlType::Q8_1, quantize_row_q8_1_neon); }
  SECTION("Q8_K") { check_quantiser(GgmlType::Q8_K, quantize_row_q8_K_neon); }
}

TEST_CASE("NEON table keeps the scalar vec_dot types and overrides the hot kernels", "[kernels][neon]") {
  const KernelTable& s = scalar_table();
  const KernelTable& t = neon_table(false);
  CHECK(t.tier == KernelTier::neon);
  for (uint32_t id = 0; id < les::kGgmlTypeCount; ++id) {
    INFO("type id " << id);
    CHECK(t.types[id].vec_dot_type == s.types[id].vec_dot_type);
    CHECK((t.types[id].vec_dot == nullptr) == (s.types[id].vec_dot == nullptr));
    CHECK((t.types[id].quantize_row == nullptr) == (s.types[id].quantize_row == nullptr));
  }
  for (GgmlType type : {GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::Q8_0, GgmlType::Q3_K, GgmlType::Q4_K,
                        GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::F16, GgmlType::IQ4_XS, GgmlType::MXFP4,
                        GgmlType::TQ1_0, GgmlType::TQ2_0}) {
    INFO(les::ggml_type_name(type));
    CHECK(t.of(type).vec_dot != s.of(type).vec_dot);
  }
  // fill_neon_table() picks the SDOT kernels exactly when the CPU has them.
  KernelTable best;
  fill_scalar_table(best);
  fill_neon_table(best);
  CHECK(best.of(GgmlType::Q4_K).vec_dot ==
        (neon_dotprod_supported() ? vec_dot_q4_K_q8_K_neon_dotprod : vec_dot_q4_K_q8_K_neon));
}

TEST_CASE("NEON matvec and activation quantisation reproduce the llama.cpp fixtures", "[kernels][neon][fixtures]") {
  LES_REQUIRE_FIXTURE(root, "quant/manifest.json");
  const std::string dir = root.substr(0, root.size() - std::string("manifest.json").size());
  constexpr int64_t kRows = 64, kCols = 1024;
  const std::vector<float> xf = les::test::read_file_f32(dir + "matvec_x_1024.f32");
  REQUIRE(xf.size() == static_cast<size_t>(kCols));
  const struct {
    const char* name;
    GgmlType type;
  } cases[] = {{"q4_0", GgmlType::Q4_0}, {"q8_0", GgmlType::Q8_0}, {"q3_K", GgmlType::Q3_K},
               {"q4_K", GgmlType::Q4_K}, {"q5_K", GgmlType::Q5_K}, {"q6_K", GgmlType::Q6_K}};
  for (const auto& c : cases) {
    const std::string base = dir + "matvec_" + c.name;
    const std::vector<uint8_t> w = les::test::read_file_bytes(base + ".w.qbytes");
    const std::vector<uint8_t> x = les::test::read_file_bytes(base + ".x_vecdot.qbytes");
    const std::vector<float> y = les::test::read_file_f32(base + ".y.f32");
    const size_t row_bytes = *les::ggml_row_bytes(c.type, kCols);
    REQUIRE(w.size() == row_bytes * kRows);
    REQUIRE(y.size() == static_cast<size_t>(kRows));
    const GgmlType xt = neon_table(false).of(c.type).vec_dot_type;

    std::vector<uint8_t> xq(x.size());
    neon_table(false).of(xt).quantize_row(xf.data(), xq.data(), kCols);
    INFO(c.name);
    CHECK(xq == x);

    const int64_t nb = kCols / les::ggml_type_traits(c.type).block_size;
    for (int64_t r = 0; r < kRows; ++r) {
      const uint8_t* wr = w.data() + r * row_bytes;
      const double tol = static_cast<double>(nb + 4) * kEpsF32 * magnitude(c.type, wr, x.data(), kCols);
      for (bool dotprod : variants()) {
        float got = std::nanf("");
        neon_table(dotprod).of(c.type).vec_dot(kCols, &got, wr, x.data());
        INFO((dotprod ? "sdot" : "baseline") << " row " << r << " ggml " << y[r] << " neon " << got << " tol "
                                             << tol);
        CHECK(std::fabs(static_cast<double>(got) - y[r]) <= tol);
      }
    }
  }
}

#else  // !__aarch64__

TEST_CASE("NEON kernels", "[kernels][neon]") {
  les::test::mark_skipped("NEON kernels are only built for aarch64 (run scripts/test-aarch64.sh)");
}

#endif
