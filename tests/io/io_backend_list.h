// The backends the io, sched and api tests run against, and how they are
// created: a backend the kernel or build refuses is reported skipped
// (mark_skipped, exit 77), never silently passed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/io_backend.h"
#include "io/io_factory.h"
#include "support/fixtures.h"

namespace les::test {

// pread and io_uring (the latter skipped where the kernel refuses it), and
// dispatch_io where this build has it (LES_IO_DISPATCH: Apple, or Linux with the
// Swift toolchain's libdispatch).
inline std::vector<les::io::IoBackendKind> io_backend_kind_list() {
  std::vector<les::io::IoBackendKind> kinds{les::io::IoBackendKind::pread, les::io::IoBackendKind::io_uring};
#if defined(LES_HAVE_DISPATCH_IO)
  kinds.push_back(les::io::IoBackendKind::dispatch_io);
#endif
  return kinds;
}

// The same as names (io_backend_kind_name).
inline std::vector<std::string> io_backend_kinds() {
  std::vector<std::string> names;
  for (les::io::IoBackendKind k : io_backend_kind_list()) names.emplace_back(les::io::io_backend_kind_name(k));
  return names;
}

// The backend, or nullptr after mark_skipped when this machine cannot run it.
// Any other failure fails the test.
inline std::unique_ptr<les::io::IoBackend> make_io_backend(const std::string& kind,
                                                           const les::io::IoOptions& options) {
  auto kind_r = les::io::parse_io_backend_kind(kind);
  REQUIRE(kind_r.ok());
  les::Result<std::unique_ptr<les::io::IoBackend>> r = les::io::create_io_backend(*kind_r, options);
  if (!r.ok()) {
    if (r.status().code() == les::StatusCode::unsupported) {
      mark_skipped(kind + " backend: " + r.status().to_string());
      return nullptr;
    }
    FAIL("creating the " << kind << " backend: " << r.status().to_string());
  }
  return std::move(r).value();
}

}  // namespace les::test
