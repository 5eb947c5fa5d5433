// Token sampler; see sampler.h for the chain and the math.
#include "core/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

namespace les {
namespace {

std::string fmt_float(float v) { return std::to_string(v); }

// Descending logit, then ascending id: a total, deterministic order.
bool higher(float la, int32_t ia, float lb, int32_t ib) { return la > lb || (la == lb && ia < ib); }

}  // namespace

Status validate(const SamplerParams& p) {
  if (!(p.temperature >= 0.0f) || !std::isfinite(p.temperature))
    return invalid_argument_error("sampler: temperature must be a finite value >= 0, got " + fmt_float(p.temperature));
  if (p.top_k < 0) return invalid_argument_error("sampler: top_k must be >= 0 (0 = disabled), got " + std::to_string(p.top_k));
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f))
    return invalid_argument_error("sampler: top_p must be in (0, 1], got " + fmt_float(p.top_p));
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f))
    return invalid_argument_error("sampler: min_p must be in [0, 1], got " + fmt_float(p.min_p));
  if (!(p.repeat_penalty > 0.0f) || !std::isfinite(p.repeat_penalty))
    return invalid_argument_error("sampler: repeat_penalty must be a finite value > 0, got " + fmt_float(p.repeat_penalty));
  if (!std::isfinite(p.presence_penalty))
    return invalid_argument_error("sampler: presence_penalty must be finite, got " + fmt_float(p.presence_penalty));
  if (!std::isfinite(p.frequency_penalty))
    return invalid_argument_error("sampler: frequency_penalty must be finite, got " + fmt_float(p.frequency_penalty));
  if (p.penalty_last_n < 0)
    return invalid_argument_error("sampler: penalty_last_n must be >= 0, got " + std::to_string(p.penalty_last_n));
  return Status();
}

Sampler::Sampler(const SamplerParams& p) : params_(p), rng_(p.seed) {}

Result<Sampler> Sampler::create(const SamplerParams& params) {
  LES_RETURN_IF_ERROR(validate(params));
  SamplerParams p = params;
  if (p.seed == kRandomSeed) {
    // 64 bits from the OS's entropy source; never kRandomSeed itself.
    std::random_device rd;
    do p.seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    while (p.seed == kRandomSeed);
  }
  return Sampler(p);
}

void Sampler::accept(int32_t token) {
  if (params_.penalty_last_n == 0 || token < 0) return;
  history_.push_back(token);
  while (history_.size() > static_cast<size_t>(params_.penalty_last_n)) history_.pop_front();
}

void Sampler::reset() {
  history_.clear();
  rng_.seed(params_.seed);
}

double Sampler::uniform01() {
  // 53 random bits -> a double in [0, 1).
  return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0);
}

void Sampler::apply_penalties() {
  const bool active = params_.repeat_penalty != 1.0f || params_.presence_penalty != 0.0f ||
                      params_.frequency_penalty != 0.0f;
  if (!active || history_.empty()) return;
  std::unordered_map<int32_t, int32_t> counts;
  for (int32_t t : history_) ++counts[t];
  // candidates_ is still indexed by id here (apply_penalties runs first).
  for (const auto& [tok, c] : counts) {
    if (tok < 0 || static_cast<size_t>(tok) >= candidates_.size()) continue;
    float& l = candidates_[tok].logit;
    if (l > 0) l /= params_.repeat_penalty;
    else l *= params_.repeat_penalty;
    l -= static_cast<float>(c) * params_.frequency_penalty + params_.presence_penalty;
  }
}

void Sampler::sort_by_logit() {
  if (sorted_) return;
  std::sort(candidates_.begin(), candidates_.end(),
            [](const Candidate& a, const Candidate& b) { return higher(a.logit, a.id, b.logit, b.id); });
  sorted_ = true;
}

void Sampler::apply_top_k() {
  const size_t k = static_cast<size_t>(params_.top_k);
  if (k == 0 || k >= candidates_.size()) return;
  auto cmp = [](const Candidate& a, const Candidate& b) { return higher(a.logit, a.id, b.logit, b.id); };
  std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(k), candidates_.end(), cmp);
  candidates_.resize(k);
  sorted_ = true;
}

