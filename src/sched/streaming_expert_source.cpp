#include "sched/streaming_expert_source.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "core/gguf/gguf_reader.h"
#include "kernels/ops.h"

namespace les::sched {
namespace {

constexpr size_t kAlignment = 4096;

// A read request's tag names the slot it fills and which of the expert's
// reads it is (gate, up, down in GGUF's layout; one read when repacked):
// tag = slot * kReadTagsPerSlot + part.
constexpr uint64_t kReadTagsPerSlot = 4;
static_assert(std::tuple_size_v<decltype(SlotReads::reads)> <= kReadTagsPerSlot,
              "every read of one expert needs its own tag within the slot's range");

uint64_t read_tag(int32_t slot, size_t part) { return static_cast<uint64_t>(slot) * kReadTagsPerSlot + part; }
int32_t slot_of_read_tag(uint64_t tag) { return static_cast<int32_t>(tag / kReadTagsPerSlot); }

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

int32_t resolve_c(const Model& m, int32_t c) {
  const int32_t k = m.hparams().n_expert_used;
  if (c < 0) return std::min(k + 2, std::min(2 * k, m.hparams().n_expert));
  return c;
}

// Rows the predictor scores at a time (its scratch is this many rows).
constexpr int64_t kPredictRows = 32;

// The scratch share does not depend on c (sized for c = 2k), so one minimum
// holds for every candidate count. Every block (blk.L, trunk and MTP) has a
// key space in the cache. One slot is the minimum: the MoE layer computes an
// expert and releases its slot before the next one needs it (ready-first with
// queued demand reads), so a budget of a single expert still runs, slowly.
ExpertCacheParams cache_params(const Model& m, const StreamingParams& p, const SlotLayout& layout) {
  const Hparams& hp = m.hparams();
  ExpertCacheParams cp;
  cp.n_layer = hp.n_layer_all;
  cp.n_expert = hp.n_expert;
  cp.slot_bytes = layout.slot_bytes();
  cp.alignment = kAlignment;
  cp.min_slots = 1;
  // Scheduler scratch: the predictor's rows (kPredictRows x (n_expert logits +
  // n_embd rescaled + n_embd normed floats) and their ids), the stored
  // predictions (n_layer_all x n_batch x c ids), per-slot/per-key tables.
  const size_t nb = static_cast<size_t>(std::max(p.n_batch_max, 1));
  const size_t keys = static_cast<size_t>(hp.n_layer_all) * static_cast<size_t>(hp.n_expert);
  const size_t c_max = static_cast<size_t>(2 * hp.n_expert_used);
  cp.reserved_bytes = static_cast<size_t>(kPredictRows) *
                          (static_cast<size_t>(hp.n_expert + 2 * hp.n_embd) * sizeof(float) + c_max * sizeof(int32_t)) +
                      static_cast<size_t>(hp.n_layer_all) * nb * c_max * sizeof(int32_t) + keys * 96 +
                      BatchBytesPredictor::max_bytes(m);
  cp.budget_bytes = p.budget_bytes;
  cp.policy = p.policy;
  cp.prefault_progress = p.prefault_progress;
  cp.background_prefault = p.background_prefault;
  cp.half_life_tokens = p.half_life_tokens;
  cp.n_expert_used = std::min(std::max(hp.n_expert_used, 1), hp.n_expert);
  return cp;
}

}  // namespace

Result<size_t> StreamingExpertSource::min_budget_bytes(const Model& model, const StreamingParams& params) {
  LES_ASSIGN_OR_RETURN(SlotLayout layout, SlotLayout::from_model(model, kAlignment));
  return ExpertCache::min_budget_bytes(cache_params(model, params, layout));
}

StreamingExpertSource::StreamingExpertSource(const Model& model, const StreamingParams& p, SlotLayout layout,
                                             int32_t c)
    : model_(model), p_(p), layout_(std::move(layout)), c_(c), predictor_(model, std::max(c, 1)),
      batch_bytes_(model),
      gate_(std::max(c, 1), p.prefetch_gate) {}

namespace {

// Scheduler scratch plus n_expert_used slots for every trunk layer with routed experts.
size_t one_token_bytes(const Hparams& hp, const SlotLayout& layout, size_t reserved) noexcept {
  size_t layers = 0;
  for (int32_t l = 0; l < hp.n_layer && l < layout.n_layer(); ++l) layers += layout.layer_has_experts(l) ? 1 : 0;
  const size_t entries = layers * static_cast<size_t>(std::max(hp.n_expert_used, 1));
  return reserved + entries * layout.slot_bytes();
}

}  // namespace

size_t StreamingExpertSource::one_token_budget_bytes() const noexcept {
  return one_token_bytes(model_.hparams(), layout_, cache_->reserved_bytes());
}

Result<size_t> StreamingExpertSource::one_token_budget_bytes(const Model& model, const StreamingParams& params) {
  LES_ASSIGN_OR_RETURN(SlotLayout layout, SlotLayout::from_model(model, kAlignment));
  return one_token_bytes(model.hparams(), layout, cache_params(model, params, layout).reserved_bytes);
}

StreamingExpertSource::~StreamingExpertSource() {
  cur_.clear();  // unpin before the cache goes
  if (backend_) backend_->cancel_all();
}

Result<std::unique_ptr<StreamingExpertSource>> StreamingExpertSource::create(const Model& model,
                                                                             const StreamingParams& params,
                                                                             std::unique_ptr<io::IoBackend> backend) {
  const Hparams& hp = model.hparams();
  const int32_t c = resolve_c(model, params.prefetch_c);
  const int32_t k = hp.n_expert_used;
  if (c != 0 && (c < k || c > 2 * k || c > hp.n_expert))
    return invalid_argument_error("prefetch candidates c = " + std::to_string(c) + " outside [k, 2k] = [" +
                                  std::to_string(k) + ", " + std::to_string(std::min(2 * k, hp.n_expert)) +
                                  "] (0 disables lookahead)");
  if (!(params.prefetch_gate >= 0.0 && params.prefetch_gate <= 1.0))
    return invalid_argument_error("prefetch gate " + std::to_string(params.prefetch_gate) +
                                  " outside [0, 1] (0 reads every candidate ahead)");
  LES_ASSIGN_OR_RETURN(SlotLayout layout, SlotLayout::from_model(model, kAlignment));
  const ExpertCacheParams cp = cache_params(model, params, layout);
  std::unique_ptr<StreamingExpertSource> s(new StreamingExpertSource(model, params, std::move(layout), c));
  LES_ASSIGN_OR_RETURN(s->cache_, ExpertCache::create(cp));
  if (!backend) {
    io::IoOptions io;
    io.queue_depth = params.queue_depth;
    io.use_direct_io = params.use_direct_io;
    io.direct_alignment = static_cast<uint32_t>(kAlignment);
    LES_ASSIGN_OR_RETURN(backend, io::create_io_backend(params.io, io));
  }
  s->backend_ = std::move(backend);
  s->backend_name_ = s->backend_->name();
  LES_ASSIGN_OR_RETURN(s->file_, s->backend_->open_file(model.file().path()));
  model.release_expert_pages();  // expert bytes come through the reactor from now on
  const size_t cap = static_cast<size_t>(hp.n_layer_all) * static_cast<size_t>(hp.n_expert);
  s->parts_left_.assign(cap, 0);
  s->slot_error_.resize(cap);
  s->pred_.resize(static_cast<size_t>(hp.n_layer_all));
  s->batch_.layers.resize(static_cast<size_t>(hp.n_layer_all));
  s->last_.layers.resize(static_cast<size_t>(hp.n_layer_all));
  s->total_.layers.resize(static_cast<size_t>(hp.n_layer_all));
  s->idle_since_ = Clock::now();
  return s;
}

Status StreamingExpertSource::set_budget(size_t budget_bytes) {
  Lock lk(mu_);
  LES_RETURN_IF_ERROR(cache_->set_budget(budget_bytes));
  registration_.note_budget_change(cache_->n_slots());
  if (!waiting_) renew_registration();  // else the scheduler thread renews it (backend in use)
  return Status();
}

size_t StreamingExpertSource::budget_bytes() const {
  Lock lk(mu_);
  return cache_->budget_bytes();
}

int32_t StreamingExpertSource::n_slots() const {
  Lock lk(mu_);
  return cache_->n_slots();
}

SchedStats StreamingExpertSource::stats() const {
  Lock lk(mu_);
  return total_;
}

SchedStats StreamingExpertSource::last_batch_stats() const {
  Lock lk(mu_);
  return last_;
}

void StreamingExpertSource::reset_stats() {
  Lock lk(mu_);
  const size_t L = total_.layers.size();
  total_ = SchedStats();
  last_ = SchedStats();
  total_.layers.resize(L);
  last_.layers.resize(L);
}

StreamingExpertSource::Want* StreamingExpertSource::find_want(int32_t expert) {
  if (expert < 0) return nullptr;
  for (Want& w : cur_)
    if (w.expert == expert) return &w;
  return nullptr;
}

void StreamingExpertSource::note_submitted(size_t n) {
  if (outstanding_ == 0 && in_batch_) batch_.io_idle_s += seconds(Clock::now() - idle_since_);
  outstanding_ += n;
}

Status StreamingExpertSource::submit_expert(int32_t layer, int32_t expert, int32_t slot, bool prefetch) {
  auto reads = layout_.reads(layer, expert);
  if (!reads.ok()) {
    cache_->fill_done(slot, false);
    return reads.status();
  }
  if (Status st = registration_before_read(slot); !st.ok()) {
    cache_->fill_done(slot, false);
    return st;
  }
  std::byte* base = cache_->slot_data(slot);
  reqs_.clear();
  uint64_t bytes = 0;
  for (size_t p = 0; p < reads->n_reads; ++p) {
    io::ReadRequest r;
    r.tag = read_tag(slot, p);
    r.file = file_;
    r.offset = reads->reads[p].file_offset;
    r.length = reads->reads[p].length;
    r.dst = base + reads->reads[p].slot_offset;
    reqs_.push_back(r);
    bytes += r.length;
  }
  Status st = backend_->submit(reqs_);
  if (!st.ok()) {
    cache_->fill_done(slot, false);
    return st.with_context("reading expert " + std::to_string(expert) + " of layer " + std::to_string(layer) +
                           " from '" + model_.file().path() + "'");
  }
  parts_left_[static_cast<size_t>(slot)] = static_cast<int32_t>(reqs_.size());
  slot_error_[static_cast<size_t>(slot)] = Status();
  note_submitted(reqs_.size());
  batch_.bytes_read += bytes;
  batch_.reads_issued += reqs_.size();
  (prefetch ? batch_.prefetch_experts : batch_.demand_experts) += 1;
  return Status();
}

void StreamingExpertSource::on_complete(const io::ReadCompletion& c) {
  const int32_t slot = slot_of_read_tag(c.tag);
  if (outstanding_ > 0 && --outstanding_ == 0) idle_since_ = Clock::now();
  if (slot < 0 || static_cast<size_t>(slot) >= parts_left_.size() || parts_left_[static_cast<size_t>(slot)] <= 0)
    return;
  Status& err = slot_error_[static_cast<size_t>(slot)];
  if (!c.status.ok() && err.ok()) err = c.status;
  if (--parts_left_[static_cast<size_t>(slot)] > 0) return;
  const bool ok = err.ok();
  if (!ok) {
    ++batch_.read_errors;
    for (Want& w : cur_)
      if (w.slot == slot) {
        if (w.demand_reads >= 2)
          w.error = err.with_context("expert " + std::to_string(w.expert) + " of layer " + std::to_string(cur_layer_) +
                                     " in '" + model_.file().path() + "'");
        w.handle.release();
        w.slot = -1;  // without an error: queued again (retry as a demand read)
      }
  }
  cache_->fill_done(slot, ok);
  err = Status();
}

Status StreamingExpertSource::pump(Lock& lk, bool wait) {
  comps_.clear();
  const auto t0 = Clock::now();
  // Only this thread uses the backend and comps_; the reads' destinations are
  // filling slots, which set_budget() never empties: other threads may take
  // mu_ while this one waits.
  if (wait) {
    waiting_ = true;
    lk.unlock();
  }
  Status st = backend_->reap(wait ? 1 : 0, wait ? io::kWaitForever : std::chrono::nanoseconds(0), comps_);
  if (wait) {
    lk.lock();
    waiting_ = false;
    batch_.io_wait_s += seconds(Clock::now() - t0);
  }
  for (const io::ReadCompletion& c : comps_) on_complete(c);
  return st;
}

Status StreamingExpertSource::issue_queued() {
  for (Want& w : cur_) {
    if (w.expert < 0 || w.slot >= 0 || !w.error.ok()) continue;  // done, has a slot, or failed
    int32_t unused_layer = -1;
    std::optional<int32_t> slot = cache_->claim(cur_layer_, w.expert, false, &unused_layer);
    if (!slot) return Status();
    if (unused_layer >= 0) batch_.prefetch_unused_bytes += layout_.expert_bytes(unused_layer);
    w.slot = *slot;
    w.handle = cache_->pin(*slot, !in_verify_);
    ++w.demand_reads;
    Status st = submit_expert(cur_layer_, w.expert, *slot, false);
    if (!st.ok()) {
      w.handle.release();
      w.slot = -1;
      w.error = st;
    }
  }
  return Status();
}

Status StreamingExpertSource::prepare(int32_t layer, std::span<const int32_t> experts) {
  if (!layout_.layer_has_experts(layer))
    return invalid_argument_error("streaming: layer " + std::to_string(layer) + " has no routed experts");
  Lock lk(mu_);
  if (cur_layer_ >= 0) release_locked();
  cur_layer_ = layer;
  cache_->begin_layer(layer);
  LayerSchedStats& ls = batch_.layers[static_cast<size_t>(layer)];
  for (int32_t e : experts) {
    if (e < 0 || e >= layout_.n_expert()) {
      release_locked();
      return invalid_argument_error("streaming: expert " + std::to_string(e) + " of layer " + std::to_string(layer) +
                                    " out of range");
    }
    Want w;
    w.expert = e;
    const int32_t slot = cache_->lookup(layer, e);
    if (slot >= 0) {
      (cache_->state(slot) == SlotState::ready ? ls.hits : ls.inflight_hits) += 1;
      if (cache_->was_prefetched_unused(slot)) ++ls.prefetch_hits;  // before pin() clears it
      w.slot = slot;
      w.handle = cache_->pin(slot, !in_verify_);
    } else {
      ++ls.misses;
    }
    cur_.push_back(std::move(w));
  }
  return issue_queued();
}

void StreamingExpertSource::score_prediction(const Routing& r) {
  Prediction& p = pred_[static_cast<size_t>(r.layer)];
  if (!p.valid) return;
  const int64_t first = n_batch_rows_ - r.n_tokens;
  const int64_t b0 = std::max(first, p.row0), b1 = std::min(n_batch_rows_, p.row0 + p.rows);
  LayerSchedStats& ls = batch_.layers[static_cast<size_t>(r.layer)];
  const int32_t k = r.n_expert_used, c = predictor_.c();
  for (int64_t b = b0; b < b1; ++b) {
    const int32_t* a = r.selected + (b - first) * k;
    const int32_t* q = p.ids.data() + (b - p.row0) * c;
    for (int32_t i = 0; i < k; ++i) ls.pred_hits += std::find(q, q + c, a[i]) != q + c;
    ls.pred_actual += static_cast<uint64_t>(k);
    ls.pred_predicted += static_cast<uint64_t>(c);
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

bool StreamingExpertSource::layer_waits_for_reads() const {
  for (const Want& w : cur_) {
    if (w.expert < 0 || !w.error.ok()) continue;
    if (w.slot < 0 || cache_->state(w.slot) != SlotState::ready) return true;
  }
  return false;
}

void StreamingExpertSource::issue_deferred_prefetch() {
  if (deferred_layer_ < 0) return;
  // prefetch() defers it again while the current layer still waits for reads.
  prefetch(std::exchange(deferred_layer_, -1), deferred_ids_, deferred_ranks_);
}

void StreamingExpertSource::prefetch_prediction(int32_t layer, int64_t first_row) {
  const Prediction& p = pred_[static_cast<size_t>(layer)];
  vote_ids_ = ExpertPredictor::by_votes(p.ids, predictor_.c(), layout_.n_expert(), first_row, &vote_ranks_);
  prefetch(layer, vote_ids_, vote_ranks_);
}

void StreamingExpertSource::prefetch(int32_t layer, const std::vector<int32_t>& ids,
                                     const std::vector<int32_t>& ranks) {
  if (!layout_.layer_has_experts(layer)) return;
  cache_->hint(layer, ids);  // the eviction policy keeps the named experts of the next layer
  if (layer_waits_for_reads()) {
    deferred_layer_ = layer;
    if (&ids != &deferred_ids_) {
      deferred_ids_ = ids;
      deferred_ranks_ = ranks;
    }
    return;
  }
  // Keep n_expert_used slots claimable: at a small budget, prefetches filling
  // every free slot would make the next layer's demand reads (the router's
  // real choice where the prediction missed) wait for a slot behind them.
  int32_t room = cache_->n_slots() - cache_->n_pinned() - cache_->n_filling() - model_.hparams().n_expert_used;
  std::vector<std::pair<int32_t, int32_t>>& watch = pred_[static_cast<size_t>(layer)].watch;
  watch.clear();
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t e = ids[i], rank = i < ranks.size() ? ranks[i] : predictor_.c();
    if (cache_->lookup(layer, e) >= 0) continue;
    watch.emplace_back(e, rank);  // its outcome teaches the gate, read ahead or not
    if (!gate_.admits(rank)) {
      ++batch_.prefetch_gated;
      continue;
    }
    if (room <= 0) continue;
    int32_t unused_layer = -1;
    std::optional<int32_t> slot = cache_->claim(layer, e, true, &unused_layer);
    if (!slot) {
      room = 0;
      continue;
    }
    if (unused_layer >= 0) batch_.prefetch_unused_bytes += layout_.expert_bytes(unused_layer);
    if (!submit_expert(layer, e, *slot, true).ok()) {
      room = 0;
      continue;
    }
    --room;
  }
}

Status StreamingExpertSource::predict_rows(int32_t layer, int32_t from, const float* u, int64_t n, const float* norm,
                                           std::vector<int32_t>& out) {
  const int64_t E = model_.hparams().n_embd;
  const int32_t c = predictor_.c();
  out.resize(static_cast<size_t>(n * c));
  for (int64_t r0 = 0; r0 < n; r0 += kPredictRows) {
    const int64_t m = std::min(kPredictRows, n - r0);
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

void StreamingExpertSource::on_routed(const Routing& r) {
  if (r.layer < 0 || r.layer >= layout_.n_layer()) return;
  Lock lk(mu_);
  score_prediction(r);
  if (in_verify_) credit_verify_uses(r);
  // Lookahead within the trunk: an MTP block (blk.n_layer ..) does not run
  // after the last trunk layer.
  const int32_t n_trunk = model_.hparams().n_layer;
  const int32_t next = r.layer + 1;
  if (next >= n_trunk || !layout_.layer_has_experts(next)) return;
  Prediction& p = pred_[static_cast<size_t>(next)];
  if (c_ == 0) return;
  if (!predict_rows(next, p_.predictor_next_norm ? r.layer : -1, r.router_input, r.n_tokens, nullptr, p.ids).ok())
    return;
  p.row0 = n_batch_rows_ - r.n_tokens;
  if (p_.prediction_override) p_.prediction_override(next, p.row0, r.n_tokens, p.ids);
  p.rows = r.n_tokens;
  p.valid = true;
  p.watch.clear();
  // The last layer computes only the last row unless every row's logits are
  // wanted: prefetch for that row alone.
  prefetch_prediction(next, next == n_trunk - 1 ? r.n_tokens - 1 : 0);
}

Result<size_t> StreamingExpertSource::next_ready(int32_t layer, std::span<const int32_t> pending) {
  Lock lk(mu_);
  return next_ready_locked(lk, layer, pending);
}

Result<size_t> StreamingExpertSource::next_ready_locked(Lock& lk, int32_t layer, std::span<const int32_t> pending) {
  if (layer != cur_layer_) return invalid_argument_error("next_ready: layer " + std::to_string(layer) + " not prepared");
  for (;;) {
    LES_RETURN_IF_ERROR(pump(lk, false));
    LES_RETURN_IF_ERROR(issue_queued());
    issue_deferred_prefetch();
    bool queued = false, all_slotted_ready = true;
    size_t first_ready = pending.size();
    for (size_t i = 0; i < pending.size(); ++i) {
      Want* w = find_want(pending[i]);
      if (w == nullptr)
        return invalid_argument_error("next_ready: expert " + std::to_string(pending[i]) + " of layer " +
                                      std::to_string(layer) + " was not prepared");
      if (!w->error.ok()) return w->error;
      if (w->slot < 0) {
        queued = true;
        continue;
      }
      if (cache_->state(w->slot) != SlotState::ready) {
        all_slotted_ready = false;
      } else if (first_ready == pending.size()) {
        first_ready = i;
        if (p_.ready_first) return i;
      }
    }
    if (!p_.ready_first && first_ready < pending.size() && all_slotted_ready) return first_ready;
    if (outstanding_ == 0 && backend_->outstanding() == 0) {
      return internal_error(std::string("streaming: no expert of layer ") + std::to_string(layer) +
                            " can become ready (" + (queued ? "no slot free" : "no read in flight") + ")");
    }
    LES_RETURN_IF_ERROR(pump(lk, true));
  }
}

Result<ExpertMatrices> StreamingExpertSource::get(int32_t layer, int32_t expert) {
  if (layer != cur_layer_) return invalid_argument_error("streaming get: layer " + std::to_string(layer) + " not prepared");
  const int32_t one[1] = {expert};
  Lock lk(mu_);
  LES_ASSIGN_OR_RETURN(size_t idx, next_ready_locked(lk, layer, one));
  (void)idx;
  Want* w = find_want(expert);
  return layout_.matrices(layer, expert, cache_->slot_data(w->slot));
}

void StreamingExpertSource::done(int32_t layer, int32_t expert) {
  Lock lk(mu_);
  if (layer != cur_layer_) return;
  if (Want* w = find_want(expert)) {
    w->handle.release();
    w->slot = -1;
    w->expert = -1;
  }
}

void StreamingExpertSource::release(int32_t layer) {
  (void)layer;
  Lock lk(mu_);
  release_locked();
}

void StreamingExpertSource::release_locked() {
  cur_.clear();  // handles unpin
  cur_layer_ = -1;
  issue_deferred_prefetch();
}

void StreamingExpertSource::begin_batch(const float* embeddings, int64_t n_tokens, int64_t n_embd) {
  Lock lk(mu_);
  if (in_batch_) close_batch();  // a previous batch was never ended
  in_batch_ = true;
  n_batch_rows_ = n_tokens;
  batch_start_ = Clock::now();
  if (outstanding_ == 0) idle_since_ = batch_start_;
  renew_registration();
  cache_->advance_token(verify_next_ ? 1 : n_tokens);
  in_verify_ = verify_next_;
  verify_next_ = false;
  draft_uses_.clear();
  deferred_layer_ = -1;
  for (size_t l = 0; l < pred_.size(); ++l)
    if (l != 0 || p_.layer0 != Layer0Lookahead::final_hidden) {
      pred_[l].valid = false;
      pred_[l].watch.clear();
    }
  // Layer 0's lookahead from the token embeddings: router_0 · RMSNorm(x)·ffn_norm_0.
  if (c_ == 0 || p_.layer0 != Layer0Lookahead::embeddings || !layout_.layer_has_experts(0)) return;
  (void)n_embd;
  const LayerWeights& l0 = model_.weights().layers[0];
  Prediction& p = pred_[0];
  const float* norm0 = reinterpret_cast<const float*>(l0.ffn_norm.data);
  if (!predict_rows(0, -1, embeddings, n_tokens, norm0, p.ids).ok()) return;
  if (p_.prediction_override) p_.prediction_override(0, 0, n_tokens, p.ids);
  p.row0 = 0;
  p.rows = n_tokens;
  p.valid = true;
  p.watch.clear();
  prefetch_prediction(0, 0);
}

void StreamingExpertSource::end_batch(const float* output_hidden, int64_t n_embd) {
  (void)n_embd;
  Lock lk(mu_);
  // The next step's layer-0 lookahead from this step's final hidden state.
  if (output_hidden != nullptr && c_ != 0 && p_.layer0 == Layer0Lookahead::final_hidden &&
      layout_.layer_has_experts(0)) {
    Prediction& p = pred_[0];
    if (predictor_.predict(0, output_hidden, 1, p.ids).ok()) {
      p.row0 = 0;
      p.rows = 1;
      p.valid = true;
      p.watch.clear();
      prefetch_prediction(0, 0);
    }
  }
  close_batch();
}

void StreamingExpertSource::close_batch() {
  if (!in_batch_) return;
  const auto now = Clock::now();
  if (outstanding_ == 0) batch_.io_idle_s += seconds(now - idle_since_);
  idle_since_ = now;
  batch_.wall_s += seconds(now - batch_start_);
  batch_.batches = 1;
  batch_.tokens = static_cast<uint64_t>(n_batch_rows_);
  total_.add(batch_);
  last_ = batch_;
  const size_t L = batch_.layers.size();
  batch_ = SchedStats();
  batch_.layers.resize(L);
  in_batch_ = false;
}

}  // namespace les::sched
