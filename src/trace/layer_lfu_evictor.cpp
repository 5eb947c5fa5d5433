#include "trace/layer_lfu_evictor.h"

namespace les::trace {

LayerLfuEvictor::LayerLfuEvictor(const sched::EvictorParams& p, size_t capacity_bytes)
    : n_layer_(p.n_layer), n_expert_(p.n_expert), half_life_(p.half_life_tokens), bytes_(p.entry_bytes),
      share_(static_cast<double>(capacity_bytes) / static_cast<double>(p.n_layer)),
      resident_(static_cast<size_t>(p.n_layer), 0), layers_(static_cast<size_t>(p.n_layer)),
      count_(static_cast<size_t>(p.n_layer) * static_cast<size_t>(p.n_expert)), stamp_(count_.size(), 0) {}

LayerLfuEvictor::Entry LayerLfuEvictor::entry(int32_t key) const noexcept {
  const size_t k = static_cast<size_t>(key);
  return {count_[k].g, stamp_[k], key};
}

void LayerLfuEvictor::on_load(int32_t key) noexcept {
  stamp_[static_cast<size_t>(key)] = ++clock_;
  resident_[static_cast<size_t>(key / n_expert_)] += bytes_[static_cast<size_t>(key / n_expert_)];
}

void LayerLfuEvictor::on_use(int32_t key) noexcept {
  count_[static_cast<size_t>(key)].add_use(t_, half_life_);
  stamp_[static_cast<size_t>(key)] = ++clock_;
}

void LayerLfuEvictor::add(int32_t key) { layers_[static_cast<size_t>(key / n_expert_)].insert(entry(key)); }
void LayerLfuEvictor::remove(int32_t key) noexcept { layers_[static_cast<size_t>(key / n_expert_)].erase(entry(key)); }

int32_t LayerLfuEvictor::victim() {
  int32_t from = -1;
  if (cur_ >= 0 && cur_ < n_layer_ && static_cast<double>(resident_[static_cast<size_t>(cur_)]) >= share_ &&
      !layers_[static_cast<size_t>(cur_)].empty())
    from = cur_;
  if (from < 0) {  // the layer furthest over its share
    double most = 0;
    for (int32_t l = 0; l < n_layer_; ++l) {
      const double over = static_cast<double>(resident_[static_cast<size_t>(l)]) - share_;
      if (!layers_[static_cast<size_t>(l)].empty() && over > most) {
        most = over;
        from = l;
      }
    }
  }
  if (from < 0) {  // no layer over its share has an evictable entry: the least frequent anywhere
    for (int32_t l = 0; l < n_layer_; ++l) {
      const auto& s = layers_[static_cast<size_t>(l)];
      if (!s.empty() && (from < 0 || *s.begin() < *layers_[static_cast<size_t>(from)].begin())) from = l;
    }
  }
  if (from < 0) return -1;
  const int32_t key = std::get<2>(*layers_[static_cast<size_t>(from)].begin());
  resident_[static_cast<size_t>(from)] -= bytes_[static_cast<size_t>(from)];
  return key;
}

}  // namespace les::trace
