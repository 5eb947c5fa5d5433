// IoUringBackend: Linux io_uring through liburing (compiled when the build
// defines LES_HAVE_LIBURING, i.e. pkg-config found liburing).
//
// - One ring with `queue_depth` SQ entries; at most queue_depth reads are in
//   the kernel, the rest wait FIFO in the backend and are issued by submit and
//   reap as CQEs come back (reap drives progress: no internal thread).
// - O_DIRECT descriptors (probed per file by FileTable) for requests whose
//   offset, destination and length are 4 KiB aligned; unaligned requests and
//   unaligned tails go to the buffered descriptor.
// - register_buffers registers caller memory (the expert cache's slots)
//   as fixed buffers; a read that lies inside one uses IORING_OP_READ_FIXED.
// - A CQE with fewer bytes than asked is advanced and resubmitted at the
//   front of the queue; -EAGAIN / -EINTR are requeued at the back.
// - cancel_all issues IORING_OP_ASYNC_CANCEL for every read in the kernel and
//   waits for all their CQEs.
//
// io_uring being unavailable (ENOSYS on old kernels or without
// CONFIG_IO_URING, EPERM under seccomp or kernel.io_uring_disabled, no
// IORING_OP_READ before Linux 5.6) is an `unsupported` Status from create,
// and callers (create_io_backend automatic) fall back to pread.
//
// Thread-safety: see io_backend.h (one submitter thread, which also reaps).
#pragma once

#include <memory>

#include "io/io_backend.h"

namespace les::io {

// Errors: unsupported (io_uring refused or too old, message names errno),
// invalid_argument (options).
Result<std::unique_ptr<IoBackend>> create_io_uring_backend(const IoOptions& options);

}  // namespace les::io
