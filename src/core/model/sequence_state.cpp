#include "core/model/sequence_state.h"

#include <algorithm>
#include <string>

namespace les {

Status SequenceState::check_room(int64_t n) const {
  if (n_past_ + n > kv_.n_ctx())
    return context_full_error("context full: " + std::to_string(n_past_) + " + " + std::to_string(n) +
                              " tokens exceed n_ctx " + std::to_string(kv_.n_ctx()));
  return Status();
}

Status SequenceState::checkpoint(int32_t max_replay) {
  LES_RETURN_IF_ERROR(rec_.checkpoint(max_replay));
  checkpoint_pos_ = n_past_;
  return Status();
}

void SequenceState::drop_checkpoint() noexcept {
  rec_.drop_checkpoint();
  checkpoint_pos_ = -1;
}

Status SequenceState::rollback(int32_t n_keep) {
  if (n_keep == n_past_) return Status();
  return restore(n_keep);
}

Status SequenceState::restore(int32_t n_keep) {
  if (n_keep < 0 || n_keep > n_past_)
    return invalid_argument_error("rollback to " + std::to_string(n_keep) + " positions, but " +
                                  std::to_string(n_past_) + " are filled");
  if (n_keep == 0) {
    reset();
    return Status();
  }
  if (has_recurrent()) {
    const int64_t reach =
        has_checkpoint() ? std::min<int64_t>(n_past_, checkpoint_pos_ + rec_.replayable()) : -1;
    if (!has_checkpoint() || n_keep < checkpoint_pos_ || n_keep > reach)
      return invalid_argument_error(
          "rollback to " + std::to_string(n_keep) + " positions: the recurrent (linear-attention) state can return "
          "to 0" +
          (has_checkpoint() ? " or to [" + std::to_string(checkpoint_pos_) + ", " + std::to_string(reach) + "]"
                            : std::string(" (no checkpoint taken)")));
    rec_.replay(n_keep - checkpoint_pos_);
  }
  n_past_ = n_keep;
  return Status();
}

void SequenceState::reset() noexcept {
  rec_.reset();
  n_past_ = 0;
  checkpoint_pos_ = -1;
}

}  // namespace les
