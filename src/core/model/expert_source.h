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

#include <cstdint>
#include <span>

#include "core/model/expert_cost.h"
#include "core/model/model_weights.h"
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

  // --- Streaming hooks (defaults keep the resident behaviour: in-order, no-ops) ---

  // Called once per MoE layer right after prepare(), with what the router saw
  // and decided, so a streaming source can predict layer + 1 (lookahead) while
  // this layer computes and keep per-layer statistics. Pointers are valid only
  // during the call.
  struct Routing {
    int32_t layer = 0;
    int64_t n_tokens = 0;
    int64_t n_embd = 0;
    int32_t n_expert_used = 0;
    const float* router_input = nullptr;  // n_tokens x n_embd (ffn_norm output, row-major)
    const int32_t* selected = nullptr;    // n_tokens x n_expert_used expert ids, descending score
  };
  virtual void observe_routing(const Routing& r) { (void)r; }
  // Ready-first: the index into `pending` (distinct prepared experts of `layer`
  // not yet fetched with get()) of one whose get() will not wait for I/O; blocks
  // until one is ready. Callers accumulate per-slot so the order never changes
  // results. Errors: io (a read failed). Default: 0 (prepare order).
  virtual Result<size_t> next_ready(int32_t layer, std::span<const int32_t> pending) {
    (void)layer;
    (void)pending;
    return size_t{0};
  }
  // Compute no longer reads the matrices of (layer, expert) returned by get()
  // in this batch (they may be evicted before release(layer)).
  virtual void done(int32_t layer, int32_t expert) {
    (void)layer;
    (void)expert;
  }
  // Called by the forward pass at the start of a batch with the token
  // embeddings (n_tokens x n_embd) and at its end with the last token's final
  // hidden state after output_norm (n_embd floats): inputs for predicting
  // layer 0 of the next step.
  virtual void observe_embeddings(const float* x, int64_t n_tokens, int64_t n_embd) {
    (void)x;
    (void)n_tokens;
    (void)n_embd;
  }
  virtual void observe_output_hidden(const float* h, int64_t n_embd) {
    (void)h;
    (void)n_embd;
  }
};

// Experts resident in memory: slices of the 3-D ffn_{gate,up,down}_exps tensors.
class ResidentExpertSource final : public ExpertSource {
 public:
  struct LayerExperts {
    WeightView gate_exps, up_exps, down_exps;  // 3-D {cols, rows, n_expert}
  };
  explicit ResidentExpertSource(std::vector<LayerExperts> layers) : layers_(std::move(layers)) {}
  Result<ExpertMatrices> get(int32_t layer, int32_t expert) override;

 private:
  std::vector<LayerExperts> layers_;
};

}  // namespace les
