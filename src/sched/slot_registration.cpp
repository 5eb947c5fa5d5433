// SlotRegistration; see slot_registration.h.
#include "sched/slot_registration.h"

#include <algorithm>
#include <span>
#include <vector>

namespace les::sched {
namespace {

constexpr size_t kMaxRegionBytes = size_t{1} << 30;  // io_uring refuses a fixed buffer above 1 GiB

}  // namespace

void SlotRegistration::note_budget_change(int32_t n_slots) noexcept {
  if (registered_ == 0) return;
  low_ = std::min(low_, n_slots);
  if (n_slots != registered_) stale_ = true;
}

bool SlotRegistration::needs_drain(int32_t slot) const noexcept {
  return stale_ && registered_ > 0 && slot >= low_ && slot < registered_;
}

bool SlotRegistration::wants_sync(const ExpertCache& cache) const noexcept {
  if (given_up_) return false;
  if (registered_ > 0) return stale_;
  return cache.n_slots() > 0 && cache.slot_data(0) != nullptr && cache.slots_faulted_in();
}

void SlotRegistration::sync(io::IoBackend& backend, const ExpertCache& cache) {
  if (backend.outstanding() != 0 || given_up_) return;
  if (registered_ > 0 && !stale_) return;
  if (registered_ > 0) {
    (void)backend.register_buffers({});  // cannot fail with nothing outstanding
    registered_ = 0;
    stale_ = false;
  }
  const int32_t n = cache.n_slots();
  const size_t slot_bytes = cache.slot_bytes();
  if (n <= 0 || slot_bytes == 0 || slot_bytes > kMaxRegionBytes || cache.slot_data(0) == nullptr ||
      !cache.slots_faulted_in())
    return;
  const int32_t per = static_cast<int32_t>(kMaxRegionBytes / slot_bytes);
  std::vector<std::span<std::byte>> regions;
  for (int32_t a = 0; a < n; a += per) {
    const int32_t b = std::min(n, a + per);
    regions.emplace_back(cache.slot_data(a), static_cast<size_t>(b - a) * slot_bytes);
  }
  if (!backend.register_buffers(regions).ok()) {
    given_up_ = true;
    return;
  }
  registered_ = n;
  low_ = n;
}

}  // namespace les::sched
