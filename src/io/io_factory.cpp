#include "io/io_factory.h"

#include "io/io_uring_backend.h"
#include "io/pread_backend.h"
#include "io/dispatch_io_backend.h"

namespace les::io {

const char* io_backend_kind_name(IoBackendKind kind) noexcept {
  switch (kind) {
    case IoBackendKind::automatic: return "automatic";
    case IoBackendKind::io_uring: return "io_uring";
    case IoBackendKind::pread: return "pread";
    case IoBackendKind::dispatch_io: return "dispatch_io";
  }
  return "unknown";
}

Result<IoBackendKind> parse_io_backend_kind(const std::string& name) {
  for (IoBackendKind k : {IoBackendKind::automatic, IoBackendKind::io_uring, IoBackendKind::pread,
                          IoBackendKind::dispatch_io}) {
    if (name == io_backend_kind_name(k)) return k;
  }
  return invalid_argument_error("unknown I/O backend '" + name +
                                "' (expected automatic, io_uring, pread or dispatch_io)");
}

Result<std::unique_ptr<IoBackend>> create_io_backend(IoBackendKind kind, const IoOptions& options) {
  switch (kind) {
    case IoBackendKind::pread: return create_pread_backend(options);
    case IoBackendKind::io_uring: return create_io_uring_backend(options);
    case IoBackendKind::dispatch_io:
#if defined(LES_HAVE_DISPATCH_IO)
      return create_dispatch_io_backend(options);
#else
      return unsupported_error(
          "dispatch_io backend: not in this build (Apple systems, or Linux with the Swift toolchain's libdispatch; "
          "CMake option LES_IO_DISPATCH)");
#endif
    case IoBackendKind::automatic: {
      auto uring = create_io_uring_backend(options);
      if (uring.ok() || uring.status().code() != StatusCode::unsupported) return uring;
      return create_pread_backend(options);
    }
  }
  return invalid_argument_error("create_io_backend: unknown backend kind " +
                                std::to_string(static_cast<int>(kind)));
}

}  // namespace les::io
