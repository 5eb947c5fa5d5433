// Runtime selection of the kernel tier (kernels.h): builds one immutable
// KernelTable per tier that is both compiled in and runnable here.
//
// Order of events: the first call to kernel_table()/best_kernel_tier() runs
// detect_cpu_features() (plain x86-64 code), and only then calls the builders
// of the tiers the CPU and OS support. The builders live in ISA translation
// units; nothing in those units runs before this point (they have no static
// initialisers with ISA code). Tables are built once under C++'s thread-safe
// static initialisation and never modified afterwards.
#include <cstdlib>
#include <cstring>
#include <optional>

#include "kernels/cpu_features.h"
#include "kernels/kernels.h"
#include "kernels/tiers.h"

namespace les::kernels {
namespace {

struct TierTables {
  std::optional<KernelTable> tables[kKernelTierCount];
  KernelTier best = KernelTier::scalar;
};

// Tier `tier` starts as a copy of the scalar table; its builder overrides what
// it implements (tiers.h).
KernelTable from_scalar(const KernelTable& scalar, KernelTier tier) {
  KernelTable t = scalar;
  t.tier = tier;
  return t;
}

std::optional<KernelTier> tier_from_name(const char* s) {
  for (int i = 0; i < kKernelTierCount; ++i) {
    const KernelTier t = static_cast<KernelTier>(i);
    if (std::strcmp(s, kernel_tier_name(t)) == 0) return t;
  }
  return std::nullopt;
}

TierTables build_tables() {
  TierTables r;
  KernelTable scalar;
  scalar.tier = KernelTier::scalar;
  fill_scalar_table(scalar);
  r.tables[static_cast<int>(KernelTier::scalar)] = scalar;

  [[maybe_unused]] const CpuFeatures f = detect_cpu_features();
#if defined(__x86_64__) || defined(_M_X64)
  // The AVX2 TU is compiled with -mavx2 -mfma -mf16c -mbmi2 (LesKernels.cmake).
  if (f.has_avx2 && f.has_fma && f.has_f16c && f.has_bmi2) {
    KernelTable t = from_scalar(scalar, KernelTier::avx2);
    fill_avx2_table(t);
    r.tables[static_cast<int>(KernelTier::avx2)] = t;
  }
  // The AVX-512 TU is compiled with F/BW/DQ/VL/VNNI plus the AVX2 set. CPUs with
  // AVX-512 but without VNNI (Skylake-X) are not served by this tier: they use avx2.
  if (f.has_avx2 && f.has_fma && f.has_f16c && f.has_bmi2 && f.has_avx512f && f.has_avx512bw &&
      f.has_avx512dq && f.has_avx512vl && f.has_avx512_vnni) {
    KernelTable t = from_scalar(scalar, KernelTier::avx512);
    fill_avx512_table(t);
    r.tables[static_cast<int>(KernelTier::avx512)] = t;
  }
#endif
#if defined(__aarch64__)
  if (f.has_neon) {
    KernelTable t = from_scalar(scalar, KernelTier::neon);
    fill_neon_table(t);
    r.tables[static_cast<int>(KernelTier::neon)] = t;
  }
#endif

  KernelTier best = KernelTier::scalar;
  for (int i = 0; i < kKernelTierCount; ++i)
    if (r.tables[i]) best = static_cast<KernelTier>(i);

  // LES_KERNEL_TIER forces a tier; an unsupported or unknown request falls back
  // to the best supported tier with a lower number (scalar at worst).
  if (const char* env = std::getenv("LES_KERNEL_TIER"); env != nullptr && *env != '\0') {
    if (auto req = tier_from_name(env)) {
      // Tables only exist for supported tiers, and the best one is the highest
      // supported, so walking down from the request never goes above it.
      int i = static_cast<int>(*req);
      while (i > 0 && !r.tables[i]) --i;
      best = static_cast<KernelTier>(i);
    }
  }
  r.best = best;
  return r;
}

const TierTables& tier_tables() {
  static const TierTables tables = build_tables();
  return tables;
}

}  // namespace

const char* kernel_tier_name(KernelTier tier) noexcept {
  switch (tier) {
    case KernelTier::scalar: return "scalar";
    case KernelTier::avx2: return "avx2";
    case KernelTier::avx512: return "avx512";
    case KernelTier::neon: return "neon";
  }
  return "?";
}

const KernelTable* kernel_table(KernelTier tier) noexcept {
  const int i = static_cast<int>(tier);
  if (i < 0 || i >= kKernelTierCount) return nullptr;
  const auto& t = tier_tables().tables[i];
  return t ? &*t : nullptr;
}

KernelTier best_kernel_tier() noexcept { return tier_tables().best; }

const KernelTable& default_kernel_table() noexcept { return *kernel_table(best_kernel_tier()); }

bool weight_type_supported(GgmlType t) noexcept {
  const uint32_t id = static_cast<uint32_t>(t);
  if (id >= kGgmlTypeCount) return false;
  const KernelTable& s = *kernel_table(KernelTier::scalar);
  const TypeKernels& k = s.types[id];
  if (k.vec_dot == nullptr) return false;
  const uint32_t act = static_cast<uint32_t>(k.vec_dot_type);
  return act < kGgmlTypeCount && s.types[act].quantize_row != nullptr;
}

}  // namespace les::kernels
