// create_io_backend: picks and builds an IoBackend at run time. Callers never
// #ifdef on the platform: a backend that this build or this kernel lacks is an
// `unsupported` Status, and `automatic` falls back on its own.
//
// Thread-safety: create_io_backend is thread-safe (no shared state); the
// backend it returns follows io_backend.h.
#pragma once

#include <memory>

#include "io/io_backend.h"

namespace les::io {

enum class IoBackendKind {
  automatic,    // io_uring if this build has it and the kernel allows it, else pread
  io_uring,     // Linux io_uring via liburing (unsupported if not built or refused)
  pread,        // POSIX pread thread pool (everywhere)
  dispatch_io,  // libdispatch's dispatch_io: Apple, and Linux builds with LES_IO_DISPATCH (unsupported elsewhere)
};

// "automatic", "io_uring", "pread", "dispatch_io".
const char* io_backend_kind_name(IoBackendKind kind) noexcept;

// Parses a name as printed by io_backend_kind_name. Errors: invalid_argument
// listing the accepted names.
Result<IoBackendKind> parse_io_backend_kind(const std::string& name);

// Builds a backend. Errors: unsupported (the kind is not compiled in or the
// kernel refused it; never for automatic), invalid_argument (options), io /
// internal from the backend.
Result<std::unique_ptr<IoBackend>> create_io_backend(IoBackendKind kind, const IoOptions& options);

}  // namespace les::io
