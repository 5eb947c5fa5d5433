#include "sched/expert_cache.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

namespace les::sched {

ExpertHandle& ExpertHandle::operator=(ExpertHandle&& o) noexcept {
  if (this != &o) {
    release();
    cache_ = o.cache_;
    slot_ = o.slot_;
    o.cache_ = nullptr;
    o.slot_ = -1;
  }
  return *this;
}

void ExpertHandle::release() noexcept {
  if (cache_ != nullptr) cache_->unpin(slot_);
  cache_ = nullptr;
  slot_ = -1;
}

size_t ExpertCache::min_budget_bytes(const ExpertCacheParams& p) noexcept {
  return p.reserved_bytes + static_cast<size_t>(std::max(p.min_slots, 1)) * p.slot_bytes;
}

namespace {

std::string mib(size_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

Result<std::unique_ptr<ExpertCache>> ExpertCache::create(const ExpertCacheParams& p) {
  if (p.n_layer <= 0 || p.n_expert <= 0 || p.slot_bytes == 0 || p.min_slots <= 0 || p.alignment == 0 ||
      p.slot_bytes % p.alignment != 0 || static_cast<int64_t>(p.n_layer) * p.n_expert > (int64_t{1} << 24))
    return invalid_argument_error("expert cache: bad parameters (n_layer " + std::to_string(p.n_layer) +
                                  ", n_expert " + std::to_string(p.n_expert) + ", slot_bytes " +
                                  std::to_string(p.slot_bytes) + ", min_slots " + std::to_string(p.min_slots) + ")");
  if (p.n_expert_used < 0 || p.n_expert_used > p.n_expert)
    return invalid_argument_error("expert cache: n_expert_used " + std::to_string(p.n_expert_used) +
                                  " outside [0, n_expert " + std::to_string(p.n_expert) + "]");
  if (!p.entry_bytes.empty()) {
    if (p.backed)
      return invalid_argument_error("expert cache: per-layer entry sizes need backed = false (a slot holds any entry)");
    if (p.entry_bytes.size() != static_cast<size_t>(p.n_layer))
      return invalid_argument_error("expert cache: " + std::to_string(p.entry_bytes.size()) + " entry sizes for " +
                                    std::to_string(p.n_layer) + " layers");
    for (size_t b : p.entry_bytes)
      if (b == 0 || b > p.slot_bytes)
        return invalid_argument_error("expert cache: entry size " + std::to_string(b) + " outside [1, slot_bytes " +
                                      std::to_string(p.slot_bytes) + "]");
  }
  std::unique_ptr<ExpertCache> c(new ExpertCache(p));
  c->cost_ = p.entry_bytes.empty() ? std::vector<size_t>(static_cast<size_t>(p.n_layer), p.slot_bytes) : p.entry_bytes;
  if (p.custom_evictor != nullptr) {
    c->evictor_ = p.custom_evictor;
  } else {
    EvictorParams ep;
    ep.n_layer = p.n_layer;
    ep.n_expert = p.n_expert;
    ep.n_expert_used = p.n_expert_used > 0 ? p.n_expert_used : p.min_slots;
    ep.entry_bytes = c->cost_;
    ep.half_life_tokens = p.half_life_tokens;
    ep.next_use_half_life = p.next_use_half_life;
    LES_ASSIGN_OR_RETURN(c->own_evictor_, make_evictor(p.policy, ep));
    c->evictor_ = c->own_evictor_.get();
  }
  c->capacity_ = p.n_layer * p.n_expert;
  if (p.backed) {
    c->mapped_bytes_ = static_cast<size_t>(c->capacity_) * p.slot_bytes;
    void* m = ::mmap(nullptr, c->mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    if (m == MAP_FAILED) return out_of_memory_error("expert cache: cannot reserve " + mib(c->mapped_bytes_));
    c->base_ = static_cast<std::byte*>(m);  // mmap is page aligned (>= 4096)
  }
  c->slots_.resize(static_cast<size_t>(c->capacity_));
  c->key_slot_.assign(static_cast<size_t>(c->capacity_), -1);
  if (c->p_.prefault_progress) c->prefault_progress_ = &c->p_.prefault_progress;
  LES_RETURN_IF_ERROR(c->set_budget(p.budget_bytes));
  c->prefault_progress_ = nullptr;
  c->p_.prefault_progress = nullptr;  // never called again (its captures may not outlive create())
  if (c->prefault_cancelled_)
    return cancelled_error("expert cache: cancelled while faulting in the budget's " + mib(c->capacity_bytes_) +
                           " (prefault progress callback returned false)");
  return c;
}

ExpertCache::~ExpertCache() {
  stop_background();
  if (base_ != nullptr) ::munmap(base_, mapped_bytes_);
}

void ExpertCache::rebuild_free_list() {
  free_.clear();
  for (int32_t s = n_slots_ - 1; s >= 0; --s)  // popped from the back: lowest slot first
    if (slots_[static_cast<size_t>(s)].state == SlotState::empty) free_.push_back(s);
}

Status ExpertCache::set_budget(size_t budget_bytes) {
  const size_t min = min_budget_bytes(p_);
  if (budget_bytes < min)
    return invalid_argument_error("memory budget " + std::to_string(budget_bytes) + " bytes (" + mib(budget_bytes) +
                                  ") is below the minimum " + std::to_string(min) + " bytes (" + mib(min) +
                                  "): " + std::to_string(p_.min_slots) +
                                  (p_.min_slots == 1 ? " expert slot" : " expert slots") + " of " +
                                  std::to_string(p_.slot_bytes) +
                                  " bytes (one expert each, read in place with O_DIRECT padding) + " +
                                  std::to_string(p_.reserved_bytes) + " bytes of scheduler scratch");
  budget_ = budget_bytes;
  if (!p_.backed) {
    n_slots_ = capacity_;
    capacity_bytes_ = budget_bytes - p_.reserved_bytes;
    evictor_->set_capacity_bytes(capacity_bytes_);
    if (free_.empty() && used_ == 0) rebuild_free_list();
    expire_protection();
    while (used_ > capacity_bytes_ && evict_one(false, nullptr)) {
    }
    return Status();
  }
  const size_t n = (budget_bytes - p_.reserved_bytes) / p_.slot_bytes;
  const int32_t new_slots = static_cast<int32_t>(std::min<size_t>(n, static_cast<size_t>(capacity_)));
  stop_background();  // no page of a slot past the new count is faulted in after it is discarded below
  const int32_t old = n_slots_;
  n_slots_ = new_slots;
  capacity_bytes_ = static_cast<size_t>(new_slots) * p_.slot_bytes;
  evictor_->set_capacity_bytes(capacity_bytes_);
  populated_ = std::min(populated_, new_slots);
  if (new_slots > populated_ && !prefault_new_slots(prefault_progress_)) prefault_cancelled_ = true;
  for (int32_t s = new_slots; s < old; ++s) {
    Slot& sl = slots_[static_cast<size_t>(s)];
    if (sl.pins == 0 && sl.state != SlotState::filling) {
      drop(s);
      discard_pages(s);
    }
  }
  rebuild_free_list();
  return Status();
}

int32_t ExpertCache::lookup(int32_t layer, int32_t expert) const noexcept {
  if (layer < 0 || layer >= p_.n_layer || expert < 0 || expert >= p_.n_expert) return -1;
  return key_slot_[static_cast<size_t>(layer * p_.n_expert + expert)];
}

void ExpertCache::advance_token(int64_t n_tokens) noexcept {
  ++token_;
  evictor_->advance_tokens(std::max<int64_t>(n_tokens, 1));
}

void ExpertCache::update_evictable(int32_t slot) noexcept {
  Slot& s = slots_[static_cast<size_t>(slot)];
  const bool want = s.state == SlotState::ready && s.pins == 0 && slot < n_slots_ && !is_protected(s);
  if (want == s.evictable) return;
  s.evictable = want;
  if (want) {
    evictor_->add(s.key);
  } else {
    evictor_->remove(s.key);
  }
}

void ExpertCache::expire_protection() noexcept {
  while (!protected_.empty()) {
    const Protected p = protected_.front();
    const Slot& s = slots_[static_cast<size_t>(p.slot)];
    const bool live = s.generation == p.generation && s.prefetched_unused;
    // Records are in fill order, so their tokens are in order up to reads that
    // completed a token late: an expired record behind a live one waits at
    // most one token more (a demand claim can take it meanwhile).
    if (live && is_protected(s)) return;
    protected_.pop_front();
    if (live) update_evictable(p.slot);
  }
}

int32_t ExpertCache::oldest_protected() noexcept {
  for (const Protected& p : protected_) {
    const Slot& s = slots_[static_cast<size_t>(p.slot)];
    if (s.generation == p.generation && s.prefetched_unused && s.state == SlotState::ready && s.pins == 0 &&
        p.slot < n_slots_)
      return p.slot;
  }
  return -1;
}

bool ExpertCache::evict_one(bool demand, int32_t* evicted_unused_layer) {
  int32_t victim = -1;
  const int32_t key = evictor_->victim();
  if (key >= 0) victim = key_slot_[static_cast<size_t>(key)];
  // Protection is a preference: a demand read (the router's real choice)
  // takes the oldest protected prefetch rather than wait for a slot that no
  // read in flight would ever free.
  if (victim < 0 && demand) victim = oldest_protected();
  if (victim < 0) return false;
  Slot& v = slots_[static_cast<size_t>(victim)];
  ++counters_.evictions;
  if (v.prefetched_unused) {
    ++counters_.prefetched_unused_evictions;
    if (evicted_unused_layer != nullptr) *evicted_unused_layer = v.key / p_.n_expert;
  }
  drop(victim);
  return true;
}

std::optional<int32_t> ExpertCache::claim(int32_t layer, int32_t expert, bool prefetch, int32_t* evicted_unused_layer) {
  if (evicted_unused_layer != nullptr) *evicted_unused_layer = -1;
  if (layer < 0 || layer >= p_.n_layer || expert < 0 || expert >= p_.n_expert) return std::nullopt;
  const int32_t key = layer * p_.n_expert + expert;
  if (key_slot_[static_cast<size_t>(key)] >= 0) return std::nullopt;
  expire_protection();
  const size_t cost = entry_cost(key);
  while (free_.empty() || used_ + cost > capacity_bytes_)
    if (!evict_one(!prefetch, evicted_unused_layer)) return std::nullopt;
  const int32_t slot = free_.back();
  free_.pop_back();
  Slot& v = slots_[static_cast<size_t>(slot)];
  v.state = SlotState::filling;
  ++n_filling_;
  v.key = key;
  v.prefetched_unused = prefetch;
  v.prefetch_token = token_;
  used_ += cost;
  key_slot_[static_cast<size_t>(key)] = slot;
  evictor_->on_load(key);
  return slot;
}

void ExpertCache::fill_done(int32_t slot, bool ok) {
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (s.state != SlotState::filling) return;
  --n_filling_;
  s.state = SlotState::ready;
  if (!ok) {
    drop(slot);
  } else {
    if (s.prefetched_unused && s.pins == 0) protected_.push_back({slot, s.generation});
    update_evictable(slot);
  }
  if (slot >= n_slots_ && s.pins == 0) {
    drop(slot);
    discard_pages(slot);
  }
}

ExpertHandle ExpertCache::pin(int32_t slot, bool count_use) {
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (s.pins++ == 0) ++n_pinned_;
  s.prefetched_unused = false;
  update_evictable(slot);  // pinned: not evictable (before the use changes its rank)
  if (s.key >= 0 && count_use) evictor_->on_use(s.key);
  return ExpertHandle(this, slot);
}

void ExpertCache::credit_use(int32_t layer, int32_t expert) noexcept {
  const int32_t slot = lookup(layer, expert);
  if (slot < 0) return;
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (s.key < 0) return;
  // The evictor ranks only while the key is not evictable: take it out, count, put it back.
  if (s.evictable) {
    s.evictable = false;
    evictor_->remove(s.key);
  }
  evictor_->on_use(s.key);
  update_evictable(slot);
}

void ExpertCache::unpin(int32_t slot) noexcept {
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (s.pins > 0 && --s.pins == 0) --n_pinned_;
  if (s.pins == 0 && slot >= n_slots_ && s.state != SlotState::filling) {
    drop(slot);
    discard_pages(slot);
    return;
  }
  update_evictable(slot);
}

void ExpertCache::drop(int32_t slot) noexcept {
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (s.evictable) {
    evictor_->remove(s.key);
    s.evictable = false;
  }
  if (s.state == SlotState::filling) --n_filling_;
  if (s.key >= 0) {
    if (key_slot_[static_cast<size_t>(s.key)] == slot) key_slot_[static_cast<size_t>(s.key)] = -1;
    used_ -= entry_cost(s.key);
  }
  const bool was_empty = s.state == SlotState::empty;
  s.key = -1;
  s.state = SlotState::empty;
  s.prefetched_unused = false;
  ++s.generation;
  if (!was_empty && slot < n_slots_) free_.push_back(slot);
}

bool ExpertCache::populate(int32_t first, int32_t last, const std::function<bool(size_t, size_t)>* progress) noexcept {
  // Fault the slots' pages in now (the kernel zeroes each new page): done
  // lazily, the first read into every slot paid it during decode (a quarter of
  // the CPU samples of a 30B-A3B decode with an 8 GiB cache still filling).
  if (base_ == nullptr || last <= first) return true;
  const int32_t per_chunk = static_cast<int32_t>(std::max<size_t>(1, kPrefaultChunkBytes / p_.slot_bytes));
  const size_t total = static_cast<size_t>(last - first) * p_.slot_bytes;
  for (int32_t a = first; a < last; a += per_chunk) {
    const int32_t b = std::min(last, a + per_chunk);
    std::byte* p = slot_data(a);
    const size_t n = static_cast<size_t>(b - a) * p_.slot_bytes;
    if (::madvise(p, n, MADV_POPULATE_WRITE) != 0) {
      // Older kernels: write one byte per page of the empty slots (a slot past an
      // earlier, smaller count may still be pinned or filling: its bytes stay).
      const size_t page = 4096;
      for (int32_t sl = a; sl < b; ++sl) {
        const Slot& st = slots_[static_cast<size_t>(sl)];
        if (st.state != SlotState::empty || st.pins > 0) continue;
        auto* q = static_cast<volatile std::byte*>(slot_data(sl));
        for (size_t off = 0; off < p_.slot_bytes; off += page) q[off] = std::byte{0};
      }
    }
    if (progress != nullptr && *progress) {
      bool go = false;
      try {
        go = (*progress)(static_cast<size_t>(b - first) * p_.slot_bytes, total);
      } catch (...) {
        go = false;  // a throwing callback stops, as returning false does
      }
      if (!go) return false;
    }
  }
  return true;
}

bool ExpertCache::prefault_new_slots(const std::function<bool(size_t, size_t)>* progress) noexcept {
  const int32_t first = populated_, last = n_slots_;
  if (base_ == nullptr || last <= first) {
    populated_ = std::max(populated_, last);
    return true;
  }
  const bool watched = progress != nullptr && *progress;
  if (p_.background_prefault && !watched && background_ok_) {
    // One page tells whether the kernel has MADV_POPULATE_WRITE: without it the
    // only way to fault a page in is to write it, which must not race with reads
    // into slots, so the fallback stays on this thread.
    if (::madvise(slot_data(first), 4096, MADV_POPULATE_WRITE) == 0) {
      bg_stop_.store(false);
      bg_done_.store(first);
      const size_t per = std::max<size_t>(1, kBackgroundPrefaultChunkBytes / p_.slot_bytes);
      try {
        bg_ = std::thread([this, first, last, per] {
          for (int32_t a = first; a < last; a += static_cast<int32_t>(per)) {
            if (bg_stop_.load(std::memory_order_relaxed)) return;
            const int32_t b = std::min(last, a + static_cast<int32_t>(per));
            // Any failure (ENOMEM, a signal): stop; the rest faults in on first use.
            if (::madvise(slot_data(a), static_cast<size_t>(b - a) * p_.slot_bytes, MADV_POPULATE_WRITE) != 0) return;
            bg_done_.store(b, std::memory_order_release);
          }
        });
        return true;
      } catch (...) {
        // No thread (resource limits): fault in here instead.
      }
    } else if (errno == EINVAL) {
      background_ok_ = false;
    }
  }
  const bool go = populate(first, last, progress);
  if (go) populated_ = last;
  return go;
}

void ExpertCache::stop_background() noexcept {
  if (!bg_.joinable()) return;
  bg_stop_.store(true);
  bg_.join();
  populated_ = bg_done_.load(std::memory_order_acquire);
}

int32_t ExpertCache::wait_prefault() noexcept {
  if (bg_.joinable()) {
    bg_.join();
    populated_ = bg_done_.load(std::memory_order_acquire);
  }
  return std::min(populated_, n_slots_);
}

void ExpertCache::discard_pages(int32_t slot) noexcept {
  if (base_ == nullptr) return;
  (void)::madvise(slot_data(slot), p_.slot_bytes, MADV_DONTNEED);
}

}  // namespace les::sched
