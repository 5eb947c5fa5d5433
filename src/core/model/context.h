// One generation stream over a Model: the sequence state (KV cache and, for
// hybrid models, the recurrent state) plus
// forward-pass scratch and the logits of the last decode.
//
// A Context is a session: it remembers the token ids of its positions
// (tokens()), and may hold one pending token, accepted into the sequence but
// not evaluated yet (the last token a generation delivered: evaluating it
// right away would cost a forward pass nobody may need). The next decode()
// evaluates the pending token first, in the same batch, so a conversation
// continues exactly where the last generation stopped.
//
// Usage: auto ctx = Context::create(model, {}); ctx->decode(prompt_ids);
// then argmax over ctx->logits(); ctx->decode({next_id}); ...
//
// Thread-safety: thread-compatible (one thread at a time per Context). Several
// Contexts may share one Model.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/model/expert_source.h"
#include "core/model/forward.h"
#include "core/model/sequence_state.h"
#include "core/model/model.h"
#include "core/model/moe_layer.h"
#include "kernels/ggml_type.h"
#include "kernels/thread_pool.h"
#include "util/status.h"

namespace les {

struct ContextParams {
  int32_t n_ctx = 0;       // tokens; 0 = min(model's context_length, 4096)
  int32_t n_batch = 512;   // max tokens per forward chunk (prefill)
  int n_threads = 0;       // kernel threads incl. the caller; 0 = ModelParams.n_threads, then hardware;
                           // at most kernels::ThreadPool::max_threads()
  GgmlType kv_type = GgmlType::F16;  // KV cache type: F16 or Q8_0 (kv_cache.h; Q8_0 needs head_dim % 32 == 0)
  // Keep every decoded token's final hidden state after output_norm
  // (hidden_all()): the input of an MTP draft head. The last layer then runs
  // every row.
  bool output_hidden = false;
};

class Context {
 public:
  // `experts`: where the MoE layers get routed experts; the Context owns it
  // (null: the model's resident experts). A streaming source is built and
  // handed in by sched::create_context (sched/context_factory.h), the one place
  // that wires a streaming context. Errors: those of check_params,
  // unsupported (kv_type not F16/Q8_0, or Q8_0 with head_dim / head_dim_v not
  // a multiple of 32), out_of_memory. `model` must outlive the Context.
  static Result<std::unique_ptr<Context>> create(const Model& model, const ContextParams& p,
                                                 std::unique_ptr<ExpertSource> experts = nullptr);
  // The checks create() makes on `p` alone. Errors: invalid_argument (n_ctx < 0, n_batch < 1,
  // n_threads outside [0, ThreadPool::max_threads()], see thread_count.h).
  static Status check_params(const ContextParams& p);

  // Appends tokens at positions n_past()..n_past()+n-1 and runs the forward pass
  // (batched prefill in chunks of n_batch); a pending token is evaluated first,
  // in the same batch. Afterwards logits() holds the last token's logits
  // (n_vocab floats); with all_logits, logits_all() holds n x n_vocab
  // (token-major; `tokens` only, never the pending token's row; likewise
  // hidden_all()). Errors: invalid_argument (no tokens and none pending, token
  // id out of range), context_full (n_tokens() + n > n_ctx; nothing appended),
  // errors of the expert source, cancelled (set_interrupt: between chunks).
  // On error, n_past(), pending(), the sequence
  // state (KV cache and recurrent state: rolled back) and the logits are
  // unchanged (if a recurrent state cannot return, the context is reset and
  // the message says so).
  // rows_as_decode: compute each row bit-identical to decoding it alone (a
  // speculative verify pass; AttentionLayerScratch::rows_as_decode). Without
  // it a batch follows llama.cpp's batched attention order for an F16 KV
  // cache, whose last bits differ from single-token decoding.
  Status decode(std::span<const int32_t> tokens, bool all_logits = false, bool rows_as_decode = false);
  // Appends n = embd.size() / n_embd embedding rows (row-major n x n_embd
  // floats, e.g. a vision projector's image embeddings) at positions
  // n_past()..n_past()+n-1, one position per row, each row taking the place
  // of a token's token_embd row (plain sequential positions: what llama.cpp
  // gives image embeddings for a text model whose M-RoPE sections are all
  // equal, e.g. qwen35moe; docs/model-graphs.md section 6, "Prompt layout
  // and decoder positions"). Otherwise as decode(): a pending token goes first, chunks of
  // n_batch, logits() afterwards holds the last row's logits; tokens() shows
  // kEmbeddingToken (-1) for these positions. Errors: invalid_argument (no
  // rows, a size that is not a multiple of n_embd, a non-finite value: the
  // message names its row), context_full, errors of the expert source; on
  // error nothing changes, as for decode().
  Status decode_embeddings(std::span<const float> embd, bool all_logits = false);
  // Token ids and embedding rows in one call (a prompt with images): tokens[i]
  // is an id, or kEmbeddingToken for a position that takes the next row of
  // `embd` (row-major, n_embd floats per row, as many rows as tokens holds
  // kEmbeddingToken). One decode: on error nothing changes (also for a
  // recurrent state), as decode(). Errors: invalid_argument (no tokens, an id
  // out of range, a row count that differs from the kEmbeddingToken count, a
  // non-finite value: named), context_full, errors of the expert source.
  Status decode_mixed(std::span<const int32_t> tokens, std::span<const float> embd, bool all_logits = false);

