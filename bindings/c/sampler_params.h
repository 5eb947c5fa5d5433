// Internal to bindings/c: les_sampler_params -> les::SamplerParams (one
// place for les_generate() and the les_sampler object).
#pragma once

#include "core/sampler.h"
#include "les/les.h"

namespace les::capi {

inline SamplerParams to_sampler_params(const les_sampler_params& sp) {
  SamplerParams p;
  p.temperature = sp.temperature;
  p.top_k = sp.top_k;
  p.top_p = sp.top_p;
  p.min_p = sp.min_p;
  p.repeat_penalty = sp.repeat_penalty;
  p.presence_penalty = sp.presence_penalty;
  p.frequency_penalty = sp.frequency_penalty;
  p.penalty_last_n = sp.penalty_last_n;
  p.seed = sp.seed == LES_SEED_RANDOM ? kRandomSeed : sp.seed;
  return p;
}

}  // namespace les::capi
