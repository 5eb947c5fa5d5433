// lru and lfu_aged (eviction_policy.h): one ordered set of the evictable keys.
#include <set>
#include <tuple>

#include "sched/aged_count.h"
#include "sched/eviction_policy.h"

namespace les::sched {
namespace {

// Orders evictable keys by (rank, last use); lru ranks every key 0.
class OrderedEvictor final : public Evictor {
 public:
  OrderedEvictor(const EvictorParams& p, bool aged)
      : aged_(aged), half_life_(p.half_life_tokens),
        count_(static_cast<size_t>(p.n_layer) * static_cast<size_t>(p.n_expert)),
        stamp_(count_.size(), 0) {}

  void advance_tokens(int64_t n) noexcept override { t_ += static_cast<double>(n); }
  void on_use(int32_t key) noexcept override {
    if (aged_) count_[static_cast<size_t>(key)].add_use(t_, half_life_);
    stamp_[static_cast<size_t>(key)] = ++clock_;
  }
  void add(int32_t key) override { set_.insert(entry(key)); }
  void remove(int32_t key) noexcept override { set_.erase(entry(key)); }
  int32_t victim() override { return set_.empty() ? -1 : std::get<2>(*set_.begin()); }
  void on_load(int32_t key) noexcept override { stamp_[static_cast<size_t>(key)] = ++clock_; }

 private:
  using Entry = std::tuple<double, uint64_t, int32_t>;
  Entry entry(int32_t key) const noexcept {
    const size_t k = static_cast<size_t>(key);
    return {aged_ ? count_[k].g : 0.0, stamp_[k], key};
  }
  bool aged_;
  double half_life_;
  double t_ = 0;
  uint64_t clock_ = 0;
  std::vector<AgedCount> count_;
  std::vector<uint64_t> stamp_;
  std::set<Entry> set_;
};

}  // namespace

std::unique_ptr<Evictor> make_lru_evictor(const EvictorParams& p) { return std::make_unique<OrderedEvictor>(p, false); }
std::unique_ptr<Evictor> make_lfu_aged_evictor(const EvictorParams& p) {
  return std::make_unique<OrderedEvictor>(p, true);
}

}  // namespace les::sched
