// MtpDrafter: the MTP head (mtp_head.h) as a DraftSource (draft_source.h).
// accept() runs the head over the accepted positions with the target's
// hidden rows (so its KV cache holds exactly llama.cpp's MTP context);
// draft(next, n) runs it on next with the last accepted hidden row, takes the
// argmax (ties to the lowest id), and chains: each further draft feeds the
// previous draft with the head's own h_mtp in place of the target row. The
// head's entry for `next` is kept when accept() confirms it (it is
// bit-identical to recomputing it: the forward pass is batch-invariant);
// chained entries are dropped and recomputed with the target's rows.
//
// The head's routed experts come from `experts` (resident, or the target's
// streaming source: layer index n_layer, so they share its cache and budget).
//
// Thread-safety: thread-compatible. The head and the expert source must
// outlive the drafter.
#pragma once

#include <memory>

#include "core/model/draft_source.h"
#include "core/model/mtp_head.h"

namespace les {

class MtpDrafter final : public DraftSource {
 public:
  MtpDrafter(MtpHead& head, ExpertSource& experts);

  Status accept(int32_t pos0, std::span<const int32_t> tokens, std::span<const float> hidden) override;
  Result<std::vector<int32_t>> draft(int32_t next, int32_t n_draft) override;
  void reset() noexcept override;

  // Positions accepted so far (the head's entries computed from target rows).
  int32_t n_accepted() const noexcept { return accepted_; }

 private:
  MtpHead& head_;
  ExpertSource& experts_;
  std::vector<float> h_last_;  // the target's hidden row of position accepted_ - 1 (zeros at 0)
  int32_t accepted_ = 0;
  int32_t drafted_token_ = -1;  // `next` of the last draft(), whose entry sits at accepted_
};

}  // namespace les
