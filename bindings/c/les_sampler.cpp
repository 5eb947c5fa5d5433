// C ABI: sampler parameters and the standalone sampler object (les_sampler.h).
#include <cstring>
#include <span>
#include <string>

#include "capi_internal.h"
#include "sampler_params.h"

using les::capi::fail;
using les::capi::guarded;

struct les_sampler {
  les::Sampler sampler;
};

namespace {
constexpr size_t kSamplerParamsV1 = sizeof(les_sampler_params);
}

extern "C" {

les_sampler_params les_sampler_default_params(void) {
  const les::SamplerParams d;
  les_sampler_params p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = sizeof(les_sampler_params);
  p.temperature = d.temperature;
  p.top_k = d.top_k;
  p.top_p = d.top_p;
  p.min_p = d.min_p;
  p.repeat_penalty = d.repeat_penalty;
  p.presence_penalty = d.presence_penalty;
  p.frequency_penalty = d.frequency_penalty;
  p.penalty_last_n = d.penalty_last_n;
  p.seed = LES_SEED_RANDOM;
  return p;
}

les_status les_sampler_create(const les_sampler_params* params, les_sampler** out_sampler) {
  return guarded("les_sampler_create", [&]() -> les_status {
    if (out_sampler == nullptr) return fail(les::invalid_argument_error("les_sampler_create: out_sampler is NULL"));
    *out_sampler = nullptr;
    les_sampler_params p = les_sampler_default_params();
    les::Status s = les::capi::copy_versioned_in(params, p, kSamplerParamsV1, "les_sampler_params");
    if (!s.ok()) return fail(s);
    auto sampler = les::Sampler::create(les::capi::to_sampler_params(p));
    if (!sampler.ok()) return fail(sampler.status());
    *out_sampler = new les_sampler{std::move(sampler).value()};
    return LES_OK;
  });
}

void les_sampler_free(les_sampler* sampler) { delete sampler; }

les_status les_sampler_sample(les_sampler* sampler, const float* logits, int32_t n_vocab, les_token* out_token) {
  return guarded("les_sampler_sample", [&]() -> les_status {
    if (sampler == nullptr || logits == nullptr || out_token == nullptr)
      return fail(les::invalid_argument_error("les_sampler_sample: sampler, logits or out_token is NULL"));
    if (n_vocab <= 0)
      return fail(les::invalid_argument_error("les_sampler_sample: n_vocab is " + std::to_string(n_vocab)));
    auto tok = sampler->sampler.sample(std::span<const float>(logits, static_cast<size_t>(n_vocab)));
    if (!tok.ok()) return fail(tok.status());
    *out_token = *tok;
    return LES_OK;
  });
}

les_status les_sampler_accept(les_sampler* sampler, les_token token) {
  return guarded("les_sampler_accept", [&]() -> les_status {
    if (sampler == nullptr) return fail(les::invalid_argument_error("les_sampler_accept: sampler is NULL"));
    if (token < 0) return fail(les::invalid_argument_error("les_sampler_accept: token " + std::to_string(token)));
    sampler->sampler.accept(token);
    return LES_OK;
  });
}

void les_sampler_reset(les_sampler* sampler) {
  if (sampler != nullptr) sampler->sampler.reset();
}

uint64_t les_sampler_seed(const les_sampler* sampler) { return sampler ? sampler->sampler.params().seed : 0; }

}  // extern "C"
