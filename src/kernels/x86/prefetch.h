// Internal: the software prefetch of the x86 decode matvecs (NX = 1; K-quants and i-quants),
// shared by the AVX2 and AVX-512 tiers. _mm_prefetch is SSE (baseline
// x86-64), so this is safe in every x86 TU; it has internal linkage, so each
// TU keeps its own copy (no ODR merging across differently compiled TUs).
//
// The decode matvec streams its weights from DRAM once: the lines of the
// super-block kPrefetchAhead bytes ahead are requested into L2 (prefetcht1)
// while this one is computed, so memory and compute overlap. 8 KiB into L2
// keeps more misses in flight than L1's fill buffers allow; the distances and
// hints tried, and the bandwidth each reached, are in
// bench/results/kquant_prefetch-2026-12-03-AMD-EPYC-avx512.md. A prefetch
// never faults, so reading past a row's end is harmless.
#pragma once

#include <immintrin.h>

#include <cstddef>

namespace les::kernels::x86 {
namespace {

inline constexpr int kPrefetchAhead = 8192;

// Prefetches (into L2) every cache line of the block kPrefetchAhead bytes after `blk`.
template <typename Block>
inline void prefetch_ahead(const Block* blk) {
  const char* p = reinterpret_cast<const char*>(blk) + kPrefetchAhead;
  for (size_t o = 0; o < sizeof(Block); o += 64) _mm_prefetch(p + o, _MM_HINT_T1);
  _mm_prefetch(p + sizeof(Block) - 1, _MM_HINT_T1);
}

}  // namespace
}  // namespace les::kernels::x86
