// next_use (eviction_policy.h): expected layer steps to the next use, per byte.
#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "sched/aged_count.h"
#include "sched/eviction_policy.h"

namespace les::sched {
namespace {

class NextUseEvictor final : public Evictor {
 public:
  explicit NextUseEvictor(const EvictorParams& p)
      : n_layer_(p.n_layer), n_expert_(p.n_expert), h_(p.next_use_half_life),
        prior_rate_(static_cast<double>(p.n_expert_used) / static_cast<double>(p.n_expert)),
        bytes_(p.entry_bytes), layers_(static_cast<size_t>(p.n_layer)),
        count_(static_cast<size_t>(p.n_layer) * static_cast<size_t>(p.n_expert)), stamp_(count_.size(), 0),
        hinted_(static_cast<size_t>(p.n_expert), 0) {}

  void advance_tokens(int64_t n) noexcept override {
    const double dn = static_cast<double>(n);
    t_ += dn;
    tokens_ = tokens_ * std::exp2(-dn / h_) + dn;
    clear_hint();
  }
  void begin_layer(int32_t layer) noexcept override {
    cur_ = layer;
    if (layer == hint_layer_) clear_hint();
  }
  void hint(int32_t layer, std::span<const int32_t> experts) override {
    clear_hint();
    if (layer < 0 || layer >= n_layer_) return;
    hint_layer_ = layer;
    for (int32_t e : experts)
      if (e >= 0 && e < n_expert_ && !hinted_[static_cast<size_t>(e)]) {
        hinted_[static_cast<size_t>(e)] = 1;
        hint_list_.push_back(e);
      }
  }
  void on_load(int32_t key) noexcept override { stamp_[static_cast<size_t>(key)] = ++clock_; }
  void on_use(int32_t key) noexcept override {
    count_[static_cast<size_t>(key)].add_use(t_, h_);
    stamp_[static_cast<size_t>(key)] = ++clock_;
  }
  void add(int32_t key) override { layers_[static_cast<size_t>(key / n_expert_)].insert(entry(key)); }
  void remove(int32_t key) noexcept override { layers_[static_cast<size_t>(key / n_expert_)].erase(entry(key)); }

  int32_t victim() override {
    int32_t best = -1;
    double best_score = -1;
    const int32_t cur = cur_ < 0 ? n_layer_ - 1 : cur_;
    for (int32_t l = 0; l < n_layer_; ++l) {
      const auto& set = layers_[static_cast<size_t>(l)];
      auto it = set.begin();
      if (l == hint_layer_)  // the next layer's named experts stay
        while (it != set.end() && hinted_[static_cast<size_t>(std::get<2>(*it) % n_expert_)]) ++it;
      if (it == set.end()) continue;
      // Layer steps until layer l runs again: 1 for the next layer, n_layer for the one just served.
      const int32_t d = ((l - cur - 1) % n_layer_ + n_layer_) % n_layer_ + 1;
      const double f = count_[static_cast<size_t>(std::get<2>(*it))].value(t_, h_);
      const double p = (f + prior_rate_) / (tokens_ + 1.0);  // one token of prior at rate k / n_expert
      const double steps = d + n_layer_ * (1.0 / std::min(p, 1.0) - 1.0);
      const double score = steps * static_cast<double>(bytes_[static_cast<size_t>(l)]);
      if (score > best_score) {
        best_score = score;
        best = std::get<2>(*it);
      }
    }
    return best;
  }

 private:
  // Within a layer: smallest aged frequency first, then least recently used.
  using Entry = std::tuple<double, uint64_t, int32_t>;
  Entry entry(int32_t key) const noexcept {
    const size_t k = static_cast<size_t>(key);
    return {count_[k].g, stamp_[k], key};
  }
  void clear_hint() noexcept {
    for (int32_t e : hint_list_) hinted_[static_cast<size_t>(e)] = 0;
    hint_list_.clear();
    hint_layer_ = -1;
  }

  int32_t n_layer_, n_expert_;
  double h_, prior_rate_;
  std::vector<size_t> bytes_;
  std::vector<std::set<Entry>> layers_;
  std::vector<AgedCount> count_;
  std::vector<uint64_t> stamp_;
  double t_ = 0, tokens_ = 0;
  uint64_t clock_ = 0;
  int32_t cur_ = -1;
  int32_t hint_layer_ = -1;
  std::vector<char> hinted_;
  std::vector<int32_t> hint_list_;
};

}  // namespace

std::unique_ptr<Evictor> make_next_use_evictor(const EvictorParams& p) { return std::make_unique<NextUseEvictor>(p); }

}  // namespace les::sched
