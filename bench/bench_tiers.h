// The kernel tiers a bench runs: every tier this CPU can run, or the ones
// named (by kernel_tier_name: scalar, avx2, avx512, neon, ...) that it can.
//
// Thread-safety: kernel_table() is safe from any thread; so is this.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/kernels.h"

namespace les::bench {

// Tables in tier order; names this CPU cannot run (or unknown names) are left
// out, so the result may be empty.
inline std::vector<const kernels::KernelTable*> selected_tiers(const std::vector<std::string>& names) {
  std::vector<const kernels::KernelTable*> tables;
  for (int i = 0; i < kernels::kKernelTierCount; ++i) {
    const kernels::KernelTable* t = kernels::kernel_table(static_cast<kernels::KernelTier>(i));
    if (!t) continue;
    if (!names.empty() && std::find(names.begin(), names.end(), kernels::kernel_tier_name(t->tier)) == names.end())
      continue;
    tables.push_back(t);
  }
  return tables;
}

}  // namespace les::bench
