// Prefill reads each needed expert at most once per chunk: with lookahead off,
// the experts read during a cold prefill equal the distinct (layer, expert)
// pairs the routers chose, even at the minimum budget (4 slots for up to 32
// experts per layer), and the logits equal the resident run's.
#include <catch2/catch.hpp>

#include <set>

#include "sched/context_factory.h"
#include "sched_test_util.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::sched;

TEST_CASE("prefill reads each routed expert of a chunk once", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  auto m = Model::load(path, {});
  REQUIRE(m.ok());
  for (int32_t n_batch : {64, 16}) {
    DYNAMIC_SECTION("n_batch " << n_batch) {
      StreamingParams sp;
      sp.prefetch_c = 0;
      sp.io = io::IoBackendKind::pread;
      ContextParams cp;
      cp.n_batch = n_batch;
      auto min = min_expert_budget_bytes(**m, cp, sp);
      REQUIRE(min.ok());
      sp.budget_bytes = *min;
      auto ctx = create_context(**m, cp, sp);
      REQUIRE(ctx.ok());
      const StreamingExpertSource* src = streaming_source(**ctx);
      REQUIRE(src != nullptr);
      uint64_t distinct_per_chunk = 0;
      std::set<std::pair<int32_t, int32_t>> seen;
      int32_t last_layer = -1;
      (*ctx)->set_router_observer([&](const RouterObservation& o) {
        if (o.layer <= last_layer) {  // a new chunk starts
          distinct_per_chunk += seen.size();
          seen.clear();
        }
        last_layer = o.layer;
        for (int32_t i = 0; i < o.n_tokens * o.n_expert_used; ++i) seen.insert({o.layer, o.selected[i]});
      });
      const std::vector<int32_t> prompt = test::test_prompt((*m)->hparams().n_vocab, 64);
      REQUIRE((*ctx)->decode(prompt).ok());
      distinct_per_chunk += seen.size();
      const SchedStats& s = src->stats();
      INFO("distinct (layer, expert) per chunk summed " << distinct_per_chunk << ", demand reads " << s.demand_experts);
      CHECK(s.prefetch_experts == 0);
      CHECK(s.misses() + s.hits() + s.inflight_hits() == distinct_per_chunk);
      CHECK(s.demand_experts == s.misses());
      CHECK(s.demand_experts <= distinct_per_chunk);
      if (n_batch == 64) CHECK(s.demand_experts == distinct_per_chunk);  // cold cache, one chunk
    }
  }
}
