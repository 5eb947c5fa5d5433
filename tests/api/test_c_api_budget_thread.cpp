// les_context_set_expert_budget from another thread while les_generate runs
// (an app's memory warning arrives on another thread): the budget flips
// between the minimum and 3x it every few hundred µs during a long
// generation; every call must return LES_OK with the new budget in effect,
// and the text must equal a resident run's; once per I/O backend (pread,
// io_uring where the kernel allows it, dispatch_io where built). Run it under
// ASan and TSan too (the race it guards against corrupted the cache's
// bookkeeping: "no expert of layer 2 can become ready", NaN logits after a reset).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "les/les.h"
#include "support/fixtures.h"

namespace {

bool collect(les_token, const char* piece, size_t len, void* ud) {
  static_cast<std::string*>(ud)->append(piece, len);
  return true;
}

// The context's smallest budget, read from the message of a refused one (the C
// API names it: "... below the minimum N bytes ...").
uint64_t min_budget(les_context* c) {
  REQUIRE(les_context_set_expert_budget(c, 1) == LES_ERR_INVALID_ARGUMENT);
  const std::string msg = les_last_error();
  std::smatch m;
  INFO(msg);
  REQUIRE(std::regex_search(msg, m, std::regex("minimum ([0-9]+) bytes")));
  return std::stoull(m[1].str());
}

les_stream_stats stream_stats(les_context* c) {
  les_stream_stats st;
  std::memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  REQUIRE(les_context_stream_stats(c, &st) == LES_OK);
  return st;
}

// Streams `prompt` through `io` while another thread flips the budget; the text must be `want`.
void flip_during_generate(les_model* m, les_io_backend io, const char* prompt, const les_generate_params& gp,
                          const std::string& want) {
  les_context_params cp = les_context_default_params();
  cp.expert_budget_bytes = 4u << 20;
  cp.io_backend = io;
  les_context* streamed = nullptr;
  const les_status created = les_context_create(m, &cp, &streamed);
  if (created == LES_ERR_UNSUPPORTED && io == LES_IO_IO_URING) {
    WARN("io_uring unavailable here: " << les_last_error());
    return;
  }
  INFO(les_last_error());
  REQUIRE(created == LES_OK);
  const uint64_t lo = min_budget(streamed);
  const uint64_t hi = 3 * lo;
  REQUIRE(les_context_set_expert_budget(streamed, hi) == LES_OK);
  const int32_t slots_lo = [&] {
    REQUIRE(les_context_set_expert_budget(streamed, lo) == LES_OK);
    return stream_stats(streamed).n_slots;
  }();
  CHECK(slots_lo >= 1);

  // Flipper: every call returns with its budget in effect (the stats show it).
  std::atomic<bool> stop{false};
  std::atomic<int> flips{0}, bad_status{0}, not_in_effect{0};
  std::thread flipper([&] {
    bool low = false;
    while (!stop.load()) {
      const uint64_t b = low ? lo : hi;
      if (les_context_set_expert_budget(streamed, b) != LES_OK) {
        bad_status.fetch_add(1);
      } else {
        les_stream_stats st;
        std::memset(&st, 0, sizeof st);
        st.struct_size = sizeof st;
        if (les_context_stream_stats(streamed, &st) != LES_OK || st.budget_bytes != b ||
            (low && st.n_slots != slots_lo))
          not_in_effect.fetch_add(1);
      }
      flips.fetch_add(1);
      low = !low;
      std::this_thread::sleep_for(std::chrono::microseconds(200 + 100 * (flips.load() % 4)));
    }
  });
  std::string got;
  const les_status st = les_generate(streamed, prompt, &gp, collect, &got);
  const std::string err = les_context_last_error(streamed);
  const int flips_during = flips.load();
  // A second generation after a reset, still flipping: the context stays sound.
  les_context_reset(streamed);
  std::string again;
  const les_status st2 = les_generate(streamed, prompt, &gp, collect, &again);
  stop.store(true);
  flipper.join();

  INFO("generate: " << err << "; flips " << flips_during << " during the first generation");
  CHECK(st == LES_OK);
  CHECK(st2 == LES_OK);
  CHECK(got == want);
  CHECK(again == want);
  CHECK(bad_status.load() == 0);
  CHECK(not_in_effect.load() == 0);
  CHECK(flips_during >= 20);  // the flips overlapped the generation
  const les_stream_stats s = stream_stats(streamed);
  CHECK(s.read_errors == 0);
  CHECK(s.tokens >= 2u * 160u);
  std::printf("set_budget thread (les_io_backend %d): %d flips (%d during the first run) between %llu and %llu "
              "bytes, 2 x %d tokens\n",
              static_cast<int>(io), flips.load(), flips_during,
              static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi), gp.n_predict);

  les_context_free(streamed);
}

}  // namespace

TEST_CASE("C API: set_expert_budget from another thread during les_generate keeps the text", "[api][stream]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  les_model_params mp = les_model_default_params();
  mp.n_threads = 2;
  les_model* m = nullptr;
  REQUIRE(les_model_load(path.c_str(), &mp, &m) == LES_OK);
  les_context* resident = nullptr;
  REQUIRE(les_context_create(m, nullptr, &resident) == LES_OK);
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = 160;
  gp.ignore_eos = true;
  gp.sampler.temperature = 0.0f;
  const char* prompt = "The castle stood upon a rock, and the";
  std::string want;
  REQUIRE(les_generate(resident, prompt, &gp, collect, &want) == LES_OK);
  REQUIRE(!want.empty());
  les_context_free(resident);

  std::vector<les_io_backend> backends{LES_IO_PREAD, LES_IO_IO_URING};
#if defined(LES_HAVE_DISPATCH_IO)
  backends.push_back(LES_IO_DISPATCH_IO);
#endif
  for (les_io_backend io : backends) {  // one pass (a section per backend would redo the resident run)
    INFO("les_io_backend " << static_cast<int>(io));
    flip_during_generate(m, io, prompt, gp, want);
  }
  les_model_free(m);
}