// Catch2 v2 main for every LES test executable: exits 77 (CTest skip) when a
// test marked itself skipped and nothing failed, and removes the temp dir.
//
// Kernel-tier variants (tests/CMakeLists.txt, label "tier"): CTest runs some
// tests a second time with LES_KERNEL_TIER=T and LES_TEST_TIER_VARIANT=T. Such
// a run is skipped (77) when this CPU cannot run tier T, or when T is the tier
// the plain run of the same test already uses (the best one here), so each
// tier the machine can run is exercised once.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "kernels/kernels.h"
#include "support/fixtures.h"

namespace {

// For a tier-variant run: "" to run, else why it is skipped.
std::string tier_variant_skip_reason(const char* variant) {
  using les::kernels::KernelTier;
  int requested = -1, best = 0;
  for (int i = 0; i < les::kernels::kKernelTierCount; ++i) {
    if (les::kernels::kernel_table(static_cast<KernelTier>(i)) != nullptr) best = i;
    if (std::strcmp(variant, les::kernels::kernel_tier_name(static_cast<KernelTier>(i))) == 0) requested = i;
  }
  if (requested < 0) return std::string("LES_TEST_TIER_VARIANT=") + variant + " is not a kernel tier";
  if (les::kernels::kernel_table(static_cast<KernelTier>(requested)) == nullptr)
    return std::string("this CPU cannot run kernel tier ") + variant;
  if (requested == best) return std::string("the plain run of this test already uses tier ") + variant;
  return "";
}

}  // namespace

int main(int argc, char* argv[]) {
  if (const char* variant = std::getenv("LES_TEST_TIER_VARIANT"); variant != nullptr && *variant != '\0') {
    const std::string reason = tier_variant_skip_reason(variant);
    if (!reason.empty()) {
      std::fprintf(stderr, "skipped: %s\n", reason.c_str());
      return 77;
    }
    std::fprintf(stderr, "kernel tier variant: running with tier %s (LES_KERNEL_TIER)\n",
                 les::kernels::kernel_tier_name(les::kernels::best_kernel_tier()));
  }
  const int failed = Catch::Session().run(argc, argv);
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                  ("les-test-" + std::to_string(::getpid())),
                              ec);
  if (failed != 0) return failed;
  return les::test::any_skipped() ? 77 : 0;
}
