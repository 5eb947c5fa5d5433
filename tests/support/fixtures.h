// Access to ../shared/fixtures from tests.
//
// `fixture_path("trained/tiny-qwen3moe-F16.gguf")` returns the absolute path,
// or an empty string after marking the test skipped when the fixtures are
// absent (locally). Under CI=true a missing fixture is a test failure instead.
// A test executable that skipped anything and failed nothing exits 77, which
// CTest reports as "Skipped" (SKIP_RETURN_CODE).
#pragma once

#include <string>

namespace les::test {

// Root of the fixtures (the LES_FIXTURES_DIR cache variable; env LES_FIXTURES_DIR overrides).
std::string fixtures_root();

// Absolute path of a file under the fixtures root, or "" if it does not exist
// (after marking the test skipped, or failing it under CI=true).
std::string fixture_path(const std::string& relative);

// Marks the current executable as having skipped something, with a reason
// printed to stderr.
void mark_skipped(const std::string& reason);

// True if the environment says we run in CI (CI=true or CI=1).
bool running_in_ci();

// Whether mark_skipped was called (used by test_main).
bool any_skipped();

// A fresh temporary directory for this process (created on first call).
std::string temp_dir();

}  // namespace les::test

// Use at the top of a TEST_CASE: `LES_REQUIRE_FIXTURE(path, "trained/x.gguf");`
// declares `path` and returns from the test case if it is missing.
#define LES_REQUIRE_FIXTURE(var, rel)                      \
  const std::string var = ::les::test::fixture_path(rel); \
  if (var.empty()) return
