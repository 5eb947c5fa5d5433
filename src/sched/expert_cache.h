// ExpertCache: routed experts inside a byte budget, with pinning handles and
// an eviction policy (eviction_policy.h).
//
// Memory: one anonymous mapping reserves (without committing) a slot for every
// (layer, expert); only the first n_slots() are used, and set_budget() faults
// their pages in at once (MADV_POPULATE_WRITE), so the budget is resident from
// the start and decode never pays a page fault for a slot (lazily, zeroing new
// pages took a quarter of the CPU of a 30B-A3B decode while an 8 GiB cache
// filled). Slots are also the read buffers: the reactor reads expert
// bytes straight into them (aligned for O_DIRECT). set_budget() can shrink the
// cache at run time: slots past the new count are emptied and their pages
// returned to the OS at once (MADV_DONTNEED); a slot still pinned or being
// filled is emptied the moment it is unpinned / its read completes.
// Without memory (ExpertCacheParams::backed = false: trace replays and
// simulations) the same bookkeeping runs over entries of per-layer sizes
// (entry_bytes) and nothing is mapped.
//
// Budget: budget_bytes = reserved_bytes (the scheduler's scratch) + the
// entries' bytes; with memory every entry takes one slot of slot_bytes, so
// n_slots = (budget_bytes - reserved_bytes) / slot_bytes. The minimum accepted
// is reserved_bytes + min_slots * slot_bytes (the streaming source asks for
// one slot: the MoE layer computes its experts one after another through it).
//
// Entry life: empty -> claim() -> filling (the owner reads into it) ->
// fill_done(ok) -> ready (or empty on failure). pin() marks a use and keeps the
// entry from eviction until its ExpertHandle is released.
//
// Eviction: claim() takes a free slot while the entries' bytes stay within the
// budget, else evicts the policy's victim among ready, unpinned entries until
// the new one fits. A slot filled by a prefetch and not yet used is protected
// during the token it was prefetched in and the next one (so a lookahead read
// is not evicted by the next one before its layer runs); a demand claim that
// finds no other victim takes the oldest protected one. Every operation is
// O(log n) (O(n_layer) for next_use's victim), none scans the slots.
//
// Background prefault (ExpertCacheParams::background_prefault, no
// prefault_progress, Linux 5.14+): create() returns at once and a thread of
// the cache faults the first budget's pages in with MADV_POPULATE_WRITE, which
// maps pages without writing them, so reads into slots (the reactor) and
// compute on them may run meanwhile with no race on their bytes. set_budget()
// and the destructor stop and join it first (it stops between chunks of
// kBackgroundPrefaultChunkBytes); set_budget() restarts it for the slots still
// to fault. Where the kernel lacks MADV_POPULATE_WRITE (EINVAL) create() faults
// synchronously, as without the flag. A page not faulted yet is faulted by its
// first use, as any anonymous page.
//
// Thread-safety: thread-compatible: one thread at a time (the streaming
// source serialises its callers with its own mutex, so set_budget() from an
// app's thread never runs during another operation); the background thread
// touches no bookkeeping. Handles must be released before the cache is
// destroyed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "sched/eviction_policy.h"
#include "util/status.h"

namespace les::sched {

struct ExpertCacheParams {
  int32_t n_layer = 0;
  int32_t n_expert = 0;
  size_t slot_bytes = 0;       // multiple of `alignment`
  size_t alignment = 4096;     // slot start alignment (O_DIRECT)
  int32_t min_slots = 1;       // slots the smallest budget must hold
  size_t reserved_bytes = 0;   // budget share kept for scratch outside the slots
  size_t budget_bytes = 0;
  EvictionPolicy policy = kDefaultEvictionPolicy;
  double half_life_tokens = 16.0;  // lfu_aged
  double next_use_half_life = kNextUseHalfLife;
  // Experts each token selects per layer (k: next_use's prior rate k / n_expert);
  // 0 = min_slots.
  int32_t n_expert_used = 0;
  // false: bookkeeping only, no memory (slot_data() is null): trace replays.
  bool backed = true;
  // Bytes one entry of each layer takes from the budget (n_layer values);
  // empty = slot_bytes for every layer. Only without memory (a memory-backed
  // entry always occupies a whole slot).
  std::vector<size_t> entry_bytes;
  // When set, ranks evictable entries instead of `policy` (offline-optimal
  // replays); must outlive the cache. Not owned.
  Evictor* custom_evictor = nullptr;
  // Called while create() faults the first budget's pages in (bytes done and
  // total, after each chunk of kPrefaultChunkBytes, on the creating thread);
  // returning false stops it and create() fails with `cancelled`. Never called
  // by set_budget() later. Empty: no calls.
  std::function<bool(size_t done, size_t total)> prefault_progress;
  // true and no prefault_progress: fault the pages in on a background thread
  // where the kernel allows it (see the top of this file); false: create() and
  // set_budget() fault them in before returning.
  bool background_prefault = false;
};

// Bytes faulted in between two prefault_progress calls (a multiple of any slot
// size is not needed: chunks are whole slots, at least one).
inline constexpr size_t kPrefaultChunkBytes = size_t{64} << 20;
// Bytes the background thread faults in between two checks of its stop flag
// (at least one slot): bounds how long set_budget() and destruction wait.
inline constexpr size_t kBackgroundPrefaultChunkBytes = size_t{8} << 20;

class ExpertCache;

// Pins one slot while compute reads it. Move-only; unpins exactly once (on
// release() or destruction). An empty handle (default, moved-from, released)
// holds nothing.
class ExpertHandle {
 public:
  ExpertHandle() = default;
  ExpertHandle(ExpertHandle&& o) noexcept : cache_(o.cache_), slot_(o.slot_) { o.cache_ = nullptr; o.slot_ = -1; }
  ExpertHandle& operator=(ExpertHandle&& o) noexcept;
  ExpertHandle(const ExpertHandle&) = delete;
  ExpertHandle& operator=(const ExpertHandle&) = delete;
  ~ExpertHandle() { release(); }

