// Scoring a model's next-token predictions: the negative log-likelihood of
// the observed token, and, against a reference model's log-probabilities,
// the KL divergence and whether both models pick the same top-1 token.
// The statistics are llama-perplexity's (PPL = exp(mean NLL), uncertainty
// from the NLL's standard error; KLD(base || model) summed over the tokens
// whose reference log-probability is above -16), so the figures compare
// with its output directly.
//
// Thread-safety: plain values; one accumulator per thread, merge() after.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace les::quant {

// A reference model's log-probabilities over the vocabulary, stored compactly
// as llama-perplexity's --kl-divergence-base file does: two floats (scale,
// min_log_prob) then n_vocab uint16 codes, log p_i = scale * code_i + min_log_prob,
// with codes 0 for everything below max - 16. `n_words()` uint16 per position.
struct CompactLogProbs {
  // uint16 words one position takes: 4 (the two floats) + n_vocab rounded up to even.
  static size_t n_words(int32_t n_vocab) { return 2 * ((static_cast<size_t>(n_vocab) + 1) / 2) + 4; }
  // Encodes `logits` (n_vocab floats) into `out` (n_words(n_vocab) uint16);
  // returns the NLL of token `target` (0 <= target < n_vocab).
  static double encode(const float* logits, int32_t n_vocab, int32_t target, uint16_t* out);
  // log p of token i from an encoded position.
  static float log_prob(const uint16_t* enc, int32_t i);
};

// Log-softmax of one logit row: max logit and log(sum exp(l - max)) (double sum).
struct LogSoftmax {
  float max_logit = 0;
  int32_t argmax = 0;
  double log_sum_exp = 0;
  static LogSoftmax of(const float* logits, int32_t n_vocab);
  // -log p(token).
  double nll(const float* logits, int32_t token) const { return max_logit + log_sum_exp - logits[token]; }
};

// Mean and its standard error from a sum, a sum of squares and a count
// (0 error for fewer than 2 values).
struct MeanError {
  double mean = 0, error = 0;
};
MeanError mean_and_error(double sum, double sum2, size_t count);

// Perplexity accumulator: sum and sum of squares of the NLL per scored token.
struct NllStats {
  double sum = 0, sum2 = 0;
  size_t count = 0;
  void add(double nll) { sum += nll; sum2 += nll * nll; ++count; }
  void merge(const NllStats& o) { sum += o.sum; sum2 += o.sum2; count += o.count; }
  // exp(mean NLL) and its uncertainty (PPL x standard error of the mean NLL).
  double ppl() const;
  double ppl_error() const;
};

// KL divergence accumulator of a model against a reference (CompactLogProbs).
struct KldStats {
  NllStats nll, nll_base;
  double sum_nll_nll_base = 0;
  double sum_kld = 0, sum_kld2 = 0;
  size_t n_same_top = 0;
  std::vector<float> kld_values;  // every position's KLD, for percentiles
  // Scores one position: `logits` of the model, `base` the reference's encoding,
  // `target` the observed next token.
  void add(const float* logits, int32_t n_vocab, const uint16_t* base, int32_t target);
  void merge(const KldStats& o);
  size_t count() const { return nll.count; }
  MeanError kld() const { return mean_and_error(sum_kld, sum_kld2, count()); }
  // Fraction of positions where the model's and the reference's argmax agree, and its error.
  MeanError top1() const;
  // PPL(model) / PPL(base) = exp(mean ln ratio) and its uncertainty (with the covariance).
  MeanError ppl_ratio() const;
  // The q-quantile (0..1) of the per-position KLDs, linear interpolation (sorts kld_values).
  double kld_percentile(double q);
};

}  // namespace les::quant
