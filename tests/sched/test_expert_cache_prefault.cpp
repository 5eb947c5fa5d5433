// Faulting in the expert cache's pages at creation reports progress in
// chunks of kPrefaultChunkBytes (whole slots; monotonic, ending at the total)
// and stops when the callback returns false: create() fails with `cancelled`.
// set_budget() later never calls it. Through the C API: the fraction ends at
// 1, and a cancel gives LES_ERR_CANCELLED and no context.
#include <les/les.h>

#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "sched/expert_cache.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::sched;

namespace {

// 4 layers x 64 experts of 1 MiB: 200 slots = 200 MiB, i.e. 4 chunks (64, 128, 192, 200 MiB).
ExpertCacheParams params(size_t slots) {
  ExpertCacheParams p;
  p.n_layer = 4;
  p.n_expert = 64;
  p.slot_bytes = size_t{1} << 20;
  p.min_slots = 1;
  p.reserved_bytes = 4096;
  p.budget_bytes = p.reserved_bytes + slots * p.slot_bytes;
  return p;
}

}  // namespace

TEST_CASE("ExpertCache: prefault progress in chunks, cancel stops creation", "[sched]") {
  std::vector<std::pair<size_t, size_t>> calls;
  ExpertCacheParams p = params(200);
  p.prefault_progress = [&](size_t done, size_t total) {
    calls.emplace_back(done, total);
    return true;
  };
  auto c = ExpertCache::create(p);
  REQUIRE(c.ok());
  REQUIRE(calls.size() == 4);
  for (size_t i = 0; i < calls.size(); ++i) {
    CHECK(calls[i].second == 200u << 20);
    CHECK(calls[i].first == std::min<size_t>((i + 1) * kPrefaultChunkBytes, 200u << 20));
  }
  // A later budget change faults its new slots without calling back.
  REQUIRE((*c)->set_budget(p.reserved_bytes + 100 * p.slot_bytes).ok());
  REQUIRE((*c)->set_budget(p.reserved_bytes + 250 * p.slot_bytes).ok());
  CHECK(calls.size() == 4);
  CHECK((*c)->n_slots() == 250);

  int n = 0;
  p.prefault_progress = [&](size_t, size_t) { return ++n < 2; };
  auto cancelled = ExpertCache::create(p);
  REQUIRE_FALSE(cancelled.ok());
  CHECK(cancelled.status().code() == StatusCode::cancelled);
  CHECK_THAT(cancelled.status().message(), Catch::Contains("cancelled"));
  CHECK(n == 2);

  // A throwing callback stops as false does (nothing escapes the noexcept path).
  p.prefault_progress = [](size_t, size_t) -> bool { throw 1; };
  auto thrown = ExpertCache::create(p);
  REQUIRE_FALSE(thrown.ok());
  CHECK(thrown.status().code() == StatusCode::cancelled);
}

namespace {

struct Seen {
  std::vector<float> fractions;
  int stop_after = -1;  // -1: never
};

bool on_progress(float f, void* ud) {
  auto* s = static_cast<Seen*>(ud);
  s->fractions.push_back(f);
  return s->stop_after < 0 || static_cast<int>(s->fractions.size()) < s->stop_after;
}

}  // namespace

TEST_CASE("C API: progress_callback while a streaming context is created, and cancel", "[sched][api]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-F16.gguf");
  les_model* model = nullptr;
  REQUIRE(les_model_load(path.c_str(), nullptr, &model) == LES_OK);
  les_context_params cp = les_context_default_params();
  CHECK(cp.progress_callback == nullptr);
  cp.n_ctx = 128;
  cp.io_backend = LES_IO_PREAD;
  cp.expert_budget_bytes = 64ull << 20;  // more than every expert: all slots faulted in
  Seen seen;
  cp.progress_callback = on_progress;
  cp.progress_user_data = &seen;
  les_context* ctx = nullptr;
  REQUIRE(les_context_create(model, &cp, &ctx) == LES_OK);
  REQUIRE_FALSE(seen.fractions.empty());
  for (size_t i = 1; i < seen.fractions.size(); ++i) CHECK(seen.fractions[i] > seen.fractions[i - 1]);
  CHECK(seen.fractions.back() == 1.0f);
  les_context_free(ctx);
  ctx = nullptr;

  Seen stop;
  stop.stop_after = 1;
  cp.progress_user_data = &stop;
  CHECK(les_context_create(model, &cp, &ctx) == LES_ERR_CANCELLED);
  CHECK(ctx == nullptr);
  CHECK(stop.fractions.size() == 1);
  CHECK_THAT(std::string(les_last_error()), Catch::Contains("cancelled"));

  // Resident contexts never call it.
  Seen none;
  cp.expert_budget_bytes = 0;
  cp.progress_user_data = &none;
  REQUIRE(les_context_create(model, &cp, &ctx) == LES_OK);
  CHECK(none.fractions.empty());
  les_context_free(ctx);
  les_model_free(model);
}
