// PrefetchGate (prefetch_gate.h): a rank is read ahead while at least the
// threshold of its uncached candidates were used, measured; it comes back when
// they are used again; out-of-range ranks never pass; gate 0 passes all; the
// scheduler refuses a gate outside [0, 1].
#include <catch2/catch.hpp>

#include <cmath>

#include "sched/context_factory.h"
#include "sched/prefetch_gate.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::sched;

TEST_CASE("PrefetchGate: ranks start admitted, close when unused, reopen when used", "[sched]") {
  PrefetchGate g(4, kDefaultPrefetchGate);
  for (int32_t r = 0; r < 4; ++r) CHECK(g.admits(r));
  CHECK_FALSE(g.admits(-1));
  CHECK_FALSE(g.admits(4));
  g.observe(7, false);  // ignored
  g.observe(-2, true);
  // From 1, n unused outcomes leave (1 - 1/W)^n: below 1/2 after ceil(ln 2 / -ln(1 - 1/W)) of them.
  const int n_close = static_cast<int>(std::ceil(std::log(0.5) / std::log(1.0 - 1.0 / kPrefetchGateWindow)));
  for (int i = 0; i < n_close - 1; ++i) g.observe(3, false);
  CHECK(g.admits(3));
  g.observe(3, false);
  CHECK_FALSE(g.admits(3));
  CHECK(g.used_fraction(3) < 0.5);
  CHECK(g.admits(2));  // other ranks are untouched
  // Used as often as not keeps it at the threshold's side it is on; used every time reopens it.
  int reopen = 0;
  while (!g.admits(3) && reopen < 1000) {
    g.observe(3, true);
    ++reopen;
  }
  CHECK(g.admits(3));
  CHECK(reopen <= n_close);
}

TEST_CASE("PrefetchGate: threshold 0 admits every rank; thresholds clamp to [0, 1]", "[sched]") {
  PrefetchGate open(2, 0.0);
  for (int i = 0; i < 1000; ++i) open.observe(1, false);
  CHECK(open.admits(1));
  CHECK(open.used_fraction(1) < 1e-6);
  PrefetchGate strict(2, 7.0);
  CHECK(strict.threshold() == 1.0);
  CHECK(strict.admits(0));  // starts at 1
  strict.observe(0, false);
  CHECK_FALSE(strict.admits(0));
}

TEST_CASE("streaming: a prefetch gate outside [0, 1] is refused, naming it", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  ModelParams mp;
  mp.n_threads = 1;
  auto m = Model::load(path, mp);
  REQUIRE(m.ok());
  StreamingParams sp;
  auto min = min_expert_budget_bytes(**m, {}, sp);
  REQUIRE(min.ok());
  sp.budget_bytes = *min * 2;
  for (double bad : {-0.1, 1.5, std::nan("")}) {
    sp.prefetch_gate = bad;
    auto ctx = create_context(**m, {}, sp);
    CHECK(ctx.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(ctx.status().message(), Catch::Contains("prefetch gate"));
  }
  sp.prefetch_gate = 0.0;
  CHECK(create_context(**m, {}, sp).ok());
}
