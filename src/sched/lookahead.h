// Lookahead: which experts to read before their layer asks for them. It owns
// everything about the future the streaming scheduler acts on:
//   - the predictor (ExpertPredictor: a layer's router applied to what exists
//     before that layer runs),
//   - the predictions it stored, per target layer (rows x c expert ids),
//   - the gate (PrefetchGate: which ranks of candidates are worth a read,
//     learned from whether the target layer then selected them),
//   - the orders: predictions whose reads are due, kept until the scheduler
//     can serve them (deferral).
// What it does not own: slots, reads, statistics and the budget. Those stay
// with the scheduler (StreamingExpertSource), which reaches the cache through
// the PrefetchTarget it passes in.
//
// The one path every prediction takes, whatever produced it:
//   store(layer, row0, ids)        the prediction for `layer` (predict_*() below)
//   -> an order (layer, first_row)  appended to the orders; an older order for
//                                   the same layer is replaced
//   -> issue_due(target)           at each of the scheduler's safe points:
//                                   for each order, oldest first: hint every
//                                   candidate to the eviction policy; if the
//                                   scheduler's current layer still waits for
//                                   its own reads, stop (the order and those
//                                   after it stay due: demand reads go to the
//                                   device first, so a misprediction costs one
//                                   expert read, not a share of the next
//                                   layer's prefetch batch); else read ahead
//                                   the uncached candidates the gate admits,
//                                   in vote order (ExpertPredictor::by_votes),
//                                   keeping n_expert_used slots claimable, and
//                                   note which candidates the gate must learn from.
//
// Where predictions come from (the events, called by the scheduler):
//   begin_batch   layer 0 from the token embeddings (Layer0Lookahead::embeddings)
//   on_routed(l)  scores the prediction for l (recall, and the gate's lessons),
//                 then predicts layers l+1 .. l+depth from l's router input
//   end_batch     the next step's layer 0 from the final hidden state
//                 (Layer0Lookahead::final_hidden)
// With depth 1 (today's scheduler) there is at most one order at a time.
// Deeper read-ahead (depth > 1) or another predictor changes only the
// predict_* step: the store, order and issue path stays the same.
//
// Thread-safety: thread-compatible; the scheduler calls it with its mutex held.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "core/model/expert_source.h"
#include "core/model/model.h"
#include "sched/expert_predictor.h"
#include "sched/prefetch_gate.h"
#include "sched/slot_layout.h"
#include "util/status.h"

namespace les::sched {

// Where layer 0's lookahead comes from.
enum class Layer0Lookahead {
  none,          // demand reads only for layer 0
  final_hidden,  // router_0 · (last token's output_norm(x)) at the end of a batch
  embeddings,    // router_0 · RMSNorm(token embedding)·ffn_norm_0 at the start of a batch
};

// Rows the predictor scores at a time: its scratch is this many rows, part
// of the scheduler's reserve (Lookahead::reserve_bytes).
inline constexpr int64_t kLookaheadPredictRows = 32;

// Bench only (bench_trace's end-to-end mode; never set through les.h or les
// run): after the predictor ran (its cost stays), replaces its candidates
// for `layer`, rows [row0, row0 + n_rows) of the batch (ids: n_rows x c,
// resized by the callee to that), before they are stored. Applied to the
// predictions from the embeddings and from a router input, not to layer 0's
// from the final hidden state.
using PredictionOverride = std::function<void(int32_t layer, int64_t row0, int64_t n_rows, std::vector<int32_t>& ids)>;

struct LookaheadParams {
  int32_t c = 0;  // candidates per token (k <= c <= 2k); 0 = no lookahead
  double gate = kDefaultPrefetchGate;  // PrefetchGate threshold, [0, 1]
  Layer0Lookahead layer0 = Layer0Lookahead::embeddings;
  // Layers read ahead of the one routing now: 1 (the next layer) is what
  // the scheduler does today (see the top of this file).
  int32_t depth = 1;
  bool next_norm = true;  // StreamingParams::predictor_next_norm
  PredictionOverride prediction_override;
};

// What the lookahead needs from the scheduler to act on an order: the
// cache's view and the one way a read ahead starts.
class PrefetchTarget {
 public:
  virtual ~PrefetchTarget() = default;
  // Whether (layer, expert) has a slot (ready or being filled).
  virtual bool cached(int32_t layer, int32_t expert) const = 0;
  // Names the candidates of `layer` to the eviction policy (keeps them).
  virtual void hint(int32_t layer, const std::vector<int32_t>& experts) = 0;
  // True while the layer computing now still waits for reads of its own:
  // orders wait.
  virtual bool busy() const = 0;
  // Slots a read ahead may take now (free or evictable, minus those the
  // next layer's demand reads must find); may be <= 0.
  virtual int32_t room() const = 0;
  // Claims a slot for (layer, expert) and submits its read; false when no
  // slot could be claimed or the submission failed (no more reads ahead now).
  virtual bool read_ahead(int32_t layer, int32_t expert) = 0;
  // An uncached candidate the gate did not admit (statistics).
  virtual void count_gated() = 0;
};

// Prediction quality of one layer's stored prediction against its routing
// (added to LayerSchedStats: pred_hits, pred_actual, pred_predicted).
struct LookaheadScore {
  uint64_t hits = 0, actual = 0, predicted = 0;
};

class Lookahead {
 public:
  // `model` and `layout` must outlive this. p.c is clamped to >= 1 for the
  // predictor and gate; p.c == 0 turns every prediction off.
  Lookahead(const Model& model, const SlotLayout& layout, LookaheadParams p);

