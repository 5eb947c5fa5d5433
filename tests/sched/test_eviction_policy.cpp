// Eviction policies (eviction_policy.h) on their own and inside an ExpertCache
// without memory: parameter refusal, LRU / aged-LFU order, next_use's layer
// distance and per-layer frequency, lookahead hints, per-layer entry sizes.
#include <catch2/catch.hpp>

#include "sched/eviction_policy.h"
#include "sched/expert_cache.h"

using namespace les;
using namespace les::sched;

namespace {

EvictorParams evictor_params(int32_t n_layer, int32_t n_expert) {
  EvictorParams p;
  p.n_layer = n_layer;
  p.n_expert = n_expert;
  p.n_expert_used = 2;
  p.entry_bytes.assign(static_cast<size_t>(n_layer), 100);
  return p;
}

// Uses `key` once (as the cache does: not evictable while used), then makes it evictable.
void use(Evictor& e, int32_t key) {
  e.on_use(key);
  e.add(key);
}

}  // namespace

TEST_CASE("make_evictor refuses bad parameters, naming them", "[sched]") {
  EvictorParams p = evictor_params(2, 4);
  p.entry_bytes.pop_back();
  auto a = make_evictor(EvictionPolicy::next_use, p);
  REQUIRE_FALSE(a.ok());
  CHECK_THAT(a.status().message(), Catch::Contains("1 entry sizes for 2 layers"));
  p = evictor_params(0, 4);
  CHECK(make_evictor(EvictionPolicy::lru, p).status().code() == StatusCode::invalid_argument);
  p = evictor_params(2, 4);
  p.next_use_half_life = 0;
  CHECK_FALSE(make_evictor(EvictionPolicy::next_use, p).ok());
  p = evictor_params(2, 4);
  p.entry_bytes[1] = 0;
  CHECK_FALSE(make_evictor(EvictionPolicy::lfu_aged, p).ok());
  CHECK(parse_eviction_policy("next_use").ok());
  auto bad = parse_eviction_policy("mru");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("next_use, lfu_aged, lru"));
  for (EvictionPolicy pol : all_eviction_policies()) CHECK(*parse_eviction_policy(eviction_policy_name(pol)) == pol);
}

TEST_CASE("Every evictor: nothing evictable gives -1, removed keys are never chosen", "[sched]") {
  for (EvictionPolicy pol : all_eviction_policies()) {
    auto e = make_evictor(pol, evictor_params(2, 4));
    REQUIRE(e.ok());
    Evictor& ev = **e;
    CHECK(ev.victim() == -1);
    for (int32_t k = 0; k < 8; ++k) use(ev, k);
    for (int32_t k = 0; k < 8; ++k) {
      const int32_t v = ev.victim();
      REQUIRE(v >= 0);
      ev.remove(v);
    }
    CHECK(ev.victim() == -1);
  }
}

TEST_CASE("next_use evicts the layer just served first: it needs its experts one token later", "[sched]") {
  // Equal frequencies everywhere: only the layer order decides. After layer 1
  // ran (cur = 1), layer 2 runs next (d = 1) and layer 1 is furthest (d = 3).
  auto e = make_evictor(EvictionPolicy::next_use, evictor_params(3, 4));
  REQUIRE(e.ok());
  Evictor& ev = **e;
  ev.advance_tokens(1);
  for (int32_t l = 0; l < 3; ++l) {
    ev.begin_layer(l);
    use(ev, l * 4 + 0);
  }
  ev.advance_tokens(1);
  ev.begin_layer(0);
  ev.begin_layer(1);
  CHECK(ev.victim() == 4);  // layer 1's entry (d = 3); LRU would take layer 0's (needed in 2 steps)
  ev.begin_layer(2);
  CHECK(ev.victim() == 8);  // now layer 2 was just served
}

TEST_CASE("next_use keeps the frequent expert of a layer and forgets with age", "[sched]") {
  auto e = make_evictor(EvictionPolicy::next_use, evictor_params(1, 4));
  REQUIRE(e.ok());
  Evictor& ev = **e;
  ev.advance_tokens(1);
  ev.on_use(0);
  ev.on_use(0);
  ev.on_use(0);
  ev.add(0);
  use(ev, 1);  // newer, used once
  CHECK(ev.victim() == 1);
  for (int i = 0; i < 100; ++i) ev.advance_tokens(1);  // 12 half-lives: both counts near 0
  ev.remove(1);
  use(ev, 1);
  CHECK(ev.victim() == 0);
}

TEST_CASE("next_use spares the next layer's experts the lookahead names", "[sched]") {
  auto e = make_evictor(EvictionPolicy::next_use, evictor_params(2, 4));
  REQUIRE(e.ok());
  Evictor& ev = **e;
  ev.advance_tokens(1);
  ev.begin_layer(0);
  use(ev, 4 + 0);  // layer 1, expert 0 (used once)
  use(ev, 4 + 1);  // layer 1, expert 1 (used twice)
  ev.remove(5);
  use(ev, 5);
  ev.advance_tokens(1);
  ev.begin_layer(0);
  CHECK(ev.victim() == 4);
  const int32_t named[] = {0};
  ev.hint(1, named);
  CHECK(ev.victim() == 5);
  ev.begin_layer(1);  // the named layer runs: the hint is spent
  CHECK(ev.victim() == 4);
}

TEST_CASE("ExpertCache without memory counts each layer's entry bytes", "[sched]") {
  ExpertCacheParams p;
  p.n_layer = 2;
  p.n_expert = 4;
  p.slot_bytes = 300;
  p.alignment = 1;
  p.min_slots = 1;
  p.backed = false;
  p.entry_bytes = {300, 100};
  p.budget_bytes = 600;
  p.policy = EvictionPolicy::lru;
  auto c = ExpertCache::create(p);
  REQUIRE(c.ok());
  ExpertCache& cache = **c;
  CHECK(cache.slot_data(0) == nullptr);
  for (int32_t e = 0; e < 2; ++e) {  // 2 x 100 bytes of layer 1
    auto s = cache.claim(1, e, false);
    REQUIRE(s);
    cache.fill_done(*s, true);
  }
  auto big = cache.claim(0, 0, false);  // 300 bytes of layer 0
  REQUIRE(big);
  cache.fill_done(*big, true);
  CHECK(cache.used_bytes() == 500);
  {
    ExpertHandle held = cache.pin(*big);
    auto more = cache.claim(0, 1, false);  // 300 more: both 100-byte entries must go
    REQUIRE(more);
    cache.fill_done(*more, true);
    CHECK(cache.lookup(1, 0) < 0);
    CHECK(cache.lookup(1, 1) < 0);
    CHECK(cache.lookup(0, 0) == *big);
    CHECK(cache.used_bytes() == 600);
    CHECK(cache.counters().evictions == 2);
    CHECK(cache.claim(1, 2, false).has_value());  // 100 more: evicts (0, 1), the unpinned one
    CHECK(cache.lookup(0, 1) < 0);
  }
  REQUIRE(cache.set_budget(350).ok());  // shrinking evicts until the entries fit
  CHECK(cache.used_bytes() <= 350);
  CHECK(cache.capacity_bytes() == 350);

  p.backed = true;
  auto refused = ExpertCache::create(p);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("backed = false"));
  p.backed = false;
  p.entry_bytes = {300, 400};
  CHECK_FALSE(ExpertCache::create(p).ok());  // an entry larger than a slot
}
