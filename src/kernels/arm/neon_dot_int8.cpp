// The int8 dot-product kernels (32-element formats and K-quants) for the
// armv8-a baseline: suffix _neon. Without __ARM_FEATURE_DOTPROD their int8
// dots are SMULL + SADALP; in a build whose -march includes dotprod they use
// SDOT like the _neon_dotprod variant. See neon_kernels.h.
#define LES_NEON_KERNEL(name) name##_neon
#include "kernels/arm/neon_dot_legacy_impl.h"
#include "kernels/arm/neon_dot_kquants_impl.h"
#undef LES_NEON_KERNEL
