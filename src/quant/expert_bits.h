// The bit allocation of les-mixed-iq2 (quant_plan.h): which routed-expert
// tensors get IQ2_XS (2.3125 bits per weight) instead of IQ2_XXS (2.0625).
//
// Quantising a matrix W whose input columns c carry the mean squared
// activations a_c (the imatrix) adds to its outputs an expected squared error
// of about  rho^2 * sum_c a_c * sum_r W_rc^2  (rho: the type's relative weight
// error, the same for every tensor of a type), so moving a tensor from IQ2_XXS
// to IQ2_XS removes an error proportional to that sum for 0.25 extra bits per
// weight. The score of a tensor is the sum per weight,
//   score = sum_(experts e, rows r, columns c) a_ec W_erc^2 / (number of weights),
// and the highest-scoring tensors get IQ2_XS until they hold `fraction` of the
// routed-expert weights that can be IQ2 (rows a multiple of 256; the others
// fall back to IQ4_NL whatever they are given). Ties keep file order.
//
// Thread-safety: pure (reads the file with positioned reads).
#pragma once

#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "quant/imatrix_file.h"
#include "util/status.h"

namespace les::quant {

struct ExpertScore {
  std::string name;
  double score = 0;      // imatrix-weighted mean squared weight (see above)
  int64_t n_weights = 0;
};

// Scores of the routed-expert tensors of `in` (opened from in_path) that have
// an imatrix entry and rows a multiple of 256, in file order. Errors: io,
// invalid_argument (a tensor type that cannot be converted to F32: only F32,
// F16, BF16 and Q8_0 can).
Result<std::vector<ExpertScore>> score_routed_experts(const gguf::GgufFile& in, const std::string& in_path,
                                                      const Imatrix& imatrix);

// The names of the highest-scoring tensors holding `fraction` (0..1) of the
// scored weights (a tensor that crosses the fraction is included when more
// than half of it fits below it).
std::vector<std::string> pick_iq2_xs_experts(const std::vector<ExpertScore>& scores, double fraction);

}  // namespace les::quant
