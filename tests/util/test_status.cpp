#include <catch2/catch.hpp>

#include "util/status.h"

namespace {
les::Result<int> parse_positive(int v) {
  if (v <= 0) return les::invalid_argument_error("value " + std::to_string(v) + " is not positive");
  return v;
}
les::Result<int> doubled(int v) {
  LES_ASSIGN_OR_RETURN(int x, parse_positive(v));
  return 2 * x;
}
}  // namespace

TEST_CASE("Result carries a value or an error", "[status]") {
  auto ok = doubled(4);
  REQUIRE(ok.ok());
  CHECK(*ok == 8);
  auto bad = doubled(-1);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == les::StatusCode::invalid_argument);
  CHECK(bad.status().message() == "value -1 is not positive");
  CHECK(bad.status().with_context("arg x").to_string() == "invalid argument: arg x: value -1 is not positive");
}

TEST_CASE("Result from an OK status is an internal error", "[status]") {
  les::Result<int> r{les::Status()};
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == les::StatusCode::internal);
}
