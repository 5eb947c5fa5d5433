// StreamingExpertSource's upkeep of the slots' fixed-buffer registration
// (SlotRegistration): when to drain the reads in flight so the registration
// can be made, dropped or renewed; see streaming_expert_source.h.
#include <string>
#include <vector>

#include "sched/streaming_expert_source.h"

namespace les::sched {

int32_t StreamingExpertSource::registered_slots() const {
  Lock lk(mu_);
  return registration_.registered();
}

void StreamingExpertSource::drain_reads() {
  const auto t0 = Clock::now();
  std::vector<io::ReadCompletion> got;
  while (backend_->outstanding() > 0) {
    got.clear();
    if (!backend_->reap(1, io::kWaitForever, got).ok()) break;  // the next reap reports it
    for (const io::ReadCompletion& c : got) on_complete(c);
  }
  if (in_batch_) batch_.io_wait_s += std::chrono::duration<double>(Clock::now() - t0).count();
}

Status StreamingExpertSource::registration_before_read(int32_t slot) {
  if (registration_.needs_drain(slot)) {
    drain_reads();
    registration_.sync(*backend_, *cache_);
    if (registration_.needs_drain(slot))
      return internal_error("streaming: reads into slot " + std::to_string(slot) +
                            " wait for a stale fixed-buffer registration that cannot be dropped (reads outstanding)");
    return Status();
  }
  registration_.sync(*backend_, *cache_);  // nothing outstanding: free to (re)register
  return Status();
}

void StreamingExpertSource::renew_registration() {
  if (!registration_.wants_sync(*cache_)) return;
  drain_reads();
  registration_.sync(*backend_, *cache_);
}

}  // namespace les::sched
