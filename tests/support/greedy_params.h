// Greedy generation parameters for C API tests: `n_predict` tokens, EOS
// ignored, temperature 0 (argmax, ties to the lowest id), so a run's text is
// fixed by the model and the prompt.
#pragma once

#include <cstdint>

#include "les/les.h"

namespace les::test {

inline les_generate_params greedy_params(int32_t n_predict) {
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = n_predict;
  gp.ignore_eos = true;
  gp.sampler.temperature = 0.0f;
  return gp;
}

}  // namespace les::test
