// Draft length from bytes and measured time; see draft_length.h.
#include "core/speculative/draft_length.h"

#include <algorithm>
#include <cmath>

namespace les {
namespace {

// Decay per new sample: a running sum forgets half its weight after about
// 7 samples (compute, bytes: per pass) or 23 (acceptance: per verified
// pass), so the estimates follow a cache that warms up or text that changes
// character, without jumping on one noisy pass.
constexpr double kDecay = 0.9;
constexpr double kAcceptDecay = 0.97;
// Before two batch sizes are measured, one more row costs this fraction of
// the measured pass (a batched row reads no extra dense weights, so it costs
// less than a pass); replaced by the fitted slope as soon as two sizes exist.
constexpr double kPriorRowCost = 0.5;
constexpr int32_t kExploreFirst = 16, kExploreMax = 256;

}  // namespace

DraftLengthPolicy::DraftLengthPolicy(const DraftLengthParams& p) : p_(p) {
  p_.draft_max = std::max(p_.draft_max, 1);
  p_.draft_min = std::clamp(p_.draft_min, 0, p_.draft_max);
  p_.n_buckets = std::max(p_.n_buckets, 1);
  acc_.assign(static_cast<size_t>(p_.n_buckets), 1.0);
  trials_.assign(static_cast<size_t>(p_.n_buckets), 2.0);
  compute_.resize(static_cast<size_t>(p_.draft_max) + 2);
  prefix_bytes_.resize(static_cast<size_t>(p_.draft_max) + 1);
  idle_ = kExploreFirst;  // the first opportunity verifies a draft
  explore_ = kExploreFirst;
}

double DraftLengthPolicy::acceptance(int32_t bucket) const {
  const size_t b = static_cast<size_t>(std::clamp(bucket, 0, p_.n_buckets - 1));
  return acc_[b] / trials_[b];
}

double DraftLengthPolicy::expected_tokens(int32_t bucket, int32_t d) const {
  const double a = acceptance(bucket);
  double e = 0, term = 1;
  for (int32_t i = 0; i <= d; ++i) {
    e += term;
    term *= a;
  }
  return e;
}

double DraftLengthPolicy::compute_seconds(int32_t n) const {
  n = std::max(n, 1);
  if (static_cast<size_t>(n) < compute_.size() && compute_[static_cast<size_t>(n)].weight > 0)
    return compute_[static_cast<size_t>(n)].mean();
  // Weighted least squares line C = c0 + c1 * (m - 1) through the measured sizes.
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  int32_t sizes = 0;
  for (size_t m = 1; m < compute_.size(); ++m) {
    const Decayed& c = compute_[m];
    if (c.weight <= 0) continue;
    const double x = static_cast<double>(m) - 1, y = c.mean(), w = c.weight;
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
    ++sizes;
  }
  const double x = static_cast<double>(n) - 1;
  if (sizes == 0) return 1.0 + kPriorRowCost * x;  // relative units
  const double mx = sx / sw, my = sy / sw;
  // One size m measured at C(m): a one-row pass costs C(m) / (1 + rho (m - 1)).
  if (sizes == 1) return my * (1.0 + kPriorRowCost * x) / (1.0 + kPriorRowCost * mx);
  const double var = sxx / sw - mx * mx;
  const double slope = var > 0 ? std::max(0.0, (sxy / sw - mx * my) / var) : 0.0;
  return std::max(1e-9, my + slope * (x - mx));
}

double DraftLengthPolicy::wait_seconds_per_byte() const {
  if (predicted_bytes_ > 0) return wait_s_ / predicted_bytes_;
  return read_bytes_ > 0 ? wait_s_ / read_bytes_ : 0.0;
}

double DraftLengthPolicy::predicted_seconds(int32_t n, uint64_t bytes) const {
  return compute_seconds(n) + wait_seconds_per_byte() * static_cast<double>(bytes);
}

int32_t DraftLengthPolicy::best(int32_t bucket, std::span<const uint64_t> prefix_bytes, int32_t lo,
                                double draft_s, double fixed_s) const {
  const int32_t n_avail = static_cast<int32_t>(prefix_bytes.size()) - 1;
  int32_t best_d = lo;
  double best_rate = -1;
  for (int32_t d = lo; d <= n_avail; ++d) {
    const double t = predicted_seconds(d + 1, prefix_bytes[static_cast<size_t>(d)]) + draft_s * d + (d > 0 ? fixed_s : 0.0);
    const double rate = expected_tokens(bucket, d) / std::max(t, 1e-12);
    if (rate > best_rate * (1.0 + 1e-9)) {  // ties keep the shorter draft
      best_rate = rate;
      best_d = d;
    }
  }
  return best_d;
}

int32_t DraftLengthPolicy::plan(int32_t bucket, double draft_seconds_per_token, double catch_up_seconds) const {
  if (!(draft_seconds_per_token > 0)) return p_.draft_max;
  const double fixed = catch_up_seconds > 0 ? catch_up_seconds : 0.0;
  std::vector<uint64_t> bytes(prefix_bytes_.size());
  for (size_t j = 0; j < bytes.size(); ++j) {
    // Unseen prefix lengths: the longest seen one's bytes plus its mean step.
    bytes[j] = static_cast<uint64_t>(prefix_bytes_[j].mean());
    if (prefix_bytes_[j].weight <= 0 && j > 0) bytes[j] = bytes[j - 1] + (j >= 2 ? bytes[j - 1] - bytes[j - 2] : 0);
  }
  const int32_t d = best(bucket, bytes, std::min(p_.draft_min, p_.draft_max), draft_seconds_per_token, fixed);
  if (d > 0 || idle_ < explore_) return d;
  // Exploration: an idle stretch reaching the interval drafts one token
  // anyway, if the probe's extra cost fits the exploration share of the time
  // decoded since the last one.
  const double probe = fixed + draft_seconds_per_token + std::max(0.0, compute_seconds(2) - compute_seconds(1));
  return probe <= kExploreShare * since_probe_s_ ? 1 : 0;
}

int32_t DraftLengthPolicy::choose(int32_t bucket, std::span<const uint64_t> prefix_bytes) {
  const int32_t n_avail = static_cast<int32_t>(prefix_bytes.size()) - 1;
  if (n_avail <= 0) {
    ++idle_;
    return 0;
  }
  for (int32_t j = 0; j <= n_avail && static_cast<size_t>(j) < prefix_bytes_.size(); ++j)
    prefix_bytes_[static_cast<size_t>(j)].add(static_cast<double>(prefix_bytes[static_cast<size_t>(j)]), kDecay);
  int32_t d = best(bucket, prefix_bytes, std::min(p_.draft_min, n_avail), 0.0, 0.0);
  if (d > 0) {
    idle_ = 0;
    explore_ = kExploreFirst;
    since_probe_s_ = 0;
    return d;
  }
  if (++idle_ >= explore_) {  // probe: verify one draft to keep the estimates current
    idle_ = 0;
    explore_ = std::min(2 * explore_, kExploreMax);
    since_probe_s_ = 0;
    d = 1;
  }
  return d;
}

void DraftLengthPolicy::record_pass(int32_t n_tokens, double seconds, double io_wait_seconds, uint64_t bytes_read,
                                    uint64_t predicted_bytes) {
  if (n_tokens < 1 || !(seconds >= 0)) return;
  const double wait = std::clamp(io_wait_seconds, 0.0, seconds);
  if (static_cast<size_t>(n_tokens) < compute_.size())
    compute_[static_cast<size_t>(n_tokens)].add(seconds - wait, kDecay);
  since_probe_s_ += seconds;
  wait_s_ = wait_s_ * kDecay + wait;
  read_bytes_ = read_bytes_ * kDecay + static_cast<double>(bytes_read);
  predicted_bytes_ = predicted_bytes_ * kDecay + static_cast<double>(predicted_bytes);
}

void DraftLengthPolicy::record_acceptance(int32_t bucket, int32_t n_verified, int32_t n_accepted) {
  if (n_verified <= 0) return;
  const size_t b = static_cast<size_t>(std::clamp(bucket, 0, p_.n_buckets - 1));
  n_accepted = std::clamp(n_accepted, 0, n_verified);
  // Geometric model: n_accepted successes, then one failure unless all passed.
  const double trials = n_accepted + (n_accepted < n_verified ? 1 : 0);
  acc_[b] = acc_[b] * kAcceptDecay + n_accepted;
  trials_[b] = trials_[b] * kAcceptDecay + trials;
  // Keep the prior's floor so a decayed estimate never reaches 0 or 1 exactly.
  acc_[b] = std::max(acc_[b], 1e-3);
  trials_[b] = std::max(trials_[b], acc_[b] + 1e-3);
}

}  // namespace les
