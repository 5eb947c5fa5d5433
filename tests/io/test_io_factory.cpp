// create_io_backend: names round-trip, automatic always yields a working
// backend, kinds this platform lacks are `unsupported` (never a crash), and
// bad options are invalid_argument for every kind.
#include <catch2/catch.hpp>

#include "io/io_factory.h"

using namespace les::io;
using les::StatusCode;

TEST_CASE("backend kind names round-trip; unknown names are rejected", "[io]") {
  for (IoBackendKind k : {IoBackendKind::automatic, IoBackendKind::io_uring, IoBackendKind::pread,
                          IoBackendKind::dispatch_io}) {
    auto parsed = parse_io_backend_kind(io_backend_kind_name(k));
    REQUIRE(parsed.ok());
    CHECK(*parsed == k);
  }
  auto bad = parse_io_backend_kind("aio");
  CHECK(bad.status().code() == StatusCode::invalid_argument);
  CHECK_THAT(bad.status().message(), Catch::Contains("'aio'"));
}

TEST_CASE("automatic picks io_uring when it works, else pread", "[io]") {
  auto a = create_io_backend(IoBackendKind::automatic, IoOptions{});
  REQUIRE(a.ok());
  auto uring = create_io_backend(IoBackendKind::io_uring, IoOptions{});
  if (uring.ok()) {
    CHECK((*a)->name() == "io_uring");
  } else {
    CHECK(uring.status().code() == StatusCode::unsupported);
    CHECK((*a)->name() == "pread");
  }
}

TEST_CASE("platform-specific kinds are unsupported elsewhere", "[io]") {
#if !defined(LES_HAVE_DISPATCH_IO)
  auto d = create_io_backend(IoBackendKind::dispatch_io, IoOptions{});
  CHECK(d.status().code() == StatusCode::unsupported);
  CHECK_THAT(d.status().message(), Catch::Contains("LES_IO_DISPATCH"));
#else
  auto d = create_io_backend(IoBackendKind::dispatch_io, IoOptions{});
  REQUIRE(d.ok());
  CHECK((*d)->name() == "dispatch_io");
#endif
#if !defined(LES_HAVE_LIBURING)
  CHECK(create_io_backend(IoBackendKind::io_uring, IoOptions{}).status().code() == StatusCode::unsupported);
#endif
}

TEST_CASE("bad options are rejected by every backend", "[io]") {
  for (IoBackendKind k : {IoBackendKind::automatic, IoBackendKind::io_uring, IoBackendKind::pread,
                          IoBackendKind::dispatch_io}) {
    IoOptions zero_depth;
    zero_depth.queue_depth = 0;
    auto r = create_io_backend(k, zero_depth);
    if (r.status().code() == StatusCode::unsupported) continue;  // not built, or refused before options matter
    CHECK(r.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(r.status().message(), Catch::Contains("queue_depth"));
    IoOptions odd_alignment;
    odd_alignment.direct_alignment = 3000;
    CHECK(create_io_backend(k, odd_alignment).status().code() == StatusCode::invalid_argument);
  }
}
