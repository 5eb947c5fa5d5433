// The ternary-format dot products (TQ1_0, TQ2_0) for the armv8-a baseline:
// suffix _neon (SMULL + SADALP int8 dots, or SDOT in a build whose -march has
// dotprod). See neon_dot_ternary_impl.h and neon_kernels.h.
#define LES_NEON_KERNEL(name) name##_neon
#include "kernels/arm/neon_dot_ternary_impl.h"
#undef LES_NEON_KERNEL
