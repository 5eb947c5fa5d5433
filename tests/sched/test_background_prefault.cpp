// Background prefault of the expert cache (ExpertCacheParams::background_prefault;
// les_context_params.progress_callback NULL): create() returns while a thread
// faults the slots in with MADV_POPULATE_WRITE. Checked: bytes written into
// slots meanwhile (as the reactor's reads do) are kept; destroying at once
// never hangs and returns the memory; a budget change stops and restarts it;
// through the C API, greedy decoding while it runs gives the logits of a
// context whose cache was faulted in synchronously (a progress callback), bit
// for bit. Where the kernel lacks MADV_POPULATE_WRITE the cache faults in
// synchronously and the same checks hold (prefault_pending() is then false).
#include <les/les.h>
#include <sys/mman.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "sched/expert_cache.h"
#include "sched/memory_plan.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::sched;

namespace {

bool kernel_populates_without_writing() {
  void* m = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return false;
  const bool ok = ::madvise(m, 4096, 23 /* MADV_POPULATE_WRITE */) == 0;
  ::munmap(m, 4096);
  return ok;
}

// 4 layers x 128 experts of 1 MiB, `slots` of them in the budget, background prefault.
ExpertCacheParams params(size_t slots) {
  ExpertCacheParams p;
  p.n_layer = 4;
  p.n_expert = 128;
  p.slot_bytes = size_t{1} << 20;
  p.reserved_bytes = 4096;
  p.budget_bytes = p.reserved_bytes + slots * p.slot_bytes;
  p.background_prefault = true;
  return p;
}

}  // namespace

TEST_CASE("ExpertCache: background prefault keeps the bytes read into slots meanwhile", "[sched]") {
  const bool bg = kernel_populates_without_writing();
  auto c = ExpertCache::create(params(256));
  REQUIRE(c.ok());
  ExpertCache& cache = **c;
  CHECK(cache.prefault_pending() == bg);
  // Fill every slot as the reactor does (claim, write, fill_done), last slot first: the
  // background thread faults from the first, so the two meet in the middle.
  std::vector<int32_t> slots;
  for (int32_t k = 0; k < 256; ++k) {
    auto s = cache.claim(k / 128, k % 128, false);
    REQUIRE(s.has_value());
    slots.push_back(*s);
  }
  for (auto it = slots.rbegin(); it != slots.rend(); ++it) {
    std::memset(cache.slot_data(*it), 1 + (*it % 251), cache.slot_bytes());
    cache.fill_done(*it, true);
  }
  CHECK(cache.wait_prefault() == 256);
  CHECK_FALSE(cache.prefault_pending());
  std::vector<std::byte> want(cache.slot_bytes());
  for (int32_t s : slots) {
    std::memset(want.data(), 1 + (s % 251), want.size());
    INFO("slot " << s);
    REQUIRE(std::memcmp(cache.slot_data(s), want.data(), want.size()) == 0);
  }
}

TEST_CASE("ExpertCache: destroyed at once, a background prefault stops and its memory is returned", "[sched]") {
  // 20 caches of 1 GiB each, destroyed right after create(): without a prompt stop and
  // unmap this would take seconds and leave gigabytes resident.
  const uint64_t before = process_rss_bytes();
  for (int i = 0; i < 20; ++i) {
    auto c = ExpertCache::create(params(512));
    REQUIRE(c.ok());
  }
  const uint64_t after = process_rss_bytes();
  INFO("RSS before " << before << " bytes, after " << after);
  CHECK(after < before + (uint64_t{64} << 20));
}

TEST_CASE("ExpertCache: a budget change during a background prefault stops and resumes it", "[sched]") {
  const bool bg = kernel_populates_without_writing();
  auto c = ExpertCache::create(params(400));
  REQUIRE(c.ok());
  REQUIRE((*c)->set_budget(4096 + 100 * (size_t{1} << 20)).ok());  // shrink: joined first, then discarded
  CHECK((*c)->n_slots() == 100);
  REQUIRE((*c)->set_budget(4096 + 300 * (size_t{1} << 20)).ok());  // grow: faulted from where it stopped
  CHECK((*c)->prefault_pending() == bg);
  CHECK((*c)->wait_prefault() == 300);
}

namespace {

bool keep_going(float, void*) { return true; }

// Greedy tokens and every step's logits of `n` decode steps from `prompt`.
std::vector<float> greedy_logits(les_model* model, bool synchronous, int n, std::vector<les_token>* tokens) {
  les_context_params cp = les_context_default_params();
  cp.n_ctx = 128;
  cp.io_backend = LES_IO_PREAD;
  cp.expert_budget_bytes = 64ull << 20;  // every expert of the fixture: the whole cache is faulted in
  if (synchronous) cp.progress_callback = keep_going;
  les_context* ctx = nullptr;
  REQUIRE(les_context_create(model, &cp, &ctx) == LES_OK);
  const int32_t n_vocab = les_model_n_vocab(model);
  std::vector<float> all;
  les_token t = 1;
  for (int i = 0; i < n; ++i) {
    REQUIRE(les_context_decode(ctx, &t, 1) == LES_OK);
    const float* l = les_context_logits(ctx);
    all.insert(all.end(), l, l + n_vocab);
    int32_t best = 0;
    for (int32_t v = 1; v < n_vocab; ++v)
      if (l[v] > l[best]) best = v;
    t = best;
    tokens->push_back(t);
  }
  les_context_free(ctx);
  return all;
}

}  // namespace

TEST_CASE("C API: decoding while the cache faults in gives the synchronous prefault's logits", "[sched][api]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-F16.gguf");
  les_model* model = nullptr;
  REQUIRE(les_model_load(path.c_str(), nullptr, &model) == LES_OK);
  std::vector<les_token> sync_tokens, bg_tokens;
  const std::vector<float> sync = greedy_logits(model, true, 12, &sync_tokens);
  const std::vector<float> background = greedy_logits(model, false, 12, &bg_tokens);
  CHECK(bg_tokens == sync_tokens);
  CHECK(background == sync);  // bit for bit
  // Created and freed at once, many times: no hang.
  les_context_params cp = les_context_default_params();
  cp.n_ctx = 64;
  cp.expert_budget_bytes = 64ull << 20;
  for (int i = 0; i < 20; ++i) {
    les_context* ctx = nullptr;
    REQUIRE(les_context_create(model, &cp, &ctx) == LES_OK);
    les_context_free(ctx);
  }
  les_model_free(model);
}