  // The scheduler's reserve this lookahead needs at most for `hp` with
  // batches of up to n_batch_max rows and any c <= 2k (bytes): the
  // predictor's row blocks and the stored predictions.
  static size_t reserve_bytes(const Hparams& hp, int32_t n_batch_max) noexcept;

  int32_t c() const noexcept { return c_; }
  const PrefetchGate& gate() const noexcept { return gate_; }

  // A new batch of n_tokens rows: forgets the orders and the predictions of
  // the last batch (layer 0's is kept when it came from the final hidden
  // state), then predicts layer 0 from the embeddings (n_tokens x n_embd)
  // when that is the layer-0 source.
  void begin_batch(const float* embeddings, int64_t n_tokens);
  // Layer r.layer routed (the batch's last r.n_tokens of n_batch_rows rows):
  // scores the stored prediction for it (and teaches the gate from one-row
  // predictions), then predicts the layers ahead. Returns the score.
  LookaheadScore on_routed(const ExpertSource::Routing& r, int64_t n_batch_rows);
  // The batch ended with `final_hidden` (n_embd floats of its last row; may be
  // null): predicts the next step's layer 0 when that is the layer-0 source.
  void end_batch(const float* final_hidden);

  // A safe point: serves the due orders through `target` (the top of this file).
  void issue_due(PrefetchTarget& target);
  bool has_orders() const noexcept { return !orders_.empty(); }

 private:
  struct Prediction {
    std::vector<int32_t> ids;  // rows x c
    int64_t row0 = 0, rows = 0;
    bool valid = false;
    // (expert, best rank) of the candidates that were not cached when the
    // order was served: their outcomes teach the gate (one-row predictions).
    std::vector<std::pair<int32_t, int32_t>> watch;
  };
  struct Order {
    int32_t layer = -1;
    int64_t first_row = 0;  // rows of the prediction before this one are not read for
    std::vector<int32_t> ids, ranks;  // candidates in vote order, their best ranks
  };

  // Predicts `layer` for n rows of u (n x n_embd) into `out` (n x c ids),
  // kLookaheadPredictRows rows at a time. from >= 0: u is layer `from`'s router
  // input (ExpertPredictor::predict_from); norm: RMS-norm each row with these
  // weights first (layer 0 from the token embeddings).
  Status predict_rows(int32_t layer, int32_t from, const float* u, int64_t n, const float* norm,
                      std::vector<int32_t>& out);
  // A prediction source: predict_rows for rows [row0, row0 + n) of the batch
  // into pred_[layer].ids, then the bench's prediction override, if any.
  Status predict_batch_rows(int32_t layer, int32_t from, const float* u, int64_t row0, int64_t n, const float* norm);
  // The one store-and-order path: keeps `pred_[layer]` (rows [row0, row0 +
  // rows) of the batch, already predicted into its ids) and orders its reads
  // from `first_row`.
  void store(int32_t layer, int64_t row0, int64_t rows, int64_t first_row);
  // Serves one order; false when the target is busy (the order stays).
  bool serve(PrefetchTarget& target, Order& o);

  const Model& model_;
  const SlotLayout& layout_;
  LookaheadParams p_;
  int32_t c_;
  ExpertPredictor predictor_;
  PrefetchGate gate_;
  std::vector<Prediction> pred_;  // per layer
  std::vector<Order> orders_;     // oldest first
  std::vector<float> u0_;         // normed rows of one predict_rows block
  std::vector<int32_t> block_ids_;  // predictions of one predict_rows block
};

}  // namespace les::sched
