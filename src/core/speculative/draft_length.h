// How many drafted tokens a verify pass should check: chosen from bytes and
// measured time, not from a fixed count.
//
// On a streamed MoE a verify pass of n = d + 1 tokens needs the union of
// their experts in every layer, so it can read several times the bytes of one
// token; resident, it costs the compute of n rows. Before each pass the
// decoder gives the policy the bytes the pass would read for every prefix
// (predicted expert union minus the cache's contents, from the lookahead
// routers: ExpertSource::predict_batch_bytes), and the policy picks
//   d* = argmax over d in [d_lo, n_avail] of  E(d) / T(d)
//   E(d) = 1 + a + a^2 + ... + a^d      expected tokens the pass emits: the
//          accepted drafts plus the target's own token, with a the drafter's
//          acceptance so far (per bucket, see Draft::bucket; geometric
//          model: each draft is accepted with probability a given the
//          previous ones were);
//   T(d) = C(d + 1) + w * bytes(d)      predicted seconds of the pass: C(n)
//          the measured compute time of n-row passes (wall time minus time
//          waiting for expert reads; unmeasured n interpolated by a
//          least-squares line through the measured ones), w the measured
//          read-wait seconds per predicted byte (I/O seconds per byte read
//          times the bytes actually read per byte predicted);
// so d = 0 (plain decoding) wins whenever speculation does not pay. All
// estimates are decayed running sums (recent passes weigh more; constants
// below). When d = 0 keeps winning, one pass in `explore` (doubling from 16
// up to 256 while the probes keep losing) verifies one draft anyway, so a
// drafter whose acceptance improved gets measured again; the cost of that is
// at most one extra row every 16 passes.
// For a drafter that costs time per token (a draft model), plan() bounds how
// many tokens to draft at all, with the drafting time added to T and bytes
// taken from the running per-prefix averages; a drafter that must first catch
// up with the text (a draft model after plain decoding) adds that time S to
// every d > 0: T(d) = C(d + 1) + w * bytes(d) + S + s * d. Its exploring
// probes are rationed: one is made only when its extra cost (S + s + the
// extra verify row C(2) - C(1)) is at most kExploreShare of the decode time
// since the last probe, so exploration can slow plain decoding by at most
// that share (the "no slower than plain by 3%").
//
// Thread-safety: thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace les {

struct DraftLengthParams {
  int32_t draft_max = 8;   // most drafts per pass (>= 1)
  int32_t draft_min = 0;   // fewest drafts verified when that many are available (0 = may switch speculation off)
  int32_t n_buckets = 1;   // Drafter::n_buckets()
};

class DraftLengthPolicy {
 public:
  explicit DraftLengthPolicy(const DraftLengthParams& p);

  // Tokens to ask the drafter for before drafting (0 = decode plainly this
  // step). Free drafters (seconds_per_token == 0) get draft_max.
  // catch_up_seconds: the drafter's time before it can draft (S above).
  int32_t plan(int32_t bucket, double draft_seconds_per_token, double catch_up_seconds = 0.0) const;
  // Most of the decode time exploring probes may cost a drafter that takes time.
  static constexpr double kExploreShare = 0.02;
  // The drafts to verify, in [min(draft_min, n_avail), n_avail], where
  // n_avail = prefix_bytes.size() - 1 and prefix_bytes[j] is the predicted
  // bytes a pass of the pending token plus j drafts reads. Counts the
  // exploration schedule, so call once per step.
  int32_t choose(int32_t bucket, std::span<const uint64_t> prefix_bytes);

  // A finished forward pass of n_tokens rows: its wall time, the part spent
  // waiting for expert reads, bytes read and bytes predicted before it.
  void record_pass(int32_t n_tokens, double seconds, double io_wait_seconds, uint64_t bytes_read,
                   uint64_t predicted_bytes);
  // The verify pass checked n_verified drafts of `bucket` and accepted n_accepted.
  void record_acceptance(int32_t bucket, int32_t n_verified, int32_t n_accepted);

  double acceptance(int32_t bucket) const;                         // a, in (0, 1)
  double expected_tokens(int32_t bucket, int32_t d) const;          // E(d)
  double compute_seconds(int32_t n_tokens) const;                   // C(n) (relative units before any pass)
  double wait_seconds_per_byte() const;                             // w
  double predicted_seconds(int32_t n_tokens, uint64_t bytes) const; // C(n) + w * bytes
  const DraftLengthParams& params() const noexcept { return p_; }

 private:
  struct Decayed {
    double sum = 0, weight = 0;
    void add(double v, double decay) {
      sum = sum * decay + v;
      weight = weight * decay + 1;
    }
    double mean() const { return weight > 0 ? sum / weight : 0; }
  };
  int32_t best(int32_t bucket, std::span<const uint64_t> prefix_bytes, int32_t lo, double draft_s,
               double fixed_s) const;

  DraftLengthParams p_;
  std::vector<double> acc_, trials_;     // per bucket, decayed, with a Beta(1, 1) prior
  std::vector<Decayed> compute_;         // per n = 1..draft_max + 1: compute seconds
  double wait_s_ = 0, read_bytes_ = 0, predicted_bytes_ = 0;  // decayed sums
  std::vector<Decayed> prefix_bytes_;    // per j = 0..draft_max: predicted bytes of a j-draft pass
  int32_t idle_ = 0;                     // steps since a draft was last verified
  int32_t explore_ = 16;                 // current exploration interval
  double since_probe_s_ = 0;             // pass seconds since the last verified draft
};

}  // namespace les
