// Internal: per-instruction-set table builders behind kernel_table().
//
// Each tier's builder starts from the scalar table (copy) and overrides the
// entries it implements, so a tier never lacks a type the scalar tier has.
// The builders live in their own translation units, compiled with only their
// own -m flags (DEVELOPERS.md, Conventions: kernels); dispatch.cpp calls one only after cpu_features
// confirmed the CPU and OS support it.
#pragma once

#include "kernels/kernels.h"

namespace les::kernels {

void fill_scalar_table(KernelTable& t);  // scalar.cpp: reference kernels, the test oracle
#if defined(__x86_64__) || defined(_M_X64)
void fill_avx2_table(KernelTable& t);    // x86/avx2.cpp
void fill_avx512_table(KernelTable& t);  // x86/avx512.cpp
#endif
#if defined(__aarch64__)
void fill_neon_table(KernelTable& t);    // arm/neon.cpp
#endif

}  // namespace les::kernels
