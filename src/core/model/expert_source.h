// Where the MoE layer gets the weights of one routed expert.
//
// The forward pass never touches 3-D expert tensors directly: for each layer it
// asks an ExpertSource for the gate/up/down matrices of the experts the router
// picked. The resident implementation (below) points into the model's mmap; the
// streaming engine supplies one backed by its expert cache, which may use
// prepare() to start reads for the whole batch before the first get().
// Speculative decoding's questions (bytes a batch would read, the verify
// pass's bookkeeping) are the ExpertCost base (expert_cost.h).
//
// Thread-safety: an ExpertSource is used by one Context at a time; get() results
// stay valid until release() of the same layer.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "core/model/expert_cost.h"
#include "core/model/weight_view.h"
#include "kernels/thread_pool.h"
#include "util/status.h"

namespace les {

// The three matrices of one expert: gate and up {n_embd -> n_ff_exp}, down {n_ff_exp -> n_embd}.
struct ExpertMatrices {
  WeightView gate;  // {cols n_embd, rows n_ff_exp}
  WeightView up;    // {cols n_embd, rows n_ff_exp}
  WeightView down;  // {cols n_ff_exp, rows n_embd}
};

class ExpertSource : public ExpertCost {
 public:
  virtual ~ExpertSource() = default;
  // Announces the (distinct) experts layer `layer` will use for the current batch,
  // before any get() for that layer. Default: nothing to do.
  virtual Status prepare(int32_t layer, std::span<const int32_t> experts) {
    (void)layer;
    (void)experts;
    return Status();
  }
  // The matrices of `expert` in `layer`. Errors: invalid_argument (out of range), io (streaming).
  virtual Result<ExpertMatrices> get(int32_t layer, int32_t expert) = 0;
  // The layer's experts are no longer needed by this batch.
  virtual void release(int32_t layer) { (void)layer; }

  // --- Scheduling hooks (defaults keep the resident behaviour: in-order, no-ops) ---
  // The forward pass drives a source through one batch as
  //   begin_batch(embeddings)                     (ExpertBatch's constructor)
  //   per MoE layer l: prepare(l, E_l); on_routed(l); { next_ready; get; done }*; release(l)
  //   end_batch(output hidden state or null)      (ExpertBatch::finish, or its destructor on failure)
  // A streaming source starts reads in prepare (demand), on_routed (lookahead
  // for layer l + 1), begin_batch and end_batch (lookahead for layer 0).

  // A batch of n_tokens starts; `embeddings` are its token embeddings
  // (n_tokens x n_embd, row-major; valid only during the call). A streaming
  // source opens the batch's statistics and may start layer 0's lookahead
  // reads from the embeddings.
  virtual void begin_batch(const float* embeddings, int64_t n_tokens, int64_t n_embd) {
    (void)embeddings;
    (void)n_tokens;
    (void)n_embd;
  }
  // The batch ends. `output_hidden` is the last token's final hidden state
  // after output_norm (n_embd floats, valid only during the call), or null when
  // the batch failed. A streaming source closes the batch's statistics and may
  // start the next step's layer-0 lookahead reads from output_hidden.
  virtual void end_batch(const float* output_hidden, int64_t n_embd) {
    (void)output_hidden;
    (void)n_embd;
  }

  // What the router of one MoE layer saw and decided for the batch.
  struct Routing {
    int32_t layer = 0;
    int64_t n_tokens = 0;
    int64_t n_embd = 0;
    int32_t n_expert_used = 0;
    const float* router_input = nullptr;  // n_tokens x n_embd (ffn_norm output, row-major)
    const int32_t* selected = nullptr;    // n_tokens x n_expert_used expert ids, descending score
  };
  // Called once per MoE layer right after prepare() (pointers valid only
  // during the call). A streaming source scores its prediction for this layer
  // and starts the lookahead reads for layer + 1, which overlap this layer's
  // compute.
  virtual void on_routed(const Routing& r) { (void)r; }
  // Ready-first: the index into `pending` (distinct prepared experts of `layer`
  // not yet fetched with get()) of one whose get() will not wait for I/O; blocks
  // until one is ready. Callers accumulate per-slot so the order never changes
  // results. Errors: io (a read failed). Default: 0 (prepare order).
  virtual Result<size_t> next_ready(int32_t layer, std::span<const int32_t> pending) {
    (void)layer;
    (void)pending;
    return size_t{0};
  }
  // True when get() never waits (no I/O, nothing to schedule), so the MoE
  // layer may fetch all of a layer's experts first and compute them together
  // (one fork-join per matrix kind instead of per expert; the same results).
  // Default: false (ready-first, one expert at a time).
  virtual bool get_never_waits() const { return false; }
  // How long the compute pool's idle workers spin before they sleep
  // (ThreadPool::set_idle_spin; the Context applies it at creation). A source
  // whose get() waits for reads asks for longer, so the workers are still
  // awake when the bytes land. Default: the pool's default.
  virtual std::chrono::nanoseconds compute_idle_spin() const { return kernels::ThreadPool::kDefaultIdleSpin; }
  // Compute no longer reads the matrices of (layer, expert) returned by get()
  // in this batch (they may be evicted before release(layer)).
  virtual void done(int32_t layer, int32_t expert) {
    (void)layer;
    (void)expert;
  }
};

// One batch of a forward pass on an ExpertSource: begin_batch at construction,
// end_batch exactly once, from finish() with the output hidden state, or from
// the destructor (with null) when the pass returns early with an error, so a
// failed batch is closed where it fails.
class ExpertBatch {
 public:
  ExpertBatch(ExpertSource& source, const float* embeddings, int64_t n_tokens, int64_t n_embd) : source_(source) {
    source_.begin_batch(embeddings, n_tokens, n_embd);
  }
  ~ExpertBatch() {
    if (open_) source_.end_batch(nullptr, 0);
  }
  ExpertBatch(const ExpertBatch&) = delete;
  ExpertBatch& operator=(const ExpertBatch&) = delete;
  // Ends the batch after its last layer; output_hidden as in end_batch.
  void finish(const float* output_hidden, int64_t n_embd) {
    if (!open_) return;
    open_ = false;
    source_.end_batch(output_hidden, n_embd);
  }

 private:
  ExpertSource& source_;
  bool open_ = true;
};

// Experts resident in memory: slices of the 3-D ffn_{gate,up,down}_exps tensors.
class ResidentExpertSource final : public ExpertSource {
 public:
  struct LayerExperts {
    WeightView gate_exps, up_exps, down_exps;  // 3-D {cols, rows, n_expert}
  };
  explicit ResidentExpertSource(std::vector<LayerExperts> layers) : layers_(std::move(layers)) {}
  Result<ExpertMatrices> get(int32_t layer, int32_t expert) override;
  bool get_never_waits() const override { return true; }

 private:
  std::vector<LayerExperts> layers_;
};

}  // namespace les
