// PreadBackend: the portable IoBackend, a pool of worker threads each doing
// blocking pread(2) calls. The fallback where io_uring is missing: Android
// apps (seccomp blocks io_uring), old kernels, containers that deny it, and
// any POSIX system.
//
// queue_depth worker threads (capped at 64) take requests FIFO from one queue;
// each thread loops pread until its request is complete: a short read advances
// and reads again, EINTR retries at once, EAGAIN puts the request back at the
// end of the queue, other errors complete it with an io Status. cancel_all
// drops queued requests and stops running ones between two pread calls.
//
// Thread-safety: see io_backend.h (one submitter thread; workers are internal).
#pragma once

#include <memory>

#include "io/io_backend.h"

namespace les::io {

// Starts the worker threads. Errors: invalid_argument (queue_depth 0 or >
// 4096, direct_alignment not a power of two), internal (thread creation failed).
Result<std::unique_ptr<IoBackend>> create_pread_backend(const IoOptions& options);

}  // namespace les::io
