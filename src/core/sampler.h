// Token sampler: turns one step's logits into the next token id.
//
// The chain follows llama.cpp's default order (described in its common/sampling
// documentation; the math below is our own):
//   penalties -> top-k -> top-p -> min-p -> temperature -> draw
// * penalties (over the last `penalty_last_n` accepted tokens, each distinct
//   token t with count c): logit_t = logit_t > 0 ? logit_t / repeat_penalty
//   : logit_t * repeat_penalty; then logit_t -= c * frequency_penalty +
//   presence_penalty (CTRL-style repetition penalty plus OpenAI's
//   presence/frequency penalties).
// * top-k: keep the k largest logits (ties broken by the lower id).
// * top-p (nucleus, Holtzman et al. 2019): softmax over the survivors, keep
//   the smallest prefix (by descending probability) whose mass reaches top_p.
// * min-p: keep tokens with p >= min_p * p_max (p from the same softmax).
// * temperature: logits / temperature, then softmax and one draw.
// temperature == 0 means greedy: the argmax after penalties, ties going to the
// lowest id (as the reference fixtures were produced); the filters and the RNG
// are not used.
//
// Randomness: a std::mt19937_64 owned by the sampler, seeded from
// SamplerParams::seed (kRandomSeed: a seed drawn from std::random_device at
// create(), which params().seed then reports); a draw uses the top 53 bits of one 64-bit output as a
// uniform double in [0, 1) (no std:: distributions, whose output differs
// between standard libraries). Same seed + same logits + same accepted tokens
// => same tokens (across platforms too, up to last-bit differences of std::exp
// in the probabilities).
//
// Thread-safety: thread-compatible (one Sampler per generation stream).
#pragma once

#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <vector>

#include "util/status.h"

namespace les {

// SamplerParams::seed value meaning "draw a random seed" (llama.cpp's
// LLAMA_DEFAULT_SEED idea, widened to 64 bits).
inline constexpr uint64_t kRandomSeed = ~uint64_t{0};

struct SamplerParams {
  float temperature = 0.8f;        // >= 0; 0 = greedy
  int32_t top_k = 40;              // >= 0; 0 = disabled
  float top_p = 0.95f;             // in (0, 1]; 1 = disabled
  float min_p = 0.05f;             // in [0, 1]; 0 = disabled
  float repeat_penalty = 1.0f;     // > 0; 1 = disabled
  float presence_penalty = 0.0f;   // subtracted once from each token seen in the window; 0 = disabled
  float frequency_penalty = 0.0f;  // subtracted per occurrence in the window; 0 = disabled
  int32_t penalty_last_n = 64;     // >= 0; window of accepted tokens for the penalties; 0 = no penalties
  uint64_t seed = 0;               // RNG seed; kRandomSeed = random (reported by Sampler::params())
};

// Checks every field; invalid_argument naming the field and its value otherwise.
Status validate(const SamplerParams& p);

// A distribution over token ids: the tokens a draw can pick, with their
// probabilities (summing to 1 up to float rounding), in the order a draw
// walks them. Tokens not listed have probability 0.
struct TokenProbs {
  std::vector<int32_t> ids;
  std::vector<float> p;
  // p of `id`, 0 when not listed (linear in size()).
  float prob(int32_t id) const noexcept;
  size_t size() const noexcept { return ids.size(); }
};

class Sampler {
 public:
  // Errors: invalid_argument from validate(). A kRandomSeed seed is replaced
  // by a random one (params().seed tells which).
  static Result<Sampler> create(const SamplerParams& params);

  // Picks the next token from `logits` (n_vocab floats, index = token id).
  // Does not record the token: call accept() with the token actually appended.
  // Errors: invalid_argument (empty logits, a NaN or +inf logit, every logit -inf).
  Result<int32_t> sample(std::span<const float> logits);

  // The distribution sample() draws from for these logits and the current
  // penalty window: the chain's survivors with their softmax(logit /
  // temperature) probabilities; for temperature 0 the argmax with p = 1.
  // Consumes no randomness. Errors as sample(). (Speculative decoding's
  // rejection sampling needs p, not only a draw.)
  Result<TokenProbs> distribution(std::span<const float> logits);
  // One draw from `dist` with this sampler's RNG, walking `dist` in its order
  // (sample() at temperature > 0 is draw(distribution(logits)), the same RNG
  // use). Precondition: dist not empty.
  int32_t draw(const TokenProbs& dist);
  // A uniform double in [0, 1) from this sampler's RNG (53 random bits).
  double uniform() { return uniform01(); }

  // Records a token in the penalty window (prompt tokens and generated ones).
  // A negative id (a position filled from an embedding row, context.h) is
  // not a token and is ignored, as llama.cpp's samplers never see image rows.
  void accept(int32_t token);

  // Clears the penalty window and reseeds the RNG with params().seed.
  void reset();

  const SamplerParams& params() const noexcept { return params_; }

 private:
  explicit Sampler(const SamplerParams& p);

  struct Candidate {
    int32_t id;
    float logit;
    float p;
  };

  // candidates_ = the chain's survivors for `logits` with p filled, in the
  // order a draw walks them; greedy: the argmax alone. Errors as sample().
  Status build(std::span<const float> logits);
  void apply_penalties();
  void apply_top_k();
  // Fills p = softmax(logit * inv_temperature) over candidates_ (sorted or not).
  void softmax(double inv_temperature = 1.0);
  void sort_by_logit();
  void apply_top_p();
  void apply_min_p();
  double uniform01();

  SamplerParams params_;
  std::mt19937_64 rng_;
  std::deque<int32_t> history_;       // last penalty_last_n accepted tokens, oldest first
  std::vector<Candidate> candidates_; // scratch, reused across calls
  bool sorted_ = false;               // candidates_ sorted by descending logit (ties: lower id first)
};

}  // namespace les
