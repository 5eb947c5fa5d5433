// The recurrent memory of a sequence's linear-attention (Gated DeltaNet)
// layers: per recurrent layer a conv state (the last d_conv - 1 raw qkv rows,
// oldest first) and a delta-rule state (n_v_heads matrices of head_dim x
// head_dim floats, each stored transposed as kernels::DeltaRuleArgs says).
// Both start at zero. Part of SequenceState (sequence_state.h), which holds it
// next to the attention layers' KV cache.
//
// Checkpoints. checkpoint() marks the current state; the next update of each
// layer reads it and writes a spare buffer (allocated on the first
// checkpoint), so the marked state survives at no copying cost: the delta
// rule's decay pass writes out of place instead of in place. restore() goes
// back to it in O(layers). With max_replay > 0 each layer also journals, per
// token after the checkpoint (up to max_replay tokens), what the state update
// consumed: the raw qkv row and the k, v, decay and beta of every head
// (journal row layout below); replay(n) then rebuilds the state after the
// first n of those tokens from the checkpoint with the same kernels, so it is
// bit-identical to the state the forward pass had reached there (the update
// is per token, whatever the batch). Memory: twice the state, plus
// max_replay x journal_row_floats() x 4 bytes per recurrent layer.
//
// Journal row of layer il for one token (floats): [qkv (conv_channels, before
// the conv) | k (n_k_heads x head_dim) | v (n_v_heads x head_dim) | decay
// (n_v_heads) | beta (n_v_heads)], with k and v after the conv, SiLU and (k)
// L2 norm.
//
// Thread-safety: thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/status.h"

namespace les {

struct RecurrentStateParams {
  std::vector<uint8_t> layers;  // per block: 1 = recurrent layer (Hparams::recurrent_layers)
  int32_t d_conv = 0;           // conv taps (the conv state holds d_conv - 1 rows)
  int32_t conv_channels = 0;    // q | k | v channels
  int32_t n_k_heads = 0;
  int32_t n_v_heads = 0;
  int32_t head_dim = 0;         // of k and v
};

class RecurrentState {
 public:
  RecurrentState() = default;  // no recurrent layer
  // Errors: invalid_argument (non-positive sizes with a recurrent layer),
  // out_of_memory.
  static Result<RecurrentState> create(const RecurrentStateParams& p);

  bool empty() const noexcept { return layers_.empty(); }
  const RecurrentStateParams& params() const noexcept { return p_; }
  size_t conv_floats() const noexcept { return conv_floats_; }  // (d_conv - 1) x conv_channels
  size_t ssm_floats() const noexcept { return ssm_floats_; }    // n_v_heads x head_dim^2
  size_t journal_row_floats() const noexcept { return row_floats_; }
  bool is_recurrent(int32_t il) const noexcept { return slot(il) != nullptr; }

  // Where layer il's next update reads its state and writes the new one.
  // conv_out / ssm_out are written completely by the update (the layer reads
  // conv_in / ssm_in before writing when they are the same buffer).
  struct Update {
    const float* conv_in;
    float* conv_out;
    const float* ssm_in;
    float* ssm_out;
  };
  // Precondition: is_recurrent(il).
  Update begin_update(int32_t il) noexcept;
  // The current state of layer il (conv_floats() / ssm_floats() floats), for
  // inspection. Precondition: is_recurrent(il).
  const float* conv_state(int32_t il) const noexcept;
  const float* ssm_state(int32_t il) const noexcept;
  // Replaces the current state of layer il with conv (conv_floats()) and ssm
  // (ssm_floats()) floats: restoring a saved session (session_state.h).
  // Precondition: is_recurrent(il), no checkpoint (call after reset()).
  void set_state(int32_t il, const float* conv, const float* ssm) noexcept;
  // The journal row of token `index` (0 = the first token after the
  // checkpoint) of layer il, or null when not journaling that far.
  float* journal_row(int32_t il, int64_t index) noexcept;

  // Marks the current state (see the top of the file); replaces an earlier
  // mark. Errors: invalid_argument (max_replay < 0), out_of_memory (nothing changes).
  Status checkpoint(int32_t max_replay);
  bool has_checkpoint() const noexcept { return has_checkpoint_; }
  // Tokens after the checkpoint that replay() can rebuild: those every layer journaled.
  int64_t replayable() const noexcept;
  // Back to the checkpoint's state; the checkpoint and the journal stay.
  void restore() noexcept;
  // restore(), then the first n journaled tokens, and the journal cut to n.
  // Precondition: 0 <= n <= replayable().
  void replay(int64_t n);
  // Forget the mark (the current state stays).
  void drop_checkpoint() noexcept;
  // All zero, no checkpoint.
  void reset() noexcept;
  // Bytes allocated (states, spare buffers, journal).
  size_t memory_bytes() const noexcept;

 private:
  struct Layer {
    int32_t il = 0;
    std::vector<float> conv[2], ssm[2];  // [1] allocated on the first checkpoint
    int cur = 0;                          // buffer holding the current state
    int base = 0;                         // buffer holding the checkpoint's state
    bool fresh = false;                   // next update reads `base`, writes the other buffer
    std::vector<float> journal;           // max_replay rows
    int64_t journaled = 0;                // rows written since the checkpoint
  };
  Layer* slot(int32_t il) noexcept;
  const Layer* slot(int32_t il) const noexcept;

  RecurrentStateParams p_;
  std::vector<int32_t> index_;  // per block: index into layers_, or -1
  std::vector<Layer> layers_;
  size_t conv_floats_ = 0, ssm_floats_ = 0, row_floats_ = 0;
  bool has_checkpoint_ = false;
  int32_t max_replay_ = 0;
};

}  // namespace les
