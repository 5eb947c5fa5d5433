#include "sched/prefetch_gate.h"

#include <algorithm>

namespace les::sched {

PrefetchGate::PrefetchGate(int32_t c, double threshold)
    : threshold_(std::clamp(threshold, 0.0, 1.0)), used_(static_cast<size_t>(std::max(c, 0)), 1.0) {}

bool PrefetchGate::admits(int32_t rank) const noexcept {
  if (rank < 0 || static_cast<size_t>(rank) >= used_.size()) return false;
  return threshold_ <= 0.0 || used_[static_cast<size_t>(rank)] >= threshold_;
}

void PrefetchGate::observe(int32_t rank, bool used) noexcept {
  if (rank < 0 || static_cast<size_t>(rank) >= used_.size()) return;
  double& u = used_[static_cast<size_t>(rank)];
  u += ((used ? 1.0 : 0.0) - u) / kPrefetchGateWindow;
}

double PrefetchGate::used_fraction(int32_t rank) const noexcept {
  if (rank < 0 || static_cast<size_t>(rank) >= used_.size()) return 0.0;
  return used_[static_cast<size_t>(rank)];
}

}  // namespace les::sched
