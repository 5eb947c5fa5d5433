// The lattice i-quant dot products (neon_iquants_impl.h) compiled for the
// dot-product extension (SDOT): suffix _neon_dotprod. cmake/LesKernels.cmake
// compiles *dotprod*.cpp with -march=armv8.2-a+dotprod; fill_neon_table()
// installs them only when neon_dotprod_supported(); no static initialisers.
#if !defined(__ARM_FEATURE_DOTPROD)
#error "neon_iquants_dotprod.cpp must be compiled with dotprod enabled (-march=armv8.2-a+dotprod)"
#endif
#define LES_NEON_KERNEL(name) name##_neon_dotprod
#include "kernels/arm/neon_iquants_impl.h"
#undef LES_NEON_KERNEL
