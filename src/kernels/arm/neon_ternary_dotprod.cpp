// The ternary-format dot products (TQ1_0, TQ2_0) compiled for the dot-product
// extension (SDOT): suffix _neon_dotprod. LesKernels.cmake builds this file
// alone with -march=armv8.2-a+dotprod; fill_neon_table() installs these
// kernels only when neon_dotprod_supported() says the CPU has SDOT.
#if !defined(__ARM_FEATURE_DOTPROD)
#error "neon_ternary_dotprod.cpp must be compiled with dotprod enabled (-march=armv8.2-a+dotprod)"
#endif
#define LES_NEON_KERNEL(name) name##_neon_dotprod
#include "kernels/arm/neon_dot_ternary_impl.h"
#undef LES_NEON_KERNEL
