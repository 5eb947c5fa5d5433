// Test helper: the kernel tables of the SIMD tiers this machine runs (every
// tier above scalar whose table exists), for tests that check each one
// against the scalar reference.
#pragma once

#include <vector>

#include "kernels/kernels.h"

namespace les::test {

inline std::vector<const kernels::KernelTable*> simd_tables() {
  std::vector<const kernels::KernelTable*> v;
  for (int i = 1; i < kernels::kKernelTierCount; ++i)
    if (const kernels::KernelTable* t = kernels::kernel_table(static_cast<kernels::KernelTier>(i))) v.push_back(t);
  return v;
}

}  // namespace les::test
