#include "sched/expert_cache.h"

#include <sys/mman.h>

#include <cmath>
#include <cstdio>

namespace les::sched {

const char* eviction_policy_name(EvictionPolicy p) noexcept {
  return p == EvictionPolicy::lru ? "lru" : "lfu_aged";
}

Result<EvictionPolicy> parse_eviction_policy(const std::string& name) {
  if (name == "lru") return EvictionPolicy::lru;
  if (name == "lfu" || name == "lfu_aged") return EvictionPolicy::lfu_aged;
  return invalid_argument_error("unknown eviction policy '" + name + "' (known: lru, lfu_aged)");
}

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
      p.slot_bytes % p.alignment != 0 || p.half_life_tokens <= 0)
    return invalid_argument_error("expert cache: bad parameters (n_layer " + std::to_string(p.n_layer) +
                                  ", n_expert " + std::to_string(p.n_expert) + ", slot_bytes " +
                                  std::to_string(p.slot_bytes) + ", min_slots " + std::to_string(p.min_slots) + ")");
  std::unique_ptr<ExpertCache> c(new ExpertCache(p));
  c->capacity_ = p.n_layer * p.n_expert;
  c->mapped_bytes_ = static_cast<size_t>(c->capacity_) * p.slot_bytes;
  void* m = ::mmap(nullptr, c->mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
  if (m == MAP_FAILED) return out_of_memory_error("expert cache: cannot reserve " + mib(c->mapped_bytes_));
  c->base_ = static_cast<std::byte*>(m);  // mmap is page aligned (>= 4096)
  c->slots_.resize(static_cast<size_t>(c->capacity_));
  c->key_slot_.assign(static_cast<size_t>(c->capacity_), -1);
  c->freq_.assign(static_cast<size_t>(c->capacity_), 0.0);
  c->freq_token_.assign(static_cast<size_t>(c->capacity_), 0);
  LES_RETURN_IF_ERROR(c->set_budget(p.budget_bytes));
  return c;
}

ExpertCache::~ExpertCache() {
  if (base_ != nullptr) ::munmap(base_, mapped_bytes_);
}

Status ExpertCache::set_budget(size_t budget_bytes) {
  const size_t min = min_budget_bytes(p_);
  if (budget_bytes < min)
    return invalid_argument_error("memory budget " + std::to_string(budget_bytes) + " bytes (" + mib(budget_bytes) +
                                  ") is below the minimum " + std::to_string(min) + " bytes (" + mib(min) +
                                  "): " + std::to_string(p_.min_slots) + " expert slots of " +
                                  std::to_string(p_.slot_bytes) + " bytes (one layer's selected experts, read "
                                  "in place with O_DIRECT padding) + " + std::to_string(p_.reserved_bytes) +
                                  " bytes of scheduler scratch");
  const size_t n = (budget_bytes - p_.reserved_bytes) / p_.slot_bytes;
  const int32_t new_slots = static_cast<int32_t>(std::min<size_t>(n, static_cast<size_t>(capacity_)));
  budget_ = budget_bytes;
  const int32_t old = n_slots_;
  n_slots_ = new_slots;
  if (new_slots > old) populate(old, new_slots);
  for (int32_t s = new_slots; s < old; ++s) {
    Slot& sl = slots_[static_cast<size_t>(s)];
    if (sl.pins == 0 && sl.state != SlotState::filling) {
      drop(s);
      discard_pages(s);
    }
  }
  return Status();
}

int32_t ExpertCache::lookup(int32_t layer, int32_t expert) const noexcept {
  if (layer < 0 || layer >= p_.n_layer || expert < 0 || expert >= p_.n_expert) return -1;
  return key_slot_[static_cast<size_t>(layer * p_.n_expert + expert)];
}

double ExpertCache::score(int32_t key) const noexcept {
  const double age = static_cast<double>(token_ - freq_token_[static_cast<size_t>(key)]);
  return freq_[static_cast<size_t>(key)] * std::exp2(-age / p_.half_life_tokens);
}

void ExpertCache::note_use(int32_t slot) noexcept {
  Slot& s = slots_[static_cast<size_t>(slot)];
  s.last_use = ++clock_;
  if (s.key >= 0) {
    freq_[static_cast<size_t>(s.key)] = score(s.key) + 1.0;
    freq_token_[static_cast<size_t>(s.key)] = token_;
  }
}