void Sampler::softmax(double inv_temperature) {
  float max_l = -std::numeric_limits<float>::infinity();
  for (const auto& c : candidates_) max_l = std::max(max_l, c.logit);
  double sum = 0;
  for (auto& c : candidates_) {
    // (l - max) <= 0 and finite here, so the scaled value cannot be NaN; it may underflow to 0.
    c.p = static_cast<float>(std::exp((static_cast<double>(c.logit) - max_l) * inv_temperature));
    sum += c.p;
  }
  for (auto& c : candidates_) c.p = static_cast<float>(c.p / sum);
}

void Sampler::apply_top_p() {
  if (params_.top_p >= 1.0f) return;
  sort_by_logit();
  softmax();
  double cum = 0;
  size_t keep = candidates_.size();
  for (size_t i = 0; i < candidates_.size(); ++i) {
    cum += candidates_[i].p;
    if (cum >= params_.top_p) {
      keep = i + 1;
      break;
    }
  }
  candidates_.resize(keep);
}

void Sampler::apply_min_p() {
  if (params_.min_p <= 0.0f) return;
  softmax();
  float p_max = 0;
  for (const auto& c : candidates_) p_max = std::max(p_max, c.p);
  const float threshold = params_.min_p * p_max;
  // The argmax always survives (p_max >= threshold since min_p <= 1).
  std::erase_if(candidates_, [threshold](const Candidate& c) { return c.p < threshold; });
}

Status Sampler::build(std::span<const float> logits) {
  if (logits.empty()) return invalid_argument_error("sampler: empty logits");
  candidates_.clear();
  candidates_.reserve(logits.size());
  bool any_finite = false;
  for (size_t i = 0; i < logits.size(); ++i) {
    const float l = logits[i];
    if (std::isnan(l)) return invalid_argument_error("sampler: logit of token " + std::to_string(i) + " is NaN");
    // +inf has no probability (exp(inf - inf) is NaN): an overflowed model, never a real logit.
    if (l == std::numeric_limits<float>::infinity())
      return invalid_argument_error("sampler: logit of token " + std::to_string(i) + " is +inf");
    if (l > -std::numeric_limits<float>::infinity()) any_finite = true;
    candidates_.push_back({static_cast<int32_t>(i), l, 0.0f});
  }
  if (!any_finite) return invalid_argument_error("sampler: every logit is -inf");
  sorted_ = false;

  apply_penalties();

  if (params_.temperature == 0.0f) {
    const Candidate* best = &candidates_[0];
    for (const auto& c : candidates_)
      if (c.logit > best->logit) best = &c;  // strict >: ties keep the lowest id
    const Candidate argmax{best->id, best->logit, 1.0f};
    candidates_.assign(1, argmax);
    return Status();
  }

  // Masked tokens (-inf, possibly after a presence penalty) never survive.
  std::erase_if(candidates_, [](const Candidate& c) { return !(c.logit > -std::numeric_limits<float>::infinity()); });
  if (candidates_.empty()) return invalid_argument_error("sampler: every logit is -inf after penalties");

  apply_top_k();
  apply_top_p();
  apply_min_p();

  softmax(1.0 / static_cast<double>(params_.temperature));
  return Status();
}

Result<int32_t> Sampler::sample(std::span<const float> logits) {
  LES_RETURN_IF_ERROR(build(logits));
  if (params_.temperature == 0.0f) return candidates_[0].id;  // greedy uses no randomness
  const double u = uniform01();
  double cum = 0;
  for (const auto& c : candidates_) {
    cum += c.p;
    if (u < cum) return c.id;
  }
  return candidates_.back().id;  // rounding: u landed in the last sliver
}

Result<TokenProbs> Sampler::distribution(std::span<const float> logits) {
  LES_RETURN_IF_ERROR(build(logits));
  TokenProbs d;
  d.ids.reserve(candidates_.size());
  d.p.reserve(candidates_.size());
  for (const auto& c : candidates_) {
    d.ids.push_back(c.id);
    d.p.push_back(c.p);
  }
  return d;
}

int32_t Sampler::draw(const TokenProbs& dist) {
  const double u = uniform01();
  double cum = 0;
  for (size_t i = 0; i < dist.ids.size(); ++i) {
    cum += dist.p[i];
    if (u < cum) return dist.ids[i];
  }
  return dist.ids.back();  // rounding: u landed in the last sliver
}

float TokenProbs::prob(int32_t id) const noexcept {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == id) return p[i];
  return 0.0f;
}

}  // namespace les
