// The state of one sequence (generation stream): everything the forward pass
// remembers about the tokens it has seen. One abstraction for every
// architecture: the KV cache of the attention layers (kv_cache.h), the conv
// and delta-rule states of linear-attention layers (recurrent_state.h, empty
// for pure-attention models), and the number of positions filled.
//
// Rollback. An attention-only sequence can drop any suffix (rollback to
// n_keep <= n_past: later K/V rows are simply overwritten). A recurrent state
// cannot be unwound, so a sequence with one rolls back only to a checkpoint
// taken earlier: checkpoint(max_replay) marks the state at n_past (no copy:
// the next update of each layer writes a spare buffer), and rollback(n_keep)
// then accepts any n_keep from the checkpoint up to the checkpoint plus the
// tokens journaled since (at most max_replay), replaying the journaled
// recurrent updates from the checkpoint (bit-identical: the update is per
// token). Speculative decoding checkpoints before a verify batch of d drafted
// tokens with max_replay >= d, then rolls back to the accepted prefix.
// rollback(0) (= reset) and rollback(n_past) always work.
//
// Thread-safety: thread-compatible (one thread at a time); the const accessors
// may be used from several threads at once while nothing is stored.
#pragma once

#include <cstdint>

#include "core/model/kv_cache.h"
#include "core/model/recurrent_state.h"
#include "util/status.h"

namespace les {

class SequenceState {
 public:
  explicit SequenceState(KvCache kv, RecurrentState rec = {}) : kv_(std::move(kv)), rec_(std::move(rec)) {}

  int32_t n_past() const noexcept { return n_past_; }
  int32_t n_ctx() const noexcept { return kv_.n_ctx(); }
  KvCache& kv() noexcept { return kv_; }
  const KvCache& kv() const noexcept { return kv_; }
  RecurrentState& recurrent() noexcept { return rec_; }
  const RecurrentState& recurrent() const noexcept { return rec_; }
  bool has_recurrent() const noexcept { return !rec_.empty(); }

  // context_full if n more positions do not fit; nothing changes either way.
  Status check_room(int64_t n) const;
  // Marks n positions (already written) as filled. Precondition: check_room(n) ok.
  void advance(int32_t n) noexcept { n_past_ += n; }

  // Marks the state at n_past (replacing an earlier checkpoint); up to
  // max_replay tokens after it can be rolled back to individually. Errors:
  // invalid_argument (max_replay < 0), out_of_memory (nothing changes).
  Status checkpoint(int32_t max_replay);
  bool has_checkpoint() const noexcept { return checkpoint_pos_ >= 0; }
  int32_t checkpoint_pos() const noexcept { return checkpoint_pos_; }  // -1 without a checkpoint
  // Forgets the checkpoint (the state stays).
  void drop_checkpoint() noexcept;
  // Keeps the first n_keep positions (see the top of the file). Errors:
  // invalid_argument (n_keep outside [0, n_past]; with a recurrent state, a
  // position no checkpoint can reach: the message names the reachable range);
  // nothing changes then. rollback(0) also drops the checkpoint.
  Status rollback(int32_t n_keep);
  // As rollback(), but n_keep == n_past also returns the recurrent state to
  // the checkpoint's replay of that position: this undoes the updates a failed
  // forward pass made before n_past advanced. Errors as rollback (with a
  // recurrent state, n_keep must be 0 or within reach of a checkpoint).
  Status restore(int32_t n_keep);
  // rollback() under its older name (speculative rollback, conversation trimming).
  Status trim(int32_t n_keep) { return rollback(n_keep); }
  // Empty sequence: n_past 0, recurrent state zero, no checkpoint.
  void reset() noexcept;
  // Bytes held by the KV cache and the recurrent state.
  size_t memory_bytes() const noexcept { return kv_.memory_bytes() + rec_.memory_bytes(); }

 private:
  KvCache kv_;
  RecurrentState rec_;
  int32_t n_past_ = 0;
  int32_t checkpoint_pos_ = -1;
};

}  // namespace les