  std::span<const float> logits() const;      // last decoded token; empty before the first decode
  std::span<const float> logits_all() const;  // all tokens of the last decode (if requested), else empty
  // With ContextParams::output_hidden: the last decode's n x n_embd final
  // hidden rows (after output_norm) of positions hidden_pos0() .., the
  // pending token's row first when the decode evaluated one; else empty.
  std::span<const float> hidden_all() const;
  // Position of hidden_all()'s first row: last_decode_pos0(), or one less
  // when the last decode evaluated a pending token first.
  int32_t hidden_pos0() const noexcept { return hidden_pos0_; }
  // Position of the last decode's first row (of logits_all() and
  // hidden_all()); 0 before the first decode.
  int32_t last_decode_pos0() const noexcept { return all_pos0_; }
  bool keeps_hidden() const noexcept { return params_.output_hidden; }  // ContextParams::output_hidden
  // Turns ContextParams::output_hidden on or off from the next decode on
  // (hidden_all() of earlier decodes is not recomputed).
  void set_output_hidden(bool on) noexcept { params_.output_hidden = on; }
  int32_t n_past() const noexcept { return seq_.n_past(); }
  int32_t n_ctx() const noexcept { return seq_.n_ctx(); }
  int n_threads() const noexcept { return params_.n_threads; }
  const Model& model() const noexcept { return model_; }

  void reset() noexcept;           // clears the sequence state, the token ids and the pending token
  // Keeps the first n_keep tokens of the sequence (positions, then the pending
  // token: n_keep == n_past() drops only the pending token). Any n_keep <=
  // n_past() for attention-only models; with a recurrent (linear-attention)
  // state, see SequenceState::rollback (0, n_past, or within reach of a
  // checkpoint). Errors: invalid_argument (n_keep < 0 or > n_tokens(), or a
  // position the recurrent state cannot return to); nothing changes then.
  // After dropping positions, logits() is the kept last position's row when
  // the last decode computed every row's logits and holds that row (a
  // speculative verify pass rolled back), else empty (has_logits() false);
  // logits_all() and hidden_all() still describe the last decode.
  Status trim(int32_t n_keep);
  // Marks the sequence state at n_past() so that trim() can return to any of
  // the next max_replay positions (SequenceState::checkpoint). Errors:
  // invalid_argument, out_of_memory.
  Status checkpoint(int32_t max_replay) { return seq_.checkpoint(max_replay); }
  void drop_checkpoint() noexcept { seq_.drop_checkpoint(); }
  const SequenceState& sequence() const noexcept { return seq_; }

  // The routed experts the last decode used: distinct (layer, expert) pairs
  // summed over MoE layers (an expert counts once per layer however many
  // tokens selected it) and their bytes. Zero for a dense model.
  struct ExpertUnion {
    int64_t experts = 0;
    uint64_t bytes = 0;
  };
  ExpertUnion last_expert_union() const noexcept { return union_; }

