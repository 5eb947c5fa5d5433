// Speculative decoding statistics; see speculative_stats.h.
#include "core/speculative/speculative_stats.h"

namespace les {

void SpeculativeStats::add(const VerifyPassStats& p) {
  passes.push_back(p);
  total.n_drafted += p.n_drafted;
  total.n_verified += p.n_verified;
  total.n_accepted += p.n_accepted;
  total.n_emitted += p.n_emitted;
  total.union_experts += p.union_experts;
  total.union_bytes += p.union_bytes;
  total.bytes_read += p.bytes_read;
  total.predicted_bytes += p.predicted_bytes;
  total.seconds += p.seconds;
  total.draft_seconds += p.draft_seconds;
  if (p.n_verified > 0) ++n_spec_passes;
}

double SpeculativeStats::acceptance_rate() const noexcept {
  return total.n_verified > 0 ? static_cast<double>(total.n_accepted) / total.n_verified : 0.0;
}

double SpeculativeStats::tokens_per_pass() const noexcept {
  return passes.empty() ? 0.0 : static_cast<double>(total.n_emitted) / static_cast<double>(passes.size());
}

double SpeculativeStats::bytes_per_token() const noexcept {
  return total.n_emitted > 0 ? static_cast<double>(total.bytes_read) / total.n_emitted : 0.0;
}

}  // namespace les
