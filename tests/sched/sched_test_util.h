// Helpers for the scheduler tests: a resident reference run and the same run
// through a StreamingExpertSource, compared logit by logit (bit-identical).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/model/context.h"
#include "core/model/model.h"
#include "sched/streaming_expert_source.h"

namespace les::test {

// Prompt of `n` ids: BOS (1) then a fixed pseudo-random walk over the vocabulary.
inline std::vector<int32_t> test_prompt(int32_t n_vocab, int n) {
  std::vector<int32_t> ids{1};
  uint64_t s = 0x9E3779B97F4A7C15ull;
  while (static_cast<int>(ids.size()) < n) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    ids.push_back(static_cast<int32_t>(3 + (s >> 33) % static_cast<uint64_t>(n_vocab - 3)));
  }
  return ids;
}

// The logits of a run: prefill of `prompt` (all rows), then `n_steps` greedy
// decode steps (one logit row each). `tokens` receives the fed tokens so a
// second run can replay them exactly.
struct RunLogits {
  std::vector<float> prefill;            // prompt.size() x n_vocab
  std::vector<std::vector<float>> steps;  // n_steps x n_vocab
  std::vector<int32_t> fed;              // decode-step tokens
};

inline int32_t argmax(std::span<const float> v) {
  int32_t b = 0;
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] > v[static_cast<size_t>(b)]) b = static_cast<int32_t>(i);
  return b;
}

// replay: when non-null, feed these tokens instead of the greedy choice.
inline Status run_logits(Context& ctx, const std::vector<int32_t>& prompt, int n_steps,
                         const std::vector<int32_t>* replay, RunLogits* out) {
  LES_RETURN_IF_ERROR(ctx.decode(prompt, /*all_logits=*/true));
  out->prefill.assign(ctx.logits_all().begin(), ctx.logits_all().end());
  int32_t next = argmax(ctx.logits());
  for (int i = 0; i < n_steps; ++i) {
    if (replay) next = (*replay)[static_cast<size_t>(i)];
    out->fed.push_back(next);
    const int32_t one[1] = {next};
    LES_RETURN_IF_ERROR(ctx.decode(one));
    out->steps.emplace_back(ctx.logits().begin(), ctx.logits().end());
    next = argmax(ctx.logits());
  }
  return Status();
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace les::test
