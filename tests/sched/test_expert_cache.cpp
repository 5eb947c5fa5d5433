// ExpertCache: budget arithmetic and refusal, claim/fill/pin life cycle,
// move-only handles releasing exactly once, LRU and aged-LFU victims, and
// set_budget shrinking the cache at once.
#include <catch2/catch.hpp>

#include "sched/expert_cache.h"

using namespace les;
using namespace les::sched;

namespace {

ExpertCacheParams params(EvictionPolicy policy, int32_t slots) {
  ExpertCacheParams p;
  p.n_layer = 2;
  p.n_expert = 8;
  p.slot_bytes = 8192;
  p.min_slots = 2;
  p.reserved_bytes = 1000;
  p.budget_bytes = p.reserved_bytes + static_cast<size_t>(slots) * p.slot_bytes;
  p.policy = policy;
  return p;
}

int32_t fill(ExpertCache& c, int32_t layer, int32_t e) {
  auto s = c.claim(layer, e, false);
  REQUIRE(s.has_value());
  c.fill_done(*s, true);
  return *s;
}

}  // namespace

TEST_CASE("ExpertCache refuses a budget below the minimum and names it", "[sched]") {
  ExpertCacheParams p = params(EvictionPolicy::lru, 2);
  CHECK(ExpertCache::min_budget_bytes(p) == 1000 + 2 * 8192);
  p.budget_bytes = ExpertCache::min_budget_bytes(p) - 1;
  auto c = ExpertCache::create(p);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == StatusCode::invalid_argument);
  CHECK_THAT(c.status().message(), Catch::Contains(std::to_string(1000 + 2 * 8192)));
  p.budget_bytes += 1;
  auto ok = ExpertCache::create(p);
  REQUIRE(ok.ok());
  CHECK((*ok)->n_slots() == 2);
  Status st = (*ok)->set_budget(100);
  CHECK(st.code() == StatusCode::invalid_argument);
  CHECK_THAT(st.message(), Catch::Contains(std::to_string(1000 + 2 * 8192)));
  CHECK_THAT(st.message(), Catch::Contains("2 expert slots of 8192 bytes (one expert each"));
  CHECK((*ok)->n_slots() == 2);
}

TEST_CASE("ExpertCache handles pin exactly once and block eviction", "[sched]") {
  auto c = ExpertCache::create(params(EvictionPolicy::lru, 2));
  REQUIRE(c.ok());
  ExpertCache& cache = **c;
  const int32_t a = fill(cache, 0, 1);
  const int32_t b = fill(cache, 0, 2);
  CHECK(cache.lookup(0, 1) == a);
  CHECK(cache.lookup(1, 1) == -1);
  ExpertHandle ha = cache.pin(a);
  ExpertHandle hb = cache.pin(b);
  CHECK(cache.n_pinned() == 2);
  CHECK_FALSE(cache.claim(0, 3, false).has_value());  // everything pinned
  ExpertHandle moved = std::move(ha);
  CHECK(ha.empty());
  ha.release();  // no-op on a moved-from handle
  CHECK(cache.n_pinned() == 2);
  moved.release();
  moved.release();  // second release is a no-op
  CHECK(cache.n_pinned() == 1);
  auto s = cache.claim(0, 3, false);  // evicts the unpinned one
  REQUIRE(s.has_value());
  CHECK(*s == a);
  CHECK(cache.lookup(0, 1) == -1);
  CHECK(cache.state(*s) == SlotState::filling);
  cache.fill_done(*s, false);  // a failed read empties the slot
  CHECK(cache.lookup(0, 3) == -1);
  CHECK(cache.state(*s) == SlotState::empty);
  CHECK(cache.counters().evictions == 1);
}

TEST_CASE("ExpertCache LRU evicts the least recently used", "[sched]") {
  auto c = ExpertCache::create(params(EvictionPolicy::lru, 3));
  REQUIRE(c.ok());
  ExpertCache& cache = **c;
  const int32_t s1 = fill(cache, 0, 1);
  fill(cache, 0, 2);
  fill(cache, 0, 3);
  cache.pin(s1).release();  // expert 1 used again: 2 is now the oldest
  auto v = cache.claim(1, 0, false);
  REQUIRE(v.has_value());
  CHECK(cache.lookup(0, 2) == -1);
  CHECK(cache.lookup(0, 1) == s1);
}

TEST_CASE("ExpertCache: a pin that does not count a use, and a use credited later (verify passes)", "[sched]") {
  for (EvictionPolicy policy : all_eviction_policies()) {
    DYNAMIC_SECTION(eviction_policy_name(policy)) {
      auto c = ExpertCache::create(params(policy, 3));
      REQUIRE(c.ok());
      ExpertCache& cache = **c;
      const int32_t s1 = fill(cache, 0, 1);
      const int32_t s2 = fill(cache, 0, 2);
      fill(cache, 0, 3);
      for (int i = 0; i < 3; ++i) {  // 2 and 3 are used; 1 is only pinned without a use
        cache.advance_token();
        cache.pin(s1, /*count_use=*/false).release();
        cache.pin(s2).release();
        cache.pin(cache.lookup(0, 3)).release();
      }
      {
        auto v = cache.claim(1, 0, false);
        REQUIRE(v.has_value());
        CHECK(cache.lookup(0, 1) == -1);  // the uncounted pins did not keep it
        cache.fill_done(*v, true);
      }
      // Now credit expert 2 repeatedly (kept drafts) but not 3: 3 goes first.
      for (int i = 0; i < 4; ++i) {
        cache.advance_token();
        cache.credit_use(0, 2);
        cache.pin(cache.lookup(1, 0)).release();
      }
      cache.credit_use(1, 7);  // not cached: nothing happens
      auto w = cache.claim(1, 1, false);
      REQUIRE(w.has_value());
      CHECK(cache.lookup(0, 3) == -1);
      CHECK(cache.lookup(0, 2) == s2);
    }
  }
}