  void release() noexcept;
  bool empty() const noexcept { return cache_ == nullptr; }
  int32_t slot() const noexcept { return slot_; }

 private:
  friend class ExpertCache;
  ExpertHandle(ExpertCache* c, int32_t slot) : cache_(c), slot_(slot) {}
  ExpertCache* cache_ = nullptr;
  int32_t slot_ = -1;
};

enum class SlotState : uint8_t { empty, filling, ready };

struct ExpertCacheCounters {
  uint64_t evictions = 0;
  uint64_t prefetched_unused_evictions = 0;  // slots filled by prefetch evicted before any use
};

class ExpertCache {
 public:
  // The smallest budget these parameters accept.
  static size_t min_budget_bytes(const ExpertCacheParams& p) noexcept;
  // Errors: invalid_argument (bad sizes; budget below the minimum, the message
  // names the minimum in bytes and MiB), out_of_memory (the reservation failed).
  static Result<std::unique_ptr<ExpertCache>> create(const ExpertCacheParams& p);
  ~ExpertCache();
  ExpertCache(const ExpertCache&) = delete;
  ExpertCache& operator=(const ExpertCache&) = delete;

  // Changes the budget; shrinking empties the slots past the new count at once
  // (pinned/filling ones as soon as they are released); without memory it
  // evicts by policy until the entries fit. Errors: invalid_argument (below
  // the minimum; nothing changes).
  Status set_budget(size_t budget_bytes);
  size_t budget_bytes() const noexcept { return budget_; }
  // Slots usable now (with memory: how many entries fit; without: every key).
  int32_t n_slots() const noexcept { return n_slots_; }
  size_t slot_bytes() const noexcept { return p_.slot_bytes; }
  // Bytes the entries take now, and the most they may take.
  size_t used_bytes() const noexcept { return used_; }
  size_t capacity_bytes() const noexcept { return capacity_bytes_; }
  // The budget share kept for scratch outside the entries (ExpertCacheParams::reserved_bytes).
  size_t reserved_bytes() const noexcept { return p_.reserved_bytes; }

  // The slot holding (or filling) (layer, expert), or -1.
  int32_t lookup(int32_t layer, int32_t expert) const noexcept;
  SlotState state(int32_t slot) const noexcept { return slots_[static_cast<size_t>(slot)].state; }
  std::byte* slot_data(int32_t slot) const noexcept {
    return base_ == nullptr ? nullptr : base_ + static_cast<size_t>(slot) * p_.slot_bytes;
  }
  bool was_prefetched_unused(int32_t slot) const noexcept { return slots_[static_cast<size_t>(slot)].prefetched_unused; }

  // A slot for (layer, expert), evicting victims until it fits, now `filling`;
  // nullopt when no free slot can be made (every other entry pinned, filling
  // or protected). Precondition: lookup() == -1.
  // *evicted_unused_layer (if given) is set to the layer of a victim that a
  // prefetch filled and nothing used, else -1.
  std::optional<int32_t> claim(int32_t layer, int32_t expert, bool prefetch, int32_t* evicted_unused_layer = nullptr);
  // The read into a filling slot finished: ready, or empty when !ok.
  void fill_done(int32_t slot, bool ok);
  // Marks a use of the slot (policy bookkeeping) and pins it. Precondition: not empty.
  ExpertHandle pin(int32_t slot, bool count_use = true);
  // A use of (layer, expert) counted after the fact (a verify pass's draft-only
  // expert whose draft was kept: VerifyCredit); nothing when it is not cached.
  void credit_use(int32_t layer, int32_t expert) noexcept;
  // A batch of n_tokens begins (ageing of frequencies; prefetch protection
  // counts batches).
  void advance_token(int64_t n_tokens = 1) noexcept;
  // The scheduler serves `layer` now (next_use's layer order).
  void begin_layer(int32_t layer) noexcept { evictor_->begin_layer(layer); }
  // The lookahead predictor's candidates for `layer` (the next layer to run).
  void hint(int32_t layer, std::span<const int32_t> experts) { evictor_->hint(layer, experts); }

