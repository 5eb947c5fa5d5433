// A model and a context opened through les.h for the C API tests, freed
// together (context first). Thread-compatible, like the handles it owns.
#pragma once

#include <cstdint>
#include <string>

#include "les/les.h"

namespace les::test {

struct Loaded {
  les_model* model = nullptr;
  les_context* ctx = nullptr;
  Loaded() = default;
  Loaded(const Loaded&) = delete;
  Loaded& operator=(const Loaded&) = delete;
  ~Loaded() {
    les_context_free(ctx);
    les_model_free(model);
  }
};

// Loads `path` with 2 threads and creates a context of n_ctx tokens (0 = the
// model's training context) with default parameters. False on any failure
// (the handles made so far stay in `l` and are freed with it).
inline bool load(const std::string& path, Loaded& l, int32_t n_ctx = 0) {
  les_model_params mp = les_model_default_params();
  mp.n_threads = 2;
  if (les_model_load(path.c_str(), &mp, &l.model) != LES_OK) return false;
  les_context_params cp = les_context_default_params();
  cp.n_ctx = n_ctx;
  return les_context_create(l.model, &cp, &l.ctx) == LES_OK;
}

}  // namespace les::test
