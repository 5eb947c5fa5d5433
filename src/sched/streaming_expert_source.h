// StreamingExpertSource: the LES scheduler. An ExpertSource that keeps routed
// experts in an ExpertCache inside a memory budget, reads missing ones through
// the I/O reactor (src/io), reads ahead what the Lookahead (lookahead.h:
// predictor, gate, stored predictions, deferral) has due, and hands experts
// to the MoE layer in the order their bytes arrive (ready-first). It owns the
// slots, the reads, the statistics and the budget; the lookahead owns what
// the future holds and is asked at the safe points marked (*) below.
//
// Where reads start, per batch (DEVELOPERS.md, "One decode step"):
//   begin_batch(x)       opens the batch's statistics; the lookahead predicts
//                        layer 0 from the token embeddings (router_0 ·
//                        RMSNorm(x)·ffn_norm_0; Layer0Lookahead::embeddings,
//                        the default) (*);
//   per MoE layer l:
//   prepare(l, E_l)      pins cached experts, claims slots and submits demand
//                        reads for the missing ones at once (queued when every
//                        slot is pinned: prefill with a small budget);
//   on_routed(l)         the lookahead scores its prediction for l (recall)
//                        and predicts l + 1 from router_{l+1} · u_l: each
//                        token's top-c (*). Its reads are held back until
//                        layer l's own reads are done, so the device serves
//                        demand reads first; capped so that k slots stay
//                        claimable for the next layer's demand reads; only
//                        ranks the PrefetchGate admits: those whose uncached
//                        candidates were, measured, used at least half the
//                        time; every candidate still informs eviction;
//   next_ready / get     returns an expert whose bytes are in (waits on the
//                        reactor only when none is; the wait is timed) (*);
//   done / release       unpin, so slots can be reused within the layer (*);
//   end_batch(h)         the lookahead predicts the next step's layer 0 from
//                        the final hidden state (Layer0Lookahead::final_hidden)
//                        (*), and the batch's statistics close (also when it failed).
// tests/sched/test_predictor_recall.cpp measures both layer-0 predictors'
// recall (printed with the per-layer table).
// Prefill: a chunk's layer reads each of its experts at most once (the MoE
// layer batches all tokens routed to an expert into one matmul).
//
// Results are bit-identical to the resident source: the bytes are the file's,
// and the MoE layer accumulates per (token, slot) in slot order.
//
// Errors: a failed read (EIO, file truncated) is retried once as a demand
// read (a prefetch or an earlier batch's read is not trusted); if that fails
// too, the decode that needed it fails with an io Status naming the expert.
// The source stays usable (the slot is emptied; a later use reads it again).
//
// Thread-safety: the ExpertSource calls come from one Context (thread) at a
// time. set_budget(), budget_bytes(), n_slots(), stats() and
// last_batch_stats() may also be called from any other thread at any time
// (an app's memory-pressure callback): every entry point holds one mutex
// while it touches the cache or the statistics, and releases it while it waits
// for a read, so another thread waits at most for one scheduler step (a few
// µs of bookkeeping or one layer's lookahead scoring), never for I/O or an
// expert's compute. The model must outlive the source; the source must outlive
// its use by a Context.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "core/model/expert_source.h"
#include "core/model/model.h"
#include "io/io_backend.h"
#include "io/io_factory.h"
#include "sched/expert_cache.h"
#include "sched/batch_bytes_predictor.h"
#include "sched/lookahead.h"
#include "sched/sched_stats.h"
#include "sched/slot_layout.h"
#include "sched/slot_registration.h"