  // True while a background prefault may still run (started and not yet
  // joined); wait_prefault() joins it (it runs to its end) and returns how
  // many slots are faulted in (n_slots() unless it stopped on an error).
  bool prefault_pending() const noexcept { return bg_.joinable(); }
  // True once every slot of the current count has its pages (faulted in here
  // or by the background thread, which may not be joined yet).
  bool slots_faulted_in() const noexcept {
    return (bg_.joinable() ? bg_done_.load(std::memory_order_acquire) : populated_) >= n_slots_;
  }
  int32_t wait_prefault() noexcept;

  int32_t n_pinned() const noexcept { return n_pinned_; }
  int32_t n_filling() const noexcept { return n_filling_; }
  const ExpertCacheCounters& counters() const noexcept { return counters_; }
  EvictionPolicy policy() const noexcept { return p_.policy; }

 private:
  friend class ExpertHandle;
  struct Slot {
    SlotState state = SlotState::empty;
    int32_t key = -1;  // layer * n_expert + expert
    int32_t pins = 0;
    uint64_t prefetch_token = 0;
    uint32_t generation = 0;  // bumped whenever the slot is emptied (stale protection records)
    bool prefetched_unused = false;
    bool evictable = false;  // in the evictor's candidates
  };
  struct Protected {
    int32_t slot;
    uint32_t generation;
  };
  explicit ExpertCache(const ExpertCacheParams& p) : p_(p) {}
  size_t entry_cost(int32_t key) const noexcept { return cost_[static_cast<size_t>(key / p_.n_expert)]; }
  bool is_protected(const Slot& s) const noexcept { return s.prefetched_unused && s.prefetch_token + 1 >= token_; }
  void update_evictable(int32_t slot) noexcept;  // adds to / removes from the evictor's candidates
  void expire_protection() noexcept;
  int32_t oldest_protected() noexcept;
  bool evict_one(bool demand, int32_t* evicted_unused_layer);
  void unpin(int32_t slot) noexcept;
  void drop(int32_t slot) noexcept;       // empties a slot (unmaps its key)
  void discard_pages(int32_t slot) noexcept;
  // Faults in slots [first, last), in chunks reported to `progress` (may be
  // null); false when progress asked to stop.
  bool populate(int32_t first, int32_t last,
                const std::function<bool(size_t, size_t)>* progress = nullptr) noexcept;
  void rebuild_free_list();
  // Faults slots [populated_, n_slots_) in: on the background thread when
  // enabled and the kernel has MADV_POPULATE_WRITE, else now (with
  // `progress`). Returns false when progress asked to stop.
  bool prefault_new_slots(const std::function<bool(size_t, size_t)>* progress) noexcept;
  // Stops the background thread (if any) after its current chunk and joins
  // it; populated_ becomes the slots it finished.
  void stop_background() noexcept;

  ExpertCacheParams p_;
  std::unique_ptr<Evictor> own_evictor_;
  Evictor* evictor_ = nullptr;
  std::vector<size_t> cost_;  // per layer: bytes an entry takes from the budget
  size_t budget_ = 0;
  size_t capacity_bytes_ = 0;
  size_t used_ = 0;
  int32_t n_slots_ = 0;
  int32_t capacity_ = 0;  // reserved slots (n_layer * n_expert)
  std::byte* base_ = nullptr;
  size_t mapped_bytes_ = 0;
  std::vector<Slot> slots_;
  std::vector<int32_t> key_slot_;   // key -> slot or -1
  std::vector<int32_t> free_;       // empty usable slots (a stack)
  std::deque<Protected> protected_; // unused prefetches, oldest first
  int32_t n_pinned_ = 0, n_filling_ = 0;
  uint64_t token_ = 0;
  const std::function<bool(size_t, size_t)>* prefault_progress_ = nullptr;  // during create() only
  bool prefault_cancelled_ = false;
  // Slots [0, populated_) are faulted in (the background thread publishes
  // its progress in bg_done_ and populated_ takes it when joined).
  int32_t populated_ = 0;
  bool background_ok_ = true;  // false once MADV_POPULATE_WRITE failed with EINVAL
  std::thread bg_;
  std::atomic<bool> bg_stop_{false};
  std::atomic<int32_t> bg_done_{0};
  ExpertCacheCounters counters_;
};

}  // namespace les::sched
