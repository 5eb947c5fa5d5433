// Kernel tier dispatch: LES_KERNEL_TIER forces a lower tier, tables exist only
// for tiers the CPU/OS runs, and every tier covers every scalar entry.
//
// The first test case sets LES_KERNEL_TIER before anything in this process
// touches the kernel tables (they are built once, on first use), so it must
// stay first in this file and this executable must not share it.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "kernels/cpu_features.h"
#include "kernels/kernels.h"

using namespace les;
using namespace les::kernels;

TEST_CASE("LES_KERNEL_TIER forces a lower tier (set before first use)", "[kernels][dispatch]") {
  // Request avx2; on a machine without it the request falls back to scalar.
  REQUIRE(setenv("LES_KERNEL_TIER", "avx2", 1) == 0);
  const KernelTier best = best_kernel_tier();
  [[maybe_unused]] const CpuFeatures f = detect_cpu_features();  // only read on x86
#if defined(__x86_64__)
  if (f.has_avx2 && f.has_fma && f.has_f16c && f.has_bmi2) {
    CHECK(best == KernelTier::avx2);
  } else {
    CHECK(best == KernelTier::scalar);
  }
#else
  CHECK(best == KernelTier::scalar);
#endif
  CHECK(default_kernel_table().tier == best);
}

TEST_CASE("kernel_table reflects the CPU features", "[kernels][dispatch]") {
  const CpuFeatures f = detect_cpu_features();
  INFO("features: " << cpu_features_string(f));
  REQUIRE(kernel_table(KernelTier::scalar) != nullptr);
  CHECK(kernel_table(static_cast<KernelTier>(17)) == nullptr);
#if defined(__x86_64__)
  CHECK((kernel_table(KernelTier::avx2) != nullptr) == (f.has_avx2 && f.has_fma && f.has_f16c && f.has_bmi2));
  if (kernel_table(KernelTier::avx512) != nullptr) {
    CHECK(f.has_avx512f);
    CHECK(f.has_avx512bw);
    CHECK(f.has_avx512vl);
    CHECK(f.has_avx512_vnni);
  }
  CHECK(kernel_table(KernelTier::neon) == nullptr);
  // AVX-512 implies the OS saves YMM state, so AVX2 must then be usable too.
  if (f.has_avx512f) CHECK(f.has_avx2);
#endif
  for (int i = 0; i < kKernelTierCount; ++i) {
    const KernelTable* t = kernel_table(static_cast<KernelTier>(i));
    if (!t) continue;
    CHECK(t->tier == static_cast<KernelTier>(i));
    CHECK(std::string(kernel_tier_name(t->tier)) != "?");
    const KernelTable& s = *kernel_table(KernelTier::scalar);
    for (uint32_t k = 0; k < kGgmlTypeCount; ++k) {
      INFO("tier " << kernel_tier_name(t->tier) << " type id " << k);
      CHECK((t->types[k].vec_dot != nullptr) == (s.types[k].vec_dot != nullptr));
      CHECK(t->types[k].vec_dot_type == s.types[k].vec_dot_type);
      CHECK((t->types[k].quantize_row != nullptr) == (s.types[k].quantize_row != nullptr));
    }
  }
}

TEST_CASE("weight_type_supported", "[kernels][dispatch]") {
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                     GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::IQ4_NL, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K,
                     GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS, GgmlType::MXFP4,
                     GgmlType::TQ1_0, GgmlType::TQ2_0})
    CHECK(weight_type_supported(t));
  for (GgmlType t : {GgmlType::IQ2_XXS, GgmlType::IQ2_XS, GgmlType::IQ2_S, GgmlType::IQ3_XXS, GgmlType::IQ3_S,
                     GgmlType::IQ1_S, GgmlType::IQ1_M})
    CHECK(weight_type_supported(t));
  CHECK_FALSE(weight_type_supported(GgmlType::Q8_K));
  CHECK_FALSE(weight_type_supported(GgmlType::Q8_1));
  CHECK_FALSE(weight_type_supported(GgmlType::I8));
  CHECK_FALSE(weight_type_supported(static_cast<GgmlType>(200)));
}
