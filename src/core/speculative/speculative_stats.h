// Statistics of speculative decoding: one record per target forward pass of
// the decode phase (a verify pass, or a plain one-token pass when the policy
// chose d = 0) and totals.
//
// Units: tokens, distinct (layer, expert) pairs, bytes, seconds (steady
// clock). "Union" = the experts the pass's rows selected together, each
// counted once per layer (what the pass had to hold, resident or streamed);
// "bytes read" = what the expert cache read from the file during the pass
// (0 when experts are resident).
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <vector>

namespace les {

struct VerifyPassStats {
  int32_t n_drafted = 0;       // tokens the drafter proposed
  int32_t n_verified = 0;      // drafts the pass checked (d; 0 = a plain pass)
  int32_t n_accepted = 0;      // drafts accepted
  int32_t n_emitted = 0;       // tokens the pass produced: n_accepted + the target's own
  int64_t union_experts = 0;   // distinct (layer, expert) pairs the pass used
  uint64_t union_bytes = 0;    // their bytes
  uint64_t bytes_read = 0;     // expert bytes read from the file during the pass
  uint64_t predicted_bytes = 0;  // what the policy predicted the pass would read
  double seconds = 0;          // the forward pass (wall)
  double draft_seconds = 0;    // drafting before it
};

struct SpeculativeStats {
  std::vector<VerifyPassStats> passes;  // in order
  VerifyPassStats total;                // field sums over passes
  int32_t n_spec_passes = 0;            // passes with n_verified > 0

  void add(const VerifyPassStats& p);
  void clear() { *this = SpeculativeStats(); }
  // accepted / verified drafts (0 when none was verified)
  double acceptance_rate() const noexcept;
  // emitted tokens per target pass
  double tokens_per_pass() const noexcept;
  // bytes read per emitted token
  double bytes_per_token() const noexcept;
};

}  // namespace les
