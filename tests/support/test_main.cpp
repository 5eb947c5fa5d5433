// Catch2 v2 main for every LES test executable: exits 77 (CTest skip) when a
// test marked itself skipped and nothing failed, and removes the temp dir.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <unistd.h>

#include "support/fixtures.h"

int main(int argc, char* argv[]) {
  const int failed = Catch::Session().run(argc, argv);
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                  ("les-test-" + std::to_string(::getpid())),
                              ec);
  if (failed != 0) return failed;
  return les::test::any_skipped() ? 77 : 0;
}
