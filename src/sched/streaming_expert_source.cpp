#include "sched/streaming_expert_source.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "core/gguf/gguf_reader.h"
#include "sched/aged_count.h"

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

// Bytes of bookkeeping reserved per (layer, expert) key: the cache's slot
// record, key map and free list, the per-slot read state (parts left, first
// error) and the eviction policy's entry (an aged count, a stamp and an
// ordered-set node). An upper estimate of those, fixed since the first
// scheduler (changing it moves every budget's slot count).
constexpr size_t kBookkeepingBytesPerKey = 96;
static_assert(kBookkeepingBytesPerKey >= 3 * sizeof(int32_t) + sizeof(Status) + sizeof(AgedCount) + sizeof(uint64_t),
              "the per-key reserve covers at least the per-key tables' fixed-size fields");

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
  // The scheduler's reserve: the lookahead's scratch and stored predictions,
  // the per-key bookkeeping and the batch-bytes predictor's memo.
  const size_t keys = static_cast<size_t>(hp.n_layer_all) * static_cast<size_t>(hp.n_expert);
  cp.reserved_bytes = Lookahead::reserve_bytes(hp, p.n_batch_max) + keys * kBookkeepingBytesPerKey +
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

namespace {

LookaheadParams lookahead_params(const StreamingParams& p, int32_t c) {
  LookaheadParams lp;
  lp.c = c;
  lp.gate = p.prefetch_gate;
  lp.layer0 = p.layer0;
  lp.next_norm = p.predictor_next_norm;
  lp.prediction_override = p.prediction_override;
  return lp;
}

}  // namespace

StreamingExpertSource::StreamingExpertSource(const Model& model, const StreamingParams& p, SlotLayout layout,
                                             int32_t c)
    : model_(model), p_(p), layout_(std::move(layout)), c_(c), lookahead_(model, layout_, lookahead_params(p, c)),
      batch_bytes_(model) {}

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
  if (auto info = s->backend_->file_info(s->file_); info.ok()) s->direct_io_ = info->direct_io;
  model.release_expert_pages();  // expert bytes come through the reactor from now on
  const size_t cap = static_cast<size_t>(hp.n_layer_all) * static_cast<size_t>(hp.n_expert);
  s->parts_left_.assign(cap, 0);
  s->slot_error_.resize(cap);
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

bool StreamingExpertSource::layer_waits_for_reads() const {
  for (const Want& w : cur_) {
    if (w.expert < 0 || !w.error.ok()) continue;
    if (w.slot < 0 || cache_->state(w.slot) != SlotState::ready) return true;
  }
  return false;
}

// The lookahead's view of the source: the cache, and a read ahead through
// submit_expert, the one way reads start. Used with mu_ held.
class StreamingExpertSource::Target final : public PrefetchTarget {
 public:
  explicit Target(StreamingExpertSource& s) : s_(s) {}
  bool cached(int32_t layer, int32_t expert) const override { return s_.cache_->lookup(layer, expert) >= 0; }
  void hint(int32_t layer, const std::vector<int32_t>& experts) override { s_.cache_->hint(layer, experts); }
  bool busy() const override { return s_.layer_waits_for_reads(); }
  // Keep n_expert_used slots claimable: at a small budget, reads ahead filling
  // every free slot would make the next layer's demand reads (the router's
  // real choice where the prediction missed) wait for a slot behind them.
  int32_t room() const override {
    const ExpertCache& c = *s_.cache_;
    return c.n_slots() - c.n_pinned() - c.n_filling() - s_.model_.hparams().n_expert_used;
  }
  bool read_ahead(int32_t layer, int32_t expert) override {
    int32_t unused_layer = -1;
    std::optional<int32_t> slot = s_.cache_->claim(layer, expert, true, &unused_layer);
    if (!slot) return false;
    if (unused_layer >= 0) s_.batch_.prefetch_unused_bytes += s_.layout_.expert_bytes(unused_layer);
    return s_.submit_expert(layer, expert, *slot, true).ok();
  }
  void count_gated() override { ++s_.batch_.prefetch_gated; }

 private:
  StreamingExpertSource& s_;
};

void StreamingExpertSource::issue_lookahead() {
  Target target(*this);
  lookahead_.issue_due(target);
}

void StreamingExpertSource::on_routed(const Routing& r) {
  if (r.layer < 0 || r.layer >= layout_.n_layer()) return;
  Lock lk(mu_);
  const LookaheadScore score = lookahead_.on_routed(r, n_batch_rows_);
  LayerSchedStats& ls = batch_.layers[static_cast<size_t>(r.layer)];
  ls.pred_hits += score.hits;
  ls.pred_actual += score.actual;
  ls.pred_predicted += score.predicted;
  if (in_verify_) credit_verify_uses(r);
  issue_lookahead();
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
    issue_lookahead();
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
  issue_lookahead();
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
  (void)n_embd;
  lookahead_.begin_batch(embeddings, n_tokens);
  issue_lookahead();
}

void StreamingExpertSource::end_batch(const float* output_hidden, int64_t n_embd) {
  (void)n_embd;
  Lock lk(mu_);
  lookahead_.end_batch(output_hidden);  // the next step's layer 0, from this step's final hidden state
  issue_lookahead();
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
