// The int8 dot-product kernels compiled for the dot-product extension
// (FEAT_DotProd, SDOT): suffix _neon_dotprod. cmake/LesKernels.cmake compiles
// this file alone with -march=armv8.2-a+dotprod; fill_neon_table() installs
// these kernels only when neon_dotprod_supported() says the CPU has SDOT, and
// nothing here runs before that (no static initialisers).
#if !defined(__ARM_FEATURE_DOTPROD)
#error "neon_dotprod.cpp must be compiled with dotprod enabled (-march=armv8.2-a+dotprod)"
#endif
#define LES_NEON_KERNEL(name) name##_neon_dotprod
#include "kernels/arm/neon_dot_legacy_impl.h"
#include "kernels/arm/neon_dot_kquants_impl.h"
#undef LES_NEON_KERNEL
