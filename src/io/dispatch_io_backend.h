// DispatchIoBackend: Apple's libdispatch dispatch_io (macOS, iOS), compiled
// only when __APPLE__ is defined (src/io/dispatch_io_backend.cpp). See the
// .cpp header for what it does and how far it was tested.
//
// Thread-safety: see io_backend.h (one submitter thread, which also reaps).
#pragma once

#include <memory>

#include "io/io_backend.h"

namespace les::io {

#if defined(__APPLE__)
// Errors: invalid_argument (options), internal (dispatch queue creation failed).
Result<std::unique_ptr<IoBackend>> create_dispatch_io_backend(const IoOptions& options);
#endif

}  // namespace les::io