  // Session: the ids of positions 0..n_past()-1 in order (kEmbeddingToken
  // for a position decode_embeddings() filled).
  std::span<const int32_t> tokens() const noexcept { return tokens_; }
  // The pending token, or -1 (none).
  int32_t pending() const noexcept { return pending_; }
  // n_past() plus the pending token, if any: what the sequence holds.
  int32_t n_tokens() const noexcept { return n_past() + (pending_ >= 0 ? 1 : 0); }
  // Sets the pending token. Errors: invalid_argument (id out of range, or a
  // pending token already set), context_full (no position left for it).
  Status set_pending(int32_t token);
  // True when logits() belongs to position n_past() - 1 (false before the
  // first decode, after reset, and after a trim that dropped that position).
  bool has_logits() const noexcept { return !logits_.empty(); }

  // The session's state (tokens, pending token, KV cache rows, recurrent
  // state) in the format of core/model/session_state.h, and back.
  // load_state() checks everything before changing anything: on error the
  // context is unchanged. Defined in session_state.cpp.
  Result<std::vector<uint8_t>> save_state() const;
  Status load_state(std::span<const uint8_t> bytes);
  // The size of save_state() for a context holding n_ctx() positions: the
  // largest state this context can load (a file reader's bound).
  uint64_t max_state_bytes() const;

  // Interrupting a long decode (a prefill of many chunks): `f` is polled
  // between the forward chunks of every decode (never before the first, so a
  // decode of at most n_batch rows, e.g. one token, always completes; never
  // inside a speculative verify pass, rows_as_decode) and by callers between
  // their own steps (interrupt_requested();
  // the generation loop before each token). Returning true stops the decode:
  // cancelled, with nothing of it kept (as any decode error: n_past(),
  // pending(), the sequence state and the logits unchanged). The hook may
  // consume what it reports (a cancel request is one-shot). Empty (default):
  // never interrupted. Called on the decoding thread.
  using Interrupt = std::function<bool()>;
  void set_interrupt(Interrupt f) { interrupt_ = std::move(f); }
  bool interrupt_requested() const { return interrupt_ && interrupt_(); }

  // Debug hook: called per MoE layer with the router's decisions (tests, statistics).
  void set_router_observer(RouterObserver obs) { observers_.router = std::move(obs); }
  // Called per weight matrix with its input rows (forward_observers.h; the imatrix).
  // An empty function removes it.
  void set_activation_observer(ActivationObserver obs) { observers_.activations = std::move(obs); }
  // Bench only (routing_override.h): every MoE layer computes the experts
  // `f` names instead of its router's choice. Not reachable from les.h.
  void set_routing_override(RoutingOverride f) { routing_override_ = std::move(f); }
  // The expert source this Context runs on: its own (given to create) or the
  // model's resident one. Valid as long as the Context.
  ExpertSource& expert_source() const noexcept { return own_experts_ ? *own_experts_ : model_.resident_experts(); }

 private:
  Context(const Model& model, SequenceState seq, const ContextParams& p, std::unique_ptr<ExpertSource> experts)
      : model_(model), seq_(std::move(seq)), params_(p), own_experts_(std::move(experts)),
        pool_(std::make_unique<kernels::ThreadPool>(p.n_threads)) {
    scratch_.mm.pool = pool_.get();
    pool_->set_idle_spin(expert_source().compute_idle_spin());
  }
  // decode() and decode_embeddings() after their checks: `tokens` (ids, or
  // kEmbeddingToken for the rows of `embd`, in order) after the pending token.
  Status decode_rows(std::span<const int32_t> tokens, const float* embd, bool all_logits, bool rows_as_decode);

  const Model& model_;
  SequenceState seq_;
  ContextParams params_;
  std::unique_ptr<ExpertSource> own_experts_;  // null: the model's resident experts
  ForwardObservers observers_;
  Interrupt interrupt_;
  RoutingOverride routing_override_;  // bench only; empty: the routers decide
  std::unique_ptr<kernels::ThreadPool> pool_;  // owned: matmul row splits
  ForwardScratch scratch_;
  std::vector<float> logits_;      // n_vocab
  std::vector<float> logits_all_;  // n x n_vocab
  std::vector<float> chunk_logits_;
  std::vector<float> hidden_;      // n x n_embd (output_hidden)
  bool has_all_ = false;
  int32_t all_pos0_ = 0;  // position of logits_all_'s first row
  int32_t hidden_pos0_ = 0;  // hidden_pos0()
  ExpertUnion union_;
  std::vector<int32_t> tokens_;  // ids of positions 0..n_past()-1
  int32_t pending_ = -1;
};

}  // namespace les
