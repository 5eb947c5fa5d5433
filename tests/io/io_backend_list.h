// The backends the io tests run against, and how they are created: a backend
// the kernel or build refuses is reported skipped (mark_skipped, exit 77),
// never silently passed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/io_backend.h"
#include "io/io_factory.h"
#include "support/fixtures.h"

namespace les::test {

inline std::vector<std::string> io_backend_kinds() { return {"pread", "io_uring"}; }

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