TEST_CASE("ExpertCache aged LFU keeps the frequent expert, and ageing forgets", "[sched]") {
  ExpertCacheParams p = params(EvictionPolicy::lfu_aged, 2);
  p.half_life_tokens = 1.0;
  auto c = ExpertCache::create(p);
  REQUIRE(c.ok());
  ExpertCache& cache = **c;
  const int32_t hot = fill(cache, 0, 1);
  for (int i = 0; i < 5; ++i) cache.pin(hot).release();
  const int32_t cold = fill(cache, 0, 2);
  cache.pin(cold).release();  // more recent than `hot`, but used once
  auto v = cache.claim(0, 3, false);
  REQUIRE(v.has_value());
  CHECK(*v == cold);  // LRU would have evicted `hot`
  cache.fill_done(*v, true);
  cache.pin(*v).release();
  // After many half-lives the old counts are gone: recency decides again.
  for (int i = 0; i < 40; ++i) cache.advance_token();
  const int32_t fresh = *v;
  cache.pin(fresh).release();
  auto w = cache.claim(0, 4, false);
  REQUIRE(w.has_value());
  CHECK(*w == hot);
}

TEST_CASE("ExpertCache protects an unused prefetch for one token", "[sched]") {
  auto c = ExpertCache::create(params(EvictionPolicy::lru, 2));
  REQUIRE(c.ok());
  ExpertCache& cache = **c;
  auto p1 = cache.claim(0, 1, true);
  REQUIRE(p1.has_value());
  cache.fill_done(*p1, true);
  const int32_t d = fill(cache, 0, 2);
  auto v = cache.claim(0, 3, true);
  REQUIRE(v.has_value());
  CHECK(*v == d);  // the unused prefetch survives although it is older
  cache.fill_done(*v, true);
  int32_t unused_layer = 7;
  cache.advance_token();
  cache.advance_token();  // protection over: it may go now
  auto w = cache.claim(1, 0, false, &unused_layer);
  REQUIRE(w.has_value());
  CHECK(unused_layer == 0);
  CHECK(cache.counters().prefetched_unused_evictions == 1);
}

TEST_CASE("ExpertCache: a demand claim takes a protected prefetch when nothing else is free", "[sched]") {
  // Every slot holds an unused prefetch of this token: another prefetch must
  // not evict one, but the router's real choice must get a slot (it used to
  // wait forever: "no expert of layer 0 can become ready (no slot free)").
  auto c = ExpertCache::create(params(EvictionPolicy::lfu_aged, 2));
  REQUIRE(c.ok());
  ExpertCache& cache = **c;
  for (int32_t e : {1, 2}) {
    auto p = cache.claim(0, e, true);
    REQUIRE(p.has_value());
    cache.fill_done(*p, true);
  }
  CHECK_FALSE(cache.claim(0, 3, true).has_value());
  int32_t unused_layer = -1;
  auto d = cache.claim(0, 4, false, &unused_layer);
  REQUIRE(d.has_value());
  CHECK(unused_layer == 0);
  CHECK(cache.lookup(0, 1) < 0);  // the oldest prefetch made room
  CHECK(cache.lookup(0, 2) >= 0);
}

TEST_CASE("ExpertCache set_budget shrinks at once; pinned slots go on release", "[sched]") {
  auto c = ExpertCache::create(params(EvictionPolicy::lru, 6));
  REQUIRE(c.ok());
  ExpertCache& cache = **c;
  std::vector<int32_t> s;
  for (int e = 0; e < 6; ++e) s.push_back(fill(cache, 0, e));
  ExpertHandle pinned = cache.pin(s[5]);
  REQUIRE(cache.set_budget(1000 + 2 * 8192).ok());
  CHECK(cache.n_slots() == 2);
  for (int e = 2; e < 5; ++e) CHECK(cache.lookup(0, e) == -1);
  CHECK(cache.lookup(0, 5) == s[5]);  // still pinned: stays until released
  pinned.release();
  CHECK(cache.lookup(0, 5) == -1);
  CHECK(cache.lookup(0, 0) == s[0]);
  REQUIRE(cache.set_budget(1000 + 4 * 8192).ok());  // growing again works
  CHECK(cache.n_slots() == 4);
  fill(cache, 1, 1);
  fill(cache, 1, 2);
  CHECK(cache.lookup(1, 2) >= 0);
}
