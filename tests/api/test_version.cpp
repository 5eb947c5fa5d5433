#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "les/les.h"

TEST_CASE("les_version matches the header macros", "[api]") {
  const std::string expect = std::to_string(LES_VERSION_MAJOR) + "." + std::to_string(LES_VERSION_MINOR) + "." +
                             std::to_string(LES_VERSION_PATCH);
  CHECK(expect == les_version());
  CHECK(LES_VERSION_NUMERIC == LES_VERSION_MAJOR * 10000 + LES_VERSION_MINOR * 100 + LES_VERSION_PATCH);
}

TEST_CASE("les_version_at_least: equal, older and newer", "[api]") {
  CHECK(les_version_at_least(LES_VERSION_MAJOR, LES_VERSION_MINOR));       // equal
  CHECK(les_version_at_least(LES_VERSION_MAJOR, 0));                       // older minor
  CHECK(les_version_at_least(LES_VERSION_MAJOR - 1, 99));                  // older major
  CHECK_FALSE(les_version_at_least(LES_VERSION_MAJOR, LES_VERSION_MINOR + 1));  // newer minor
  CHECK_FALSE(les_version_at_least(LES_VERSION_MAJOR + 1, 0));             // newer major
}

TEST_CASE("les_status_name names every code", "[api]") {
  CHECK(std::strcmp(les_status_name(LES_OK), "ok") == 0);
  CHECK(std::strcmp(les_status_name(LES_ERR_FORMAT), "format error") == 0);
  CHECK(std::strcmp(les_status_name(static_cast<les_status>(12345)), "unknown status") == 0);
}
