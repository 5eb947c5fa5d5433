// SlotRegistration: keeps the expert cache's slot memory registered with the
// I/O backend (io_uring fixed buffers), so a read into a slot does not pin
// and release its pages in the kernel every time (get_user_pages, bio page
// dirtying: a few percent of a streamed decode's CPU samples).
//
// The registration covers slots [0, registered()) as chunks of whole slots of
// at most 1 GiB each (io_uring's limit per buffer). It is made once the
// cache's slots are faulted in (registering earlier would fault them in on
// the scheduler thread) and only while no read is outstanding (the backend's
// rule). A budget change makes it stale: slots past the new count are
// discarded (MADV_DONTNEED) while the kernel still holds their old pages, so
// a fixed read into such a slot after the budget grows back would land in a
// page the process no longer maps. The owner therefore drains the reads and
// drops the registration before any read into a slot at or past the lowest
// count seen since registering (needs_drain), and re-registers later.
//
// A backend without registration (pread, dispatch_io) accepts and ignores it;
// a kernel that refuses (RLIMIT_MEMLOCK for an unprivileged process, old
// kernels) makes it give up for good: reads stay unregistered, as before.
//
// Thread-safety: none of its own; the streaming source calls it with its
// mutex held, and calls the backend only from the scheduler thread.
#pragma once

#include <cstdint>

#include "io/io_backend.h"
#include "sched/expert_cache.h"

namespace les::sched {

class SlotRegistration {
 public:
  // The budget changed to `n_slots` slots (any thread, mutex held): the
  // registration no longer matches the cache once n_slots differs.
  void note_budget_change(int32_t n_slots) noexcept;
  // True when a read into `slot` must wait until every outstanding read is
  // reaped and the registration dropped (sync() with nothing outstanding).
  bool needs_drain(int32_t slot) const noexcept;
  // With no read outstanding: drops a stale registration, then registers
  // slots [0, n_slots) once they are faulted in. Does nothing while reads are
  // outstanding. Never fails: a refusal leaves reads unregistered.
  void sync(io::IoBackend& backend, const ExpertCache& cache);
  // True when sync() would change something once no read is outstanding: a
  // stale registration to drop, or faulted-in slots not registered yet.
  bool wants_sync(const ExpertCache& cache) const noexcept;
  // Slots currently registered (0: none).
  int32_t registered() const noexcept { return registered_; }

 private:
  int32_t registered_ = 0;
  int32_t low_ = 0;        // lowest slot count since registering: slots below it kept their pages
  bool stale_ = false;     // the budget changed since registering
  bool given_up_ = false;  // the backend refused once: never try again
};

}  // namespace les::sched
