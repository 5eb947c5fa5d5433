// Lookup of the reference weight quantiser of a GgmlType (for `les quantize`
// and generated test models). The quantisers themselves are declared in ref.h.
//
// Thread-safety: pure functions; the returned functions are pure too.
#pragma once

#include <cstdint>

#include "kernels/ggml_type.h"

namespace les::kernels {

// Quantises one row of n floats (n a multiple of the type's block size) into
// the type's blocks at y (ggml_row_bytes(type, n) bytes). importance: null or
// n non-negative weights aligned with x (an imatrix row); ignored by
// F32/F16/BF16, whose conversion is exact or round-to-nearest-even.
using QuantizeWeightsFn = void (*)(const float* x, void* y, int64_t n, const float* importance);

// The reference quantiser for weights of `type`, or null if LES cannot produce
// that type (IQ2/IQ3/IQ1 families, TQ, MXFP4, integer types, Q8_1/Q8_K, which
// are activation-only formats).
QuantizeWeightsFn reference_weight_quantizer(GgmlType type) noexcept;

}  // namespace les::kernels
