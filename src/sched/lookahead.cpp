#include "sched/lookahead.h"

#include <algorithm>

#include "kernels/ops.h"

namespace les::sched {

Lookahead::Lookahead(const Model& model, const SlotLayout& layout, LookaheadParams p)
    : model_(model), layout_(layout), p_(std::move(p)), c_(p_.c), predictor_(model, std::max(p_.c, 1)),
      gate_(std::max(p_.c, 1), p_.gate) {
  pred_.resize(static_cast<size_t>(std::max(model.hparams().n_layer_all, 0)));
}

size_t Lookahead::reserve_bytes(const Hparams& hp, int32_t n_batch_max) noexcept {
  // Sized for c = 2k, so one minimum budget holds for every candidate count.
  const size_t c_max = static_cast<size_t>(2 * hp.n_expert_used);
  const size_t nb = static_cast<size_t>(std::max(n_batch_max, 1));
  // One predict_rows block: n_expert logits, n_embd rescaled and n_embd normed
  // floats per row, and the block's ids.
  const size_t block = static_cast<size_t>(kLookaheadPredictRows) *
                       (static_cast<size_t>(hp.n_expert + 2 * hp.n_embd) * sizeof(float) + c_max * sizeof(int32_t));
  // The stored predictions: n_layer_all x n_batch x c ids.
  const size_t stored = static_cast<size_t>(hp.n_layer_all) * nb * c_max * sizeof(int32_t);
  return block + stored;
}

Status Lookahead::predict_rows(int32_t layer, int32_t from, const float* u, int64_t n, const float* norm,
                               std::vector<int32_t>& out) {
  const int64_t E = model_.hparams().n_embd;
  const int32_t c = predictor_.c();
  out.resize(static_cast<size_t>(n * c));
  for (int64_t r0 = 0; r0 < n; r0 += kLookaheadPredictRows) {
    const int64_t m = std::min(kLookaheadPredictRows, n - r0);
    const float* rows = u + r0 * E;
    if (norm != nullptr) {
      u0_.resize(static_cast<size_t>(m * E));
      for (int64_t t = 0; t < m; ++t) ops::rms_norm(rows + t * E, norm, E, model_.hparams().rms_eps, u0_.data() + t * E);
      rows = u0_.data();
    }
    LES_RETURN_IF_ERROR(from >= 0 ? predictor_.predict_from(layer, from, rows, m, block_ids_)
                                  : predictor_.predict(layer, rows, m, block_ids_));
    std::copy(block_ids_.begin(), block_ids_.end(), out.begin() + r0 * c);
  }
  return Status();
}

Status Lookahead::predict_batch_rows(int32_t layer, int32_t from, const float* u, int64_t row0, int64_t n,
                                     const float* norm) {
  std::vector<int32_t>& out = pred_[static_cast<size_t>(layer)].ids;
  LES_RETURN_IF_ERROR(predict_rows(layer, from, u, n, norm, out));
  if (p_.prediction_override) p_.prediction_override(layer, row0, n, out);
  return Status();
}

void Lookahead::store(int32_t layer, int64_t row0, int64_t rows, int64_t first_row) {
  Prediction& p = pred_[static_cast<size_t>(layer)];
  p.row0 = row0;
  p.rows = rows;
  p.valid = true;
  p.watch.clear();
  std::erase_if(orders_, [layer](const Order& o) { return o.layer == layer; });
  Order& o = orders_.emplace_back();
  o.layer = layer;
  o.first_row = first_row;
  o.ids = ExpertPredictor::by_votes(p.ids, predictor_.c(), layout_.n_expert(), first_row, &o.ranks);
}

void Lookahead::begin_batch(const float* embeddings, int64_t n_tokens) {
  orders_.clear();
  for (size_t l = 0; l < pred_.size(); ++l)
    if (l != 0 || p_.layer0 != Layer0Lookahead::final_hidden) {
      pred_[l].valid = false;
      pred_[l].watch.clear();
    }
  // Layer 0 from the token embeddings: router_0 · RMSNorm(x)·ffn_norm_0.
  if (c_ == 0 || p_.layer0 != Layer0Lookahead::embeddings || !layout_.layer_has_experts(0)) return;
  const float* norm0 = reinterpret_cast<const float*>(model_.weights().layers[0].ffn_norm.data);
  if (!predict_batch_rows(0, -1, embeddings, 0, n_tokens, norm0).ok()) return;
  store(0, 0, n_tokens, 0);
}

LookaheadScore Lookahead::on_routed(const ExpertSource::Routing& r, int64_t n_batch_rows) {
  LookaheadScore score;
  Prediction& p = pred_[static_cast<size_t>(r.layer)];
  if (p.valid) {
    const int64_t first = n_batch_rows - r.n_tokens;  // the routed rows are the batch's last n_tokens
    const int64_t b0 = std::max(first, p.row0), b1 = std::min(n_batch_rows, p.row0 + p.rows);
    const int32_t k = r.n_expert_used, c = predictor_.c();
    for (int64_t b = b0; b < b1; ++b) {
      const int32_t* a = r.selected + (b - first) * k;
      const int32_t* q = p.ids.data() + (b - p.row0) * c;
      for (int32_t i = 0; i < k; ++i) score.hits += std::find(q, q + c, a[i]) != q + c;
      score.actual += static_cast<uint64_t>(k);
      score.predicted += static_cast<uint64_t>(c);
    }
    // The gate learns from one-token predictions (decode): was each uncached
    // candidate selected?
    if (p.rows == 1 && b0 < b1) {
      const int32_t* a = r.selected + (b0 - first) * k;
      for (const auto& [e, rank] : p.watch) gate_.observe(rank, std::find(a, a + k, e) != a + k);
    }
    p.watch.clear();
    p.valid = false;
  }
  if (c_ == 0) return score;
  // Within the trunk: an MTP block (blk.n_layer ..) does not run after the
  // last trunk layer. The last layer computes only the last row unless every
  // row's logits are wanted: its reads are for that row alone.
  const int32_t n_trunk = model_.hparams().n_layer;
  for (int32_t d = 1; d <= p_.depth; ++d) {
    const int32_t ahead = r.layer + d;
    if (ahead >= n_trunk || !layout_.layer_has_experts(ahead)) break;
    const int64_t row0 = n_batch_rows - r.n_tokens;
    if (!predict_batch_rows(ahead, p_.next_norm ? r.layer : -1, r.router_input, row0, r.n_tokens, nullptr).ok()) break;
    store(ahead, row0, r.n_tokens, ahead == n_trunk - 1 ? r.n_tokens - 1 : 0);
  }
  return score;
}

void Lookahead::end_batch(const float* final_hidden) {
  orders_.clear();  // the batch's own layers have run: what was not read ahead is moot
  if (final_hidden == nullptr || c_ == 0 || p_.layer0 != Layer0Lookahead::final_hidden ||
      !layout_.layer_has_experts(0))
    return;
  // One row, the batch's last; the prediction override is not applied here.
  if (!predictor_.predict(0, final_hidden, 1, pred_[0].ids).ok()) return;
  store(0, 0, 1, 0);
}

void Lookahead::issue_due(PrefetchTarget& target) {
  size_t served = 0;
  while (served < orders_.size() && serve(target, orders_[served])) ++served;
  orders_.erase(orders_.begin(), orders_.begin() + static_cast<std::ptrdiff_t>(served));
}

bool Lookahead::serve(PrefetchTarget& target, Order& o) {
  if (!layout_.layer_has_experts(o.layer)) return true;
  target.hint(o.layer, o.ids);  // the eviction policy keeps the named experts of that layer
  if (target.busy()) return false;
  int32_t room = target.room();
  std::vector<std::pair<int32_t, int32_t>>& watch = pred_[static_cast<size_t>(o.layer)].watch;
  watch.clear();
  for (size_t i = 0; i < o.ids.size(); ++i) {
    const int32_t e = o.ids[i], rank = i < o.ranks.size() ? o.ranks[i] : predictor_.c();
    if (target.cached(o.layer, e)) continue;
    watch.emplace_back(e, rank);  // its outcome teaches the gate, read ahead or not
    if (!gate_.admits(rank)) {
      target.count_gated();
      continue;
    }
    if (room <= 0) continue;
    if (!target.read_ahead(o.layer, e)) {
      room = 0;
      continue;
    }
    --room;
  }
  return true;
}

}  // namespace les::sched
