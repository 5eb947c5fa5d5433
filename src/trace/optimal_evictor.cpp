#include "trace/optimal_evictor.h"

#include <limits>

namespace les::trace {

OptimalEvictor::OptimalEvictor(const RouteTrace& trace)
    : uses_(static_cast<size_t>(trace.n_layer) * static_cast<size_t>(trace.n_expert)), cursor_(uses_.size(), 0) {
  for (size_t g = 0; g < trace.groups.size(); ++g) {
    const RouteGroup& grp = trace.groups[g];
    for (int32_t e : grp.experts) uses_[static_cast<size_t>(grp.layer * trace.n_expert + e)].push_back(static_cast<int64_t>(g));
  }
}

int64_t OptimalEvictor::next_use(int32_t key) const noexcept {
  const auto& u = uses_[static_cast<size_t>(key)];
  const size_t c = cursor_[static_cast<size_t>(key)];
  return c < u.size() ? u[c] : std::numeric_limits<int64_t>::max();
}

void OptimalEvictor::on_use(int32_t key) noexcept {
  // Called while the key is not evictable: its rank may change freely.
  ++cursor_[static_cast<size_t>(key)];
}

}  // namespace les::trace
