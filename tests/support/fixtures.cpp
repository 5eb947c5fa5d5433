#include "support/fixtures.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include <catch2/catch.hpp>
#include <unistd.h>

namespace les::test {
namespace {
std::atomic<bool> g_skipped{false};  // test-harness state, one per test process
}

std::string fixtures_root() {
  if (const char* env = std::getenv("LES_FIXTURES_DIR"); env && *env) return env;
  return LES_FIXTURES_DIR;
}

bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci && (std::string(ci) == "true" || std::string(ci) == "1");
}

void mark_skipped(const std::string& reason) {
  g_skipped = true;
  std::fprintf(stderr, "SKIPPED: %s\n", reason.c_str());
}

bool any_skipped() { return g_skipped; }

std::string fixture_path(const std::string& relative) {
  std::filesystem::path p = std::filesystem::path(fixtures_root()) / relative;
  std::error_code ec;
  if (std::filesystem::exists(p, ec)) return std::filesystem::absolute(p, ec).string();
  const std::string msg = "fixture missing: " + p.string() + " (set -DLES_FIXTURES_DIR)";
  if (running_in_ci()) {
    FAIL(msg + " [CI=true: missing fixtures are a failure]");
    return {};
  }
  mark_skipped(msg);
  return {};
}

std::string temp_dir() {
  static std::once_flag once;
  static std::string dir;
  std::call_once(once, [] {
    auto base = std::filesystem::temp_directory_path() / ("les-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(base);
    dir = base.string();
  });
  return dir;
}

}  // namespace les::test
