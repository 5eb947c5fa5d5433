// Internal: the x86 tiers' packed GEMM blocks (kernels.h GemmBlock, gemm.h),
// each bit-identical to gemm_block_ref. Defined in avx2_gemm.cpp and
// avx512_gemm.cpp (compiled with their tier's flags); call only through a
// KernelTable whose tier the CPU runs.
#pragma once

#include "kernels/kernels.h"

namespace les::kernels {
namespace avx2 {
void gemm_block(const GemmBlock& b);  // 16-row panels, 6-token tiles
}
namespace avx512 {
void gemm_block(const GemmBlock& b);  // 32-row panels, 12-token tiles
}
}  // namespace les::kernels
