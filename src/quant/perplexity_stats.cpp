// Next-token scoring statistics; see perplexity_stats.h.
#include "quant/perplexity_stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace les::quant {

LogSoftmax LogSoftmax::of(const float* logits, int32_t n_vocab) {
  LogSoftmax r;
  r.max_logit = logits[0];
  for (int32_t i = 1; i < n_vocab; ++i)
    if (logits[i] > r.max_logit) {
      r.max_logit = logits[i];
      r.argmax = i;
    }
  double sum = 0;
  for (int32_t i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(logits[i] - r.max_logit));
  r.log_sum_exp = std::log(sum);
  return r;
}

// Codes cover [max - 16, max] of the logits in 65535 steps: log p below
// max - 16 (p < 1.1e-7 of the top token's) is stored as the floor.
double CompactLogProbs::encode(const float* logits, int32_t n_vocab, int32_t target, uint16_t* out) {
  const LogSoftmax ls = LogSoftmax::of(logits, n_vocab);
  float min_logit = logits[0];
  for (int32_t i = 1; i < n_vocab; ++i) min_logit = std::min(min_logit, logits[i]);
  min_logit = std::max(min_logit, ls.max_logit - 16.0f);
  const float lse = static_cast<float>(ls.log_sum_exp);
  const float min_log_prob = min_logit - ls.max_logit - lse;
  const float scale = (ls.max_logit - min_logit) / 65535.0f;
  std::memcpy(out, &scale, sizeof scale);
  std::memcpy(out + 2, &min_log_prob, sizeof min_log_prob);
  uint16_t* codes = out + 4;
  if (scale > 0) {
    const float inv = 1.0f / scale;
    for (int32_t i = 0; i < n_vocab; ++i)
      codes[i] = logits[i] > min_logit ? static_cast<uint16_t>(std::nearbyint(inv * (logits[i] - min_logit))) : 0;
  } else {
    std::fill(codes, codes + n_vocab, uint16_t{0});
  }
  if (n_vocab % 2 != 0) codes[n_vocab] = 0;
  return ls.nll(logits, target);
}

float CompactLogProbs::log_prob(const uint16_t* enc, int32_t i) {
  float scale = 0, min_log_prob = 0;
  std::memcpy(&scale, enc, sizeof scale);
  std::memcpy(&min_log_prob, enc + 2, sizeof min_log_prob);
  return scale * static_cast<float>(enc[4 + i]) + min_log_prob;
}

MeanError mean_and_error(double sum, double sum2, size_t count) {
  MeanError r;
  if (count == 0) return r;
  r.mean = sum / static_cast<double>(count);
  const double var = sum2 / static_cast<double>(count) - r.mean * r.mean;
  r.error = var > 0 && count > 1 ? std::sqrt(var / static_cast<double>(count - 1)) : 0.0;
  return r;
}

double NllStats::ppl() const { return std::exp(mean_and_error(sum, sum2, count).mean); }

double NllStats::ppl_error() const { return ppl() * mean_and_error(sum, sum2, count).error; }

void KldStats::add(const float* logits, int32_t n_vocab, const uint16_t* base, int32_t target) {
  const LogSoftmax ls = LogSoftmax::of(logits, n_vocab);
  const double nll_q = ls.nll(logits, target);
  const double nll_b = -static_cast<double>(CompactLogProbs::log_prob(base, target));
  nll.add(nll_q);
  nll_base.add(nll_b);
  sum_nll_nll_base += nll_q * nll_b;
  const double log_norm = static_cast<double>(ls.max_logit) + ls.log_sum_exp;
  double kld = 0;
  int32_t argmax_base = 0;
  float best = 0;
  for (int32_t i = 0; i < n_vocab; ++i) {
    const float lp_b = CompactLogProbs::log_prob(base, i);
    if (i == 0 || lp_b > best) {
      best = lp_b;
      argmax_base = i;
    }
    if (lp_b > -16.0f) kld += std::exp(static_cast<double>(lp_b)) * (lp_b - (logits[i] - log_norm));
  }
  sum_kld += kld;
  sum_kld2 += kld * kld;
  kld_values.push_back(static_cast<float>(kld));
  if (argmax_base == ls.argmax) ++n_same_top;
}

void KldStats::merge(const KldStats& o) {
  nll.merge(o.nll);
  nll_base.merge(o.nll_base);
  sum_nll_nll_base += o.sum_nll_nll_base;
  sum_kld += o.sum_kld;
  sum_kld2 += o.sum_kld2;
  n_same_top += o.n_same_top;
  kld_values.insert(kld_values.end(), o.kld_values.begin(), o.kld_values.end());
}

MeanError KldStats::top1() const {
  MeanError r;
  const size_t n = count();
  if (n == 0) return r;
  r.mean = static_cast<double>(n_same_top) / static_cast<double>(n);
  r.error = n > 1 ? std::sqrt(r.mean * (1 - r.mean) / static_cast<double>(n - 1)) : 0.0;
  return r;
}

MeanError KldStats::ppl_ratio() const {
  const size_t n = count();
  const MeanError q = mean_and_error(nll.sum, nll.sum2, n);
  const MeanError b = mean_and_error(nll_base.sum, nll_base.sum2, n);
  double cov = 0;
  if (n > 1) {
    const double dn = static_cast<double>(n);
    cov = (sum_nll_nll_base / dn - (nll.sum / dn) * (nll_base.sum / dn)) / (dn - 1);
  }
  MeanError r;
  r.mean = std::exp(q.mean - b.mean);
  r.error = r.mean * std::sqrt(std::max(0.0, q.error * q.error + b.error * b.error - 2 * cov));
  return r;
}

double KldStats::kld_percentile(double q) {
  if (kld_values.empty()) return 0;
  std::sort(kld_values.begin(), kld_values.end());
  if (q <= 0) return kld_values.front();
  if (q >= 1) return kld_values.back();
  const double p = q * static_cast<double>(kld_values.size() - 1);
  const size_t i = static_cast<size_t>(p);
  const double f = p - static_cast<double>(i);
  const size_t j = std::min(i + 1, kld_values.size() - 1);
  return (1 - f) * kld_values[i] + f * kld_values[j];
}

}  // namespace les::quant
