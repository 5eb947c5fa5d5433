// Status classes of the C API (issue 11, defect 5): a prompt that does not fit
// is LES_ERR_CONTEXT_FULL in les_generate as in les_context_decode; the
// context's last error follows every failing call on it (streaming calls on a
// resident context included); a cancel issued before a generation starts is
// not lost; a token callback returning false gives LES_ERR_CANCELLED.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "les/les.h"
#include "support/c_api_loaded.h"
#include "support/fixtures.h"
#include "support/greedy_params.h"

namespace {

using les::test::load;
using les::test::Loaded;

struct Count {
  int n = 0;
  int stop_after = -1;
};

bool count(les_token, const char*, size_t, void* ud) {
  auto* c = static_cast<Count*>(ud);
  ++c->n;
  return c->stop_after < 0 || c->n < c->stop_after;
}

les_stop_reason last_stop(les_context* c) {
  les_generate_stats st;
  std::memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  REQUIRE(les_context_generate_stats(c, &st) == LES_OK);
  return st.stop_reason;
}

bool has(const char* s, const char* needle) { return std::string(s).find(needle) != std::string::npos; }

constexpr const char* kPrompt = "The castle stood upon a rock, and the";

}  // namespace

TEST_CASE("C API status: a prompt that does not fit is LES_ERR_CONTEXT_FULL, as in decode", "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded l;
  REQUIRE(load(path, l, 8));
  les_token ids[64];
  int32_t n = 0;
  REQUIRE(les_tokenize(l.model, kPrompt, std::strlen(kPrompt), true, false, ids, 64, &n) == LES_OK);
  REQUIRE(n > 8);
  CHECK(les_context_decode(l.ctx, ids, n) == LES_ERR_CONTEXT_FULL);
  const les_generate_params gp = les::test::greedy_params(4);
  Count c;
  CHECK(les_generate(l.ctx, kPrompt, &gp, count, &c) == LES_ERR_CONTEXT_FULL);
  INFO(les_context_last_error(l.ctx));
  CHECK(has(les_context_last_error(l.ctx), "room for 8"));
  CHECK(c.n == 0);
  CHECK(les_context_n_past(l.ctx) == 0);  // nothing decoded
  // After a decode that fills part of it, the room left counts.
  REQUIRE(les_context_decode(l.ctx, ids, 5) == LES_OK);
  CHECK(les_generate(l.ctx, kPrompt, &gp, count, &c) == LES_ERR_CONTEXT_FULL);
  CHECK(has(les_context_last_error(l.ctx), "room for 3"));
  CHECK(les_context_n_past(l.ctx) == 5);
}

TEST_CASE("C API status: generating into a full context says what was kept", "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded l;
  REQUIRE(load(path, l, 16));
  les_generate_params gp = les::test::greedy_params(64);
  gp.ignore_eos = true;
  Count c;
  CHECK(les_generate(l.ctx, kPrompt, &gp, count, &c) == LES_ERR_CONTEXT_FULL);
  CHECK(last_stop(l.ctx) == LES_STOP_CONTEXT_FULL);
  CHECK(les_context_n_past(l.ctx) == 16);
  INFO(les_context_last_error(l.ctx));
  CHECK(has(les_context_last_error(l.ctx), "the context is full (n_ctx 16): "));
  CHECK(has(les_context_last_error(l.ctx), " tokens generated, the last not kept (no position left)"));
  // Already full: one token is sampled from the logits and delivered, but none is kept.
  Count d;
  CHECK(les_generate(l.ctx, "", &gp, count, &d) == LES_ERR_CONTEXT_FULL);
  CHECK(d.n == 1);
  CHECK(les_context_n_past(l.ctx) == 16);
  CHECK(has(les_context_last_error(l.ctx), "1 token generated, not kept (no position left)"));
}

