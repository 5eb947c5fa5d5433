// DispatchIoBackend: an IoBackend over libdispatch's dispatch_io, Apple's
// asynchronous file I/O (macOS, iOS), also built on Linux against the Swift
// toolchain's libdispatch. Compiled when the build defines
// LES_HAVE_DISPATCH_IO (CMake option LES_IO_DISPATCH, cmake/LesDispatchIo.cmake);
// elsewhere create_io_backend(IoBackendKind::dispatch_io) answers unsupported.
// See the .cpp header for how it reads and what differs between Apple and Linux.
//
// Thread-safety: see io_backend.h (one submitter thread, which also reaps).
#pragma once

#include <memory>

#include "io/io_backend.h"

namespace les::io {

#if defined(LES_HAVE_DISPATCH_IO)
// Errors: invalid_argument (options), internal (dispatch queue or group creation failed).
Result<std::unique_ptr<IoBackend>> create_dispatch_io_backend(const IoOptions& options);
#endif

}  // namespace les::io
