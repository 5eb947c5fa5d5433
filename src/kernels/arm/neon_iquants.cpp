// The lattice i-quant dot products (neon_iquants_impl.h) for the armv8-a
// baseline: suffix _neon (SMULL + SADALP int8 dots; SDOT in a build whose
// -march includes dotprod). See neon_kernels.h.
#define LES_NEON_KERNEL(name) name##_neon
#include "kernels/arm/neon_iquants_impl.h"
#undef LES_NEON_KERNEL
