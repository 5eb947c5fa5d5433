// Weight quantisers: one row of floats into a GgmlType's blocks, minimising
// the (importance-weighted) squared error (ref.h states the method). Used by
// `les quantize` (core/quant/) and generated test models.
//
// The scale search runs on a kernel table's FitKernels (kernels.h); every
// tier's kernels are bit-identical to the scalar reference, so a row gives
// the same bytes on every machine and tier. reference_weight_quantizer()
// returns the scalar path (the test oracle).
//
// Thread-safety: pure functions; the returned functions are pure too.
#pragma once

#include <cstdint>

#include "kernels/ggml_type.h"
#include "kernels/kernels.h"

namespace les::kernels {

// Quantises one row of n floats (n a multiple of the type's block size) into
// the type's blocks at y (ggml_row_bytes(type, n) bytes). importance: null or
// n non-negative weights aligned with x (an imatrix row: the mean squared
// activation of each input column); ignored by F32/F16/BF16, whose
// conversion is exact or round-to-nearest-even.
using QuantizeWeightsFn = void (*)(const float* x, void* y, int64_t n, const float* importance);

// The scalar reference quantiser for weights of `type`, or null if LES
// cannot produce that type (IQ1 family, TQ, integer types,
// Q8_1/Q8_K, which are activation-only formats).
QuantizeWeightsFn reference_weight_quantizer(GgmlType type) noexcept;

// True if quantize_weights_row() can produce `type`.
bool weight_quantizer_available(GgmlType type) noexcept;

// Quantises one row like reference_weight_quantizer(type) (same bytes) with
// `table`'s scale-search kernels. Returns false (writing nothing) for a type
// without a quantiser.
bool quantize_weights_row(const KernelTable& table, GgmlType type, const float* x, void* y, int64_t n,
                          const float* importance);

// Internal (ref_quantize_weights.cpp): the quantiser of a block type with
// the scale search on `fit`; null for types without one (and for F32/F16/BF16).
using WeightQuantizerImpl = void (*)(const FitKernels& fit, const float* x, void* y, int64_t n,
                                     const float* importance);
WeightQuantizerImpl weight_quantizer_impl(GgmlType type) noexcept;

// Internal (ref_quantize_mxfp4.cpp): MXFP4's quantiser (the scale is a power
// of two: a search over exponents, no FitKernels needed; `fit` is unused).
void quantize_mxfp4(const FitKernels& fit, const float* x, void* y, int64_t n, const float* importance);

}  // namespace les::kernels