std::optional<int32_t> ExpertCache::claim(int32_t layer, int32_t expert, bool prefetch, int32_t* evicted_unused_layer) {
  if (evicted_unused_layer != nullptr) *evicted_unused_layer = -1;
  if (layer < 0 || layer >= p_.n_layer || expert < 0 || expert >= p_.n_expert) return std::nullopt;
  int32_t victim = -1, protected_victim = -1;
  double best = 0;
  uint64_t best_use = 0, oldest_protected = 0;
  for (int32_t i = 0; i < n_slots_; ++i) {
    const Slot& s = slots_[static_cast<size_t>(i)];
    if (s.state == SlotState::empty && s.pins == 0) {
      victim = i;
      break;
    }
    if (s.state != SlotState::ready || s.pins > 0) continue;
    if (s.prefetched_unused && s.prefetch_token + 1 >= token_) {  // protected lookahead
      if (protected_victim < 0 || s.last_use < oldest_protected) {
        protected_victim = i;
        oldest_protected = s.last_use;
      }
      continue;
    }
    const double sc = p_.policy == EvictionPolicy::lfu_aged ? score(s.key) : 0.0;
    if (victim < 0 || sc < best || (sc == best && s.last_use < best_use)) {
      victim = i;
      best = sc;
      best_use = s.last_use;
    }
  }
  // Protection is a preference: a demand read (the router's real choice)
  // takes the oldest protected prefetch rather than wait for a slot that no
  // read in flight would ever free.
  if (victim < 0 && !prefetch) victim = protected_victim;
  if (victim < 0) return std::nullopt;
  Slot& v = slots_[static_cast<size_t>(victim)];
  if (v.state == SlotState::ready) {
    ++counters_.evictions;
    if (v.prefetched_unused) {
      ++counters_.prefetched_unused_evictions;
      if (evicted_unused_layer != nullptr) *evicted_unused_layer = v.key / p_.n_expert;
    }
    drop(victim);
  }
  const int32_t key = layer * p_.n_expert + expert;
  v.state = SlotState::filling;
  v.key = key;
  v.prefetched_unused = prefetch;
  v.prefetch_token = token_;
  v.last_use = ++clock_;
  key_slot_[static_cast<size_t>(key)] = victim;
  return victim;
}

void ExpertCache::fill_done(int32_t slot, bool ok) {
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (s.state != SlotState::filling) return;
  if (!ok) {
    drop(slot);
  } else {
    s.state = SlotState::ready;
  }
  if (slot >= n_slots_ && s.pins == 0) {
    drop(slot);
    discard_pages(slot);
  }
}

ExpertHandle ExpertCache::pin(int32_t slot) {
  Slot& s = slots_[static_cast<size_t>(slot)];
  ++s.pins;
  s.prefetched_unused = false;
  note_use(slot);
  return ExpertHandle(this, slot);
}

void ExpertCache::unpin(int32_t slot) noexcept {
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (s.pins > 0) --s.pins;
  if (s.pins == 0 && slot >= n_slots_ && s.state != SlotState::filling) {
    drop(slot);
    discard_pages(slot);
  }
}

void ExpertCache::drop(int32_t slot) noexcept {
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (s.key >= 0 && key_slot_[static_cast<size_t>(s.key)] == slot) key_slot_[static_cast<size_t>(s.key)] = -1;
  s.key = -1;
  s.state = SlotState::empty;
  s.prefetched_unused = false;
}

void ExpertCache::populate(int32_t first, int32_t last) noexcept {
  // Fault the slots' pages in now (the kernel zeroes each new page): done
  // lazily, the first read into every slot paid it during decode (a quarter of
  // the CPU samples of a 30B-A3B decode with an 8 GiB cache still filling).
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif
  std::byte* p = slot_data(first);
  const size_t n = static_cast<size_t>(last - first) * p_.slot_bytes;
  if (::madvise(p, n, MADV_POPULATE_WRITE) == 0) return;
  const size_t page = 4096;  // older kernels: touch one byte per page
  for (size_t off = 0; off < n; off += page) static_cast<volatile std::byte*>(p)[off] = std::byte{0};
}

void ExpertCache::discard_pages(int32_t slot) noexcept {
  (void)::madvise(slot_data(slot), p_.slot_bytes, MADV_DONTNEED);
}

int32_t ExpertCache::n_pinned() const noexcept {
  int32_t n = 0;
  for (int32_t i = 0; i < capacity_; ++i) n += slots_[static_cast<size_t>(i)].pins > 0;
  return n;
}

int32_t ExpertCache::n_filling() const noexcept {
  int32_t n = 0;
  for (int32_t i = 0; i < capacity_; ++i) n += slots_[static_cast<size_t>(i)].state == SlotState::filling;
  return n;
}

}  // namespace les::sched
