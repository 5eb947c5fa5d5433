// Where the MoE layer gets the weights of one routed expert.
//
// The forward pass never touches 3-D expert tensors directly: for each layer it
// asks an ExpertSource for the gate/up/down matrices of the experts the router
// picked. The resident implementation (below) points into the model's mmap; the
// streaming engine supplies one backed by its expert cache, which may use
// prepare() to start reads for the whole batch before the first get().
//
// Thread-safety: an ExpertSource is used by one Context at a time; get() results
// stay valid until release() of the same layer.
#pragma once

#include <cstdint>
#include <span>

#include "core/model_weights.h"
#include "util/status.h"

namespace les {

// The three matrices of one expert: gate and up {n_embd -> n_ff_exp}, down {n_ff_exp -> n_embd}.
struct ExpertMatrices {
  WeightView gate;  // {cols n_embd, rows n_ff_exp}
  WeightView up;    // {cols n_embd, rows n_ff_exp}
  WeightView down;  // {cols n_ff_exp, rows n_embd}
};

class ExpertSource {
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
