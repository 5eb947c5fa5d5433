// adaptive (eviction_policy.h): follows whichever of lru and next_use the
// ghost caches say is paying now.
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "sched/eviction_policy.h"

namespace les::sched {
namespace {

// A ghost cache: keys only (no data), the real cache's byte capacity, its own
// ranking by one policy. It sees the real cache's lookups (on_use) and
// answers whether that policy alone would have hit. The keys a layer looked
// up stay unevictable until the next layer begins, as the real cache pins a
// group's entries while it computes.
class GhostCache {
 public:
  GhostCache(std::unique_ptr<Evictor> rank, const std::vector<size_t>& bytes, int32_t n_expert)
      : rank_(std::move(rank)), bytes_(bytes), n_expert_(n_expert),
        resident_(bytes.size() * static_cast<size_t>(n_expert), 0) {}

  void advance_tokens(int64_t n) noexcept {
    release();
    rank_->advance_tokens(n);
  }
  void begin_layer(int32_t layer) noexcept {
    release();
    rank_->begin_layer(layer);
  }
  void hint(int32_t layer, std::span<const int32_t> experts) { rank_->hint(layer, experts); }
  void set_capacity(size_t bytes) {
    capacity_ = bytes;
    shrink(0);
  }
  // A lookup of `key`: true when this ghost holds it (a hit). Otherwise it is
  // inserted, evicting by the ghost's policy until it fits.
  bool access(int32_t key) {
    const size_t k = static_cast<size_t>(key);
    if (resident_[k] == 2) {  // used by this layer already
      rank_->on_use(key);
      return true;
    }
    const bool hit = resident_[k] == 1;
    if (hit) {
      rank_->remove(key);
    } else {
      if (!shrink(cost(key))) return false;  // cannot fit beside the pinned keys: not cached
      used_ += cost(key);
      rank_->on_load(key);
    }
    rank_->on_use(key);
    resident_[k] = 2;
    pinned_.push_back(key);
    return hit;
  }

 private:
  size_t cost(int32_t key) const noexcept { return bytes_[static_cast<size_t>(key / n_expert_)]; }
  // Evicts until `extra` more bytes fit; false when the evictable keys run out.
  bool shrink(size_t extra) {
    while (used_ + extra > capacity_) {
      const int32_t v = rank_->victim();
      if (v < 0) return false;
      rank_->remove(v);
      resident_[static_cast<size_t>(v)] = 0;
      used_ -= cost(v);
    }
    return true;
  }
  void release() {
    for (int32_t key : pinned_) {
      resident_[static_cast<size_t>(key)] = 1;
      rank_->add(key);
    }
    pinned_.clear();
  }

  std::unique_ptr<Evictor> rank_;
  std::vector<size_t> bytes_;
  int32_t n_expert_;
  std::vector<char> resident_;  // 0 absent, 1 cached (evictable), 2 cached and used by this layer
  std::vector<int32_t> pinned_;
  size_t capacity_ = 0, used_ = 0;
};

class AdaptiveEvictor final : public Evictor {
 public:
  explicit AdaptiveEvictor(const EvictorParams& p)
      : half_life_(p.next_use_half_life), lru_(make_lru_evictor(p)), next_use_(make_next_use_evictor(p)),
        ghost_lru_(make_lru_evictor(p), p.entry_bytes, p.n_expert),
        ghost_next_use_(make_next_use_evictor(p), p.entry_bytes, p.n_expert) {}

  void set_capacity_bytes(size_t bytes) noexcept override {
    ghost_lru_.set_capacity(bytes);
    ghost_next_use_.set_capacity(bytes);
  }
  void advance_tokens(int64_t n) noexcept override {
    const double decay = std::exp2(-static_cast<double>(n) / half_life_);
    score_lru_ *= decay;
    score_next_use_ *= decay;
    for (Evictor* e : inner()) e->advance_tokens(n);
    ghost_lru_.advance_tokens(n);
    ghost_next_use_.advance_tokens(n);
  }
  void begin_layer(int32_t layer) noexcept override {
    for (Evictor* e : inner()) e->begin_layer(layer);
    ghost_lru_.begin_layer(layer);
    ghost_next_use_.begin_layer(layer);
  }
  void hint(int32_t layer, std::span<const int32_t> experts) override {
    for (Evictor* e : inner()) e->hint(layer, experts);
    ghost_lru_.hint(layer, experts);
    ghost_next_use_.hint(layer, experts);
  }
  void on_load(int32_t key) noexcept override {
    for (Evictor* e : inner()) e->on_load(key);
  }
  void on_use(int32_t key) noexcept override {
    for (Evictor* e : inner()) e->on_use(key);
    // A hit one ghost has and the other has not is the evidence (ARC's ghost
    // hits): a lookup both or neither hit says nothing about which pays.
    const bool a = ghost_lru_.access(key), b = ghost_next_use_.access(key);
    if (a != b) (a ? score_lru_ : score_next_use_) += 1.0;
  }
  void add(int32_t key) override {
    for (Evictor* e : inner()) e->add(key);
  }
  void remove(int32_t key) noexcept override {
    for (Evictor* e : inner()) e->remove(key);
  }
  int32_t victim() override { return (score_lru_ > score_next_use_ ? lru_ : next_use_)->victim(); }

 private:
  std::array<Evictor*, 2> inner() const noexcept { return {lru_.get(), next_use_.get()}; }

  double half_life_;
  std::unique_ptr<Evictor> lru_, next_use_;
  GhostCache ghost_lru_, ghost_next_use_;
  double score_lru_ = 0, score_next_use_ = 0;  // ghost hits the other ghost missed, aged
};

}  // namespace

std::unique_ptr<Evictor> make_adaptive_evictor(const EvictorParams& p) {
  return std::make_unique<AdaptiveEvictor>(p);
}

}  // namespace les::sched