TEST_CASE("C API status: the context's last error follows streaming calls that fail on it", "[api][stream]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded l;
  REQUIRE(load(path, l));
  les_generate_params gp = les::test::greedy_params(2);
  gp.sampler.top_p = 2.0f;  // an older failure, recorded on the context
  REQUIRE(les_generate(l.ctx, "x", &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
  REQUIRE(has(les_context_last_error(l.ctx), "top_p"));

  CHECK(les_context_set_expert_budget(l.ctx, 1u << 30) == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_context_last_error(l.ctx), "les_context_set_expert_budget"));
  CHECK(has(les_context_last_error(l.ctx), "does not stream experts"));

  REQUIRE(les_generate(l.ctx, "x", &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
  les_stream_stats st;
  st.struct_size = sizeof st;
  CHECK(les_context_stream_stats(l.ctx, &st) == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_context_last_error(l.ctx), "les_context_stream_stats"));

  REQUIRE(les_generate(l.ctx, "x", &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
  les_stream_layer_stats ls;
  ls.struct_size = sizeof ls;
  CHECK(les_context_stream_layer_stats(l.ctx, 0, &ls) == LES_ERR_INVALID_ARGUMENT);
  CHECK(has(les_context_last_error(l.ctx), "les_context_stream_layer_stats"));

  // The thread's last error says the same; a successful generation clears the context's.
  CHECK(has(les_last_error(), "les_context_stream_layer_stats"));
  gp.sampler.top_p = 0.95f;
  REQUIRE(les_generate(l.ctx, "x", &gp, nullptr, nullptr) == LES_OK);
  CHECK(std::string(les_context_last_error(l.ctx)).empty());
}

TEST_CASE("C API status: a cancel issued before les_generate starts stops it, once", "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded l;
  REQUIRE(load(path, l));
  const les_generate_params gp = les::test::greedy_params(4);
  les_context_cancel(l.ctx);
  Count c;
  CHECK(les_generate(l.ctx, kPrompt, &gp, count, &c) == LES_ERR_CANCELLED);
  CHECK(has(les_context_last_error(l.ctx), "before it started"));
  CHECK(c.n == 0);
  CHECK(les_context_n_past(l.ctx) == 0);  // nothing decoded
  CHECK(last_stop(l.ctx) == LES_STOP_CANCELLED);
  // Consumed: the next generation runs.
  CHECK(les_generate(l.ctx, kPrompt, &gp, count, &c) == LES_OK);
  CHECK(c.n == 4);

  // A cancel racing the start of a generation from another thread stops
  // either that generation or, when it came after its last token, the next
  // one: never none.
  int lost = 0, stopped_running = 0, stopped_next = 0;
  for (int i = 0; i < 16; ++i) {
    les_context_reset(l.ctx);
    std::atomic<bool> go{false};
    std::thread canceller([&] {
      while (!go.load()) std::this_thread::yield();
      les_context_cancel(l.ctx);
    });
    go.store(true);
    const les_status a = les_generate(l.ctx, kPrompt, &gp, nullptr, nullptr);
    canceller.join();
    if (a == LES_ERR_CANCELLED) {
      ++stopped_running;
    } else {
      REQUIRE(a == LES_OK);
      les_context_reset(l.ctx);
      if (les_generate(l.ctx, kPrompt, &gp, nullptr, nullptr) == LES_ERR_CANCELLED) {
        ++stopped_next;
      } else {
        ++lost;
      }
    }
    les_context_reset(l.ctx);
    REQUIRE(les_generate(l.ctx, kPrompt, &gp, nullptr, nullptr) == LES_OK);  // nothing left pending
  }
  INFO("stopped the running generation " << stopped_running << ", the next " << stopped_next);
  CHECK(lost == 0);
}

TEST_CASE("C API status: a token callback returning false gives LES_ERR_CANCELLED", "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded l;
  REQUIRE(load(path, l));
  const les_generate_params gp = les::test::greedy_params(8);
  Count c;
  c.stop_after = 3;
  CHECK(les_generate(l.ctx, kPrompt, &gp, count, &c) == LES_ERR_CANCELLED);
  CHECK(c.n == 3);
  CHECK(has(les_context_last_error(l.ctx), "token callback returned false"));
  CHECK(has(les_last_error(), "token callback returned false"));
  CHECK(last_stop(l.ctx) == LES_STOP_CANCELLED);
  // Nothing stays pending: the next generation runs to n_predict.
  Count d;
  CHECK(les_generate(l.ctx, "It is a truth", &gp, count, &d) == LES_OK);
  CHECK(d.n == 8);
  CHECK(last_stop(l.ctx) == LES_STOP_N_PREDICT);
}