namespace les::sched {

struct StreamingParams {
  size_t budget_bytes = 0;            // expert slots + scheduler scratch (see ExpertCache)
  int32_t prefetch_c = -1;            // candidates per token: -1 = n_expert_used + 2 (clamped to 2k);
                                      // 0 = no lookahead (on-demand reads only); else k <= c <= 2k
  // Read ahead only candidates of the ranks whose uncached candidates the next
  // layer selected at least this fraction of the time, measured
  // (prefetch_gate.h); 0 = every candidate (the ungated lookahead). [0, 1].
  double prefetch_gate = kDefaultPrefetchGate;
  EvictionPolicy policy = kDefaultEvictionPolicy;
  double half_life_tokens = 16.0;     // lfu_aged ageing
  // Measured on the trained F16 fixture (128 tokens decoded one by one, c = k+2):
  // layer-0 recall 0.98 from the token embedding, 0.20 from the final hidden state.
  Layer0Lookahead layer0 = Layer0Lookahead::embeddings;
  io::IoBackendKind io = io::IoBackendKind::automatic;
  uint32_t queue_depth = 64;
  bool use_direct_io = true;
  int32_t n_batch_max = 512;          // sizes the scratch counted in the budget; sched::create_context
                                      // sets it to the context's n_batch
  // Progress of faulting in the expert cache's pages when the source is
  // created (bytes done, total; ExpertCacheParams::prefault_progress): false
  // cancels, and create() fails with `cancelled`.
  std::function<bool(size_t done, size_t total)> prefault_progress;
  // true and no prefault_progress: the cache's pages fault in on a background
  // thread where the kernel allows (ExpertCacheParams::background_prefault).
  bool background_prefault = false;
  // true: next_ready hands out an expert as soon as its bytes are in, so the
  // MoE layer computes it while other reads are in flight. false: it waits
  // until every requested expert that holds a slot is ready, then hands them
  // out in request order ("read the layer, then compute": the ablation
  // baseline). Results are bit-identical either way.
  bool ready_first = true;
  // true: the lookahead scores router_{l+1} · (u_l ⊙ ffn_norm_{l+1} / ffn_norm_l),
  // i.e. layer l's normalised residual with the next layer's own norm weights;
  // false: router_{l+1} · u_l (predictor "A" of docs/model-graphs.md section 5).
  // Recall at c = k: trained F16 fixture 0.735 either way (per layer within
  // 0.003); qwen3-30b-a3b synth preset (norm weights differ per layer) 0.85 -> 0.96.
  bool predictor_next_norm = true;
  // Bench only (bench_trace's end-to-end mode; never set through les.h or les
  // run): replaces the lookahead predictor's candidates (lookahead.h).
  PredictionOverride prediction_override;
};

class StreamingExpertSource final : public ExpertSource {
 public:
  // The smallest budget `params` accept for `model` (bytes).
  // Errors: as create (layout).
  static Result<size_t> min_budget_bytes(const Model& model, const StreamingParams& params);
  // The budget one token's selected experts need with `params` (bytes): the
  // instance's one_token_budget_bytes() before creating one. Errors: as create (layout).
  static Result<size_t> one_token_budget_bytes(const Model& model, const StreamingParams& params);
  // Opens model.file().path() on a new reactor (or on `backend` when given:
  // tests, fault injection), allocates the cache and releases the model's
  // expert pages (Model::release_expert_pages). Contexts get one through
  // sched::create_context (context_factory.h). Errors: invalid_argument
  // (budget below the minimum: the message names it; c outside [k, 2k]),
  // unsupported (no routed experts; backend unavailable), io (cannot open).
  static Result<std::unique_ptr<StreamingExpertSource>> create(const Model& model, const StreamingParams& params,
                                                               std::unique_ptr<io::IoBackend> backend = nullptr);
  ~StreamingExpertSource() override;

  // ExpertSource
  Status prepare(int32_t layer, std::span<const int32_t> experts) override;
  Result<ExpertMatrices> get(int32_t layer, int32_t expert) override;
  void release(int32_t layer) override;
  void begin_batch(const float* embeddings, int64_t n_tokens, int64_t n_embd) override;
  void end_batch(const float* output_hidden, int64_t n_embd) override;
  void on_routed(const Routing& r) override;
  Result<size_t> next_ready(int32_t layer, std::span<const int32_t> pending) override;
  void done(int32_t layer, int32_t expert) override;
  // kComputeIdleSpin: the compute workers spin through most waits for reads
  // instead of sleeping, so they start the next matvec with the caller (a
  // sleeping worker's wake-up in a VM outlasted whole expert matvecs, which
  // the caller then ran alone).
  std::chrono::nanoseconds compute_idle_spin() const override { return kComputeIdleSpin; }
  static constexpr std::chrono::nanoseconds kComputeIdleSpin = std::chrono::milliseconds(3);

  // ExpertCost (speculative decoding). predict_batch_bytes: BatchBytesPredictor
  // against the cache's contents and reads in flight (all zeros when the
  // prediction fails: an unknown token id). last_batch_io: the last finished
  // batch's bytes read and I/O wait (last_batch_stats()). begin_verify: the
  // next batch advances the cache's clock by one token, not by its rows (a
  // verify pass is one step of the text), and in it an expert earns its use
  // in the eviction policy's recency/frequency only through a row that is
  // kept: row 0's experts at once, experts only drafts selected when
  // on_verified() keeps a row that selected them (rejected drafts never
  // push useful experts out). Thread-safe like the rest.
  void predict_batch_bytes(std::span<const int32_t> tokens, std::span<uint64_t> out) override;
  BatchIo last_batch_io() const override;
  void begin_verify() override;
  void on_verified(int32_t n_rows_kept) override;

  // Lowers (or raises) the budget at run time, from any thread, also while
  // the Context decodes: applied before it returns, between two scheduler
  // steps (a safe point: no slot being computed from or read into is freed).
  // Slots past the new count that are unused are emptied and their pages
  // returned at once; those pinned by the layer computing now or being filled
  // by a read in flight are emptied when released / when the read completes
  // (within the current layer). Slots registered as the backend's fixed
  // buffers stay pinned by the kernel until the registration is dropped: here,
  // after waiting for the reads in flight, unless the scheduler thread is
  // waiting for reads at that moment, then by it before its next read into
  // such a slot or at the next batch. Results stay bit-identical (the bytes are the
  // file's whatever slot holds them). Errors: invalid_argument below the
  // minimum (nothing changes).
  Status set_budget(size_t budget_bytes);
  size_t budget_bytes() const;
  int32_t n_slots() const;
  int32_t prefetch_c() const noexcept { return c_; }
  const std::string& backend_name() const noexcept { return backend_name_; }
  // Whether expert reads bypass the page cache: the file's O_DIRECT descriptor
  // passed its probe (io/file_table.h); false: buffered reads.
  bool direct_io() const noexcept { return direct_io_; }
  const SlotLayout& layout() const noexcept { return layout_; }
  // The budget one token's selected experts need (bytes): scheduler scratch
  // plus n_expert_used slots for every trunk layer with routed experts. Below
  // it an LRU cache evicts each entry just before the layer order needs it
  // again (0 hits); next_use degrades gracefully, but every token reads most
  // of its experts.
  size_t one_token_budget_bytes() const noexcept;
  // Slots registered with the I/O backend as fixed buffers (0: none yet, or
  // the backend refused; see slot_registration.h).
  int32_t registered_slots() const;

  // Totals over finished batches, and the last finished batch alone (copies:
  // another thread may read them while the Context decodes).
  SchedStats stats() const;
  SchedStats last_batch_stats() const;
  void reset_stats();

 private:
  struct Want {
    int32_t expert = -1;
    int32_t slot = -1;      // -1: queued (no slot yet) or failed
    ExpertHandle handle;
    Status error;
    int32_t demand_reads = 0;  // reads this want issued (a failed one is retried once)
  };
  using Clock = std::chrono::steady_clock;

  using Lock = std::unique_lock<std::mutex>;
  StreamingExpertSource(const Model& model, const StreamingParams& p, SlotLayout layout, int32_t c);
  // The ExpertSource operations with mu_ held by the caller (`lk`).
  void release_locked();
  Result<size_t> next_ready_locked(Lock& lk, int32_t layer, std::span<const int32_t> pending);
  Want* find_want(int32_t expert);
  Status submit_expert(int32_t layer, int32_t expert, int32_t slot, bool prefetch);
  Status issue_queued();
  // Reaps completions; with `wait`, blocks for at least one with mu_ released.
  Status pump(Lock& lk, bool wait);
  void on_complete(const io::ReadCompletion& c);
  void note_submitted(size_t n);
  // Fixed-buffer registration of the slots (streaming_expert_registration.cpp).
  // drain_reads: reaps every outstanding read, mu_ held (I/O wait).
  // registration_before_read: before a read into `slot`: drains first when
  // the registration is stale for it; errors: internal when it cannot be
  // dropped. renew_registration: at a batch start, drains and (re)registers
  // when the registration is missing or stale.
  void drain_reads();
  Status registration_before_read(int32_t slot);
  void renew_registration();
  void close_batch();  // adds the batch's figures to the totals
  // A verify pass's layer: row 0's experts earn their use now, the others wait in draft_uses_.
  void credit_verify_uses(const Routing& r);
  // Whether a prepared expert of the current layer still waits for its read
  // (or a slot): the lookahead's orders wait until it does not.
  bool layer_waits_for_reads() const;
  // A safe point: the reads ahead the lookahead has due, through Target.
  void issue_lookahead();
  // The lookahead's view of this source (lookahead.h: PrefetchTarget).
  class Target;
  friend class Target;

  // Held by every entry point while it touches the cache, the reads'
  // bookkeeping or the statistics (see Thread-safety above).
  mutable std::mutex mu_;
  const Model& model_;
  StreamingParams p_;
  SlotLayout layout_;
  int32_t c_;
  std::unique_ptr<ExpertCache> cache_;
  Lookahead lookahead_;  // after layout_: it reads it
  BatchBytesPredictor batch_bytes_;
  std::unique_ptr<io::IoBackend> backend_;  // after cache_: destroyed first (waits for reads into slots)
  SlotRegistration registration_;           // the slots as the backend's fixed buffers
  io::FileId file_ = 0;
  std::string backend_name_;
  bool direct_io_ = false;  // direct_io()

  int32_t cur_layer_ = -1;
  std::vector<Want> cur_;
  std::vector<int32_t> parts_left_;   // per slot: reads still in flight
  std::vector<Status> slot_error_;    // per slot: first failure of its reads
  std::vector<io::ReadCompletion> comps_;
  std::vector<io::ReadRequest> reqs_;
  size_t outstanding_ = 0;
  bool waiting_ = false;  // pump() waits for reads with mu_ released: the backend is in use

  bool in_batch_ = false;
  bool verify_next_ = false;  // begin_verify() was called: the next batch is one step
  bool in_verify_ = false;    // the current batch is a verify pass
  struct DraftUse {
    int32_t layer, expert, first_row;  // the first row (>= 1) that selected the expert
  };
  std::vector<DraftUse> draft_uses_;  // this verify pass's uses awaiting on_verified
  int64_t n_batch_rows_ = 0;
  Clock::time_point batch_start_{}, idle_since_{};
  SchedStats batch_, last_, total_;
};

}  // namespace les::sched
