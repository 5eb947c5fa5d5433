// Cancellation through the C ABI (issue 36, defects 3 and 5).
//
// Defect 5: after les_context_cancel() one token was counted (n_generated) and
// kept (les_context_tokens) but never delivered to the callback. The cancel is
// now checked before a token is committed: at every point of a generation,
// plain and speculative, delivered == counted == kept.
//
// Defect 3: a cancel during a long prefill was only seen after the whole
// prompt was evaluated. It is now checked between the prompt's chunks of
// n_batch tokens: les_generate, les_generate_with_images and
// les_context_decode return LES_ERR_CANCELLED within one chunk, keeping
// nothing of the prompt (n_past, the pending token and later output as if
// the call had not been made). les_generate_params.abort_callback stops a
// call the same way, scoped to that call.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "les/les.h"
#include "support/c_api_loaded.h"
#include "support/fixtures.h"
#include "support/greedy_params.h"

namespace {

using Clock = std::chrono::steady_clock;
using les::test::Loaded;

constexpr const char* kModel = "synthetic/qwen3moe-Q4_K_M.gguf";

bool has(const char* s, const char* part) { return s != nullptr && std::string(s).find(part) != std::string::npos; }

// Opens `path` with a context of n_ctx tokens and prefill chunks of n_batch.
bool open(const std::string& path, Loaded& l, int32_t n_ctx, int32_t n_batch) {
  les_model_params mp = les_model_default_params();
  mp.n_threads = 2;
  if (les_model_load(path.c_str(), &mp, &l.model) != LES_OK) return false;
  les_context_params cp = les_context_default_params();
  cp.n_ctx = n_ctx;
  cp.n_batch = n_batch;
  return les_context_create(l.model, &cp, &l.ctx) == LES_OK;
}

std::vector<les_token> context_tokens(les_context* ctx) {
  std::vector<les_token> ids(static_cast<size_t>(les_context_n_ctx(ctx)) + 1);
  int32_t n = 0;
  REQUIRE(les_context_tokens(ctx, ids.data(), static_cast<int32_t>(ids.size()), &n) == LES_OK);
  ids.resize(static_cast<size_t>(n));
  return ids;
}

les_generate_stats last_stats(les_context* ctx) {
  les_generate_stats s{};
  s.struct_size = sizeof s;
  REQUIRE(les_context_generate_stats(ctx, &s) == LES_OK);
  return s;
}

// Delivered tokens; cancels the context from the callback after `cancel_after` of them (-1: never).
struct Delivered {
  les_context* ctx = nullptr;
  std::vector<les_token> tokens;
  std::string text;
  int cancel_after = -1;
};

bool deliver(les_token tok, const char* piece, size_t len, void* ud) {
  auto* d = static_cast<Delivered*>(ud);
  if (tok >= 0) d->tokens.push_back(tok);
  d->text.append(piece, len);
  if (tok >= 0 && static_cast<int>(d->tokens.size()) == d->cancel_after) les_context_cancel(d->ctx);
  return true;
}

// Counts forward chunks (layer 0's query projection runs once per chunk) and
// cancels the context when chunk `cancel_at` (1-based) starts (0: never).
struct ChunkWatch {
  les_context* ctx = nullptr;
  int cancel_at = 0;
  int chunks = 0;
  int chunks_after_cancel = 0;
  bool cancelled = false;
  Clock::time_point t_start, t_cancel;
};

void watch_chunks(const char* tensor, int32_t, const float*, int64_t, int64_t, void* ud) {
  if (std::strcmp(tensor, "blk.0.attn_q.weight") != 0) return;
  auto* w = static_cast<ChunkWatch*>(ud);
  ++w->chunks;
  if (w->cancelled) ++w->chunks_after_cancel;
  if (w->chunks == w->cancel_at) {
    w->t_cancel = Clock::now();
    w->cancelled = true;
    les_context_cancel(w->ctx);
  }
}

// The generation's three counts agree: what the callback got, n_generated,
// and what the context kept after the prompt.
void check_counts(les_context* ctx, const std::vector<les_token>& before, int32_t n_prompt, const Delivered& d) {
  const les_generate_stats s = last_stats(ctx);
  const std::vector<les_token> kept = context_tokens(ctx);
  INFO("delivered " << d.tokens.size() << ", n_generated " << s.n_generated << ", kept " << kept.size() << " (before "
                    << before.size() << ", prompt " << n_prompt << ")");
  CHECK(s.n_generated == static_cast<int32_t>(d.tokens.size()));
  REQUIRE(kept.size() == before.size() + static_cast<size_t>(n_prompt) + d.tokens.size());
  CHECK(std::equal(before.begin(), before.end(), kept.begin()));
  CHECK(std::equal(d.tokens.begin(), d.tokens.end(), kept.end() - static_cast<std::ptrdiff_t>(d.tokens.size())));
  CHECK(les_context_n_past(ctx) == static_cast<int32_t>(kept.size()));
}

std::vector<les_token> prompt_ids(int n) {
  std::vector<les_token> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<les_token>(100 + (i * 37) % 3000));
  return ids;
}

}  // namespace

TEST_CASE("Cancel: delivered == counted == kept, after a cancel at every point of a generation", "[api][cancel]") {
  LES_REQUIRE_FIXTURE(path, kModel);
  Loaded l;
  REQUIRE(open(path, l, 512, 512));
  const int n_predict = 12;
  // Plain decoding, and prompt-lookup speculation (accepted drafts are
  // delivered one by one from one verify pass: a cancel among them too).
  for (int lookup : {0, 2}) {
    int accepted = 0;  // drafts accepted over the runs: the cancels among them were exercised
    for (int k = 1; k <= n_predict; ++k) {
      INFO("lookup " << lookup << ", cancel after delivered token " << k);
      REQUIRE(les_context_reset(l.ctx) == LES_OK);
      les_generate_params gp = les::test::greedy_params(n_predict);
      gp.lookup_ngram = lookup;
      const std::vector<les_token> prompt = prompt_ids(40);  // repetitive: lookup drafts get accepted
      std::vector<les_token> twice = prompt;
      twice.insert(twice.end(), prompt.begin(), prompt.end());
      gp.prompt_tokens = twice.data();
      gp.n_prompt_tokens = static_cast<int32_t>(twice.size());
      Delivered d;
      d.ctx = l.ctx;
      d.cancel_after = k;
      const les_status st = les_generate(l.ctx, nullptr, &gp, deliver, &d);
      if (k < n_predict) {
        CHECK(st == LES_ERR_CANCELLED);
        CHECK(d.tokens.size() == static_cast<size_t>(k));  // stopped before the next token
        CHECK(has(les_context_last_error(l.ctx), "les_context_cancel"));
        CHECK(last_stats(l.ctx).stop_reason == LES_STOP_CANCELLED);
      } else {
        CHECK(st == LES_OK);  // the cancel came after the last token: it stays pending
      }
      check_counts(l.ctx, {}, gp.n_prompt_tokens, d);
      accepted += last_stats(l.ctx).n_draft_accepted;
      // A second turn continues from exactly what was delivered.
      const std::vector<les_token> before = context_tokens(l.ctx);
      Delivered d2;
      d2.ctx = l.ctx;
      les_generate_params gp2 = les::test::greedy_params(3);
      gp2.lookup_ngram = lookup;
      les_status st2 = les_generate(l.ctx, "", &gp2, deliver, &d2);
      if (k == n_predict) {  // consumed the pending cancel at its start
        CHECK(st2 == LES_ERR_CANCELLED);
        CHECK(d2.tokens.empty());
        st2 = les_generate(l.ctx, "", &gp2, deliver, &d2);
      }
      CHECK(st2 == LES_OK);
      check_counts(l.ctx, before, 0, d2);
    }
    INFO("lookup " << lookup << ": drafts accepted " << accepted);
    CHECK((lookup == 0 || accepted > 0));
  }
}

TEST_CASE("Cancel: from another thread at random times, the counts agree", "[api][cancel]") {
  LES_REQUIRE_FIXTURE(path, kModel);
  Loaded l;
  REQUIRE(open(path, l, 512, 16));
  std::mt19937 rng(36);
  const std::vector<les_token> prompt = prompt_ids(96);  // 6 chunks of 16
  for (int run = 0; run < 24; ++run) {
    REQUIRE(les_context_reset(l.ctx) == LES_OK);
    les_generate_params gp = les::test::greedy_params(24);
    gp.prompt_tokens = prompt.data();
    gp.n_prompt_tokens = static_cast<int32_t>(prompt.size());
    Delivered d;
    const int delay_us = std::uniform_int_distribution<int>(0, 20000)(rng);
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
      les_context_cancel(l.ctx);
    });
    const les_status st = les_generate(l.ctx, nullptr, &gp, deliver, &d);
    canceller.join();
    INFO("run " << run << ", cancel after " << delay_us << " us: " << les_status_name(st));
    const les_generate_stats s = last_stats(l.ctx);
    if (st == LES_OK) {
      (void)les_generate(l.ctx, nullptr, &gp, nullptr, nullptr);  // consumes the late cancel
      continue;
    }
    REQUIRE(st == LES_ERR_CANCELLED);
    if (s.n_prompt_tokens == 0) {  // cancelled during the prefill, or before it started
      CHECK(d.tokens.empty());
      CHECK(context_tokens(l.ctx).empty());
      continue;
    }
    check_counts(l.ctx, {}, gp.n_prompt_tokens, d);
  }
}

TEST_CASE("Cancel: a cancel during a long prefill returns within one chunk, keeping nothing", "[api][cancel]") {
  LES_REQUIRE_FIXTURE(path, kModel);
  const int32_t n_batch = 32, n_chunks = 24;
  Loaded l;
  REQUIRE(open(path, l, 1024, n_batch));
  // A context with history and a pending token: both must survive the cancel.
  les_generate_params gp0 = les::test::greedy_params(3);
  REQUIRE(les_generate(l.ctx, "Once upon a time", &gp0, nullptr, nullptr) == LES_OK);
  const std::vector<les_token> before = context_tokens(l.ctx);
  const std::vector<les_token> prompt = prompt_ids(n_batch * n_chunks - 1);  // with the pending token: 24 chunks

  ChunkWatch w;
  w.ctx = l.ctx;
  w.cancel_at = 3;
  REQUIRE(les_context_set_activation_callback(l.ctx, watch_chunks, &w) == LES_OK);
  les_generate_params gp = les::test::greedy_params(8);
  gp.prompt_tokens = prompt.data();
  gp.n_prompt_tokens = static_cast<int32_t>(prompt.size());
  Delivered d;
  w.t_start = Clock::now();
  const les_status st = les_generate(l.ctx, nullptr, &gp, deliver, &d);
  const auto t_end = Clock::now();
  REQUIRE(les_context_set_activation_callback(l.ctx, nullptr, nullptr) == LES_OK);
  CHECK(st == LES_ERR_CANCELLED);
  CHECK(has(les_context_last_error(l.ctx), "during the prompt's evaluation"));
  // The chunk running when the cancel came finished; no other started.
  CHECK(w.chunks == 3);
  CHECK(w.chunks_after_cancel == 0);
  const double per_chunk = std::chrono::duration<double>(w.t_cancel - w.t_start).count() / 2;
  const double after_cancel = std::chrono::duration<double>(t_end - w.t_cancel).count();
  INFO("seconds per chunk " << per_chunk << ", from the cancel to the return " << after_cancel);
  CHECK(after_cancel < 3 * per_chunk + 0.05);  // one chunk, with room for a loaded machine
  CHECK(d.tokens.empty());
  const les_generate_stats s = last_stats(l.ctx);
  CHECK(s.stop_reason == LES_STOP_CANCELLED);
  CHECK(s.n_prompt_tokens == 0);
  CHECK(s.n_generated == 0);
  CHECK(context_tokens(l.ctx) == before);  // history and pending token as they were

  // Consistent: the same prompt now gives what a context that never saw the cancel gives.
  Delivered again, fresh;
  REQUIRE(les_generate(l.ctx, nullptr, &gp, deliver, &again) == LES_OK);
  Loaded m;
  REQUIRE(open(path, m, 1024, n_batch));
  REQUIRE(les_generate(m.ctx, "Once upon a time", &gp0, nullptr, nullptr) == LES_OK);
  REQUIRE(les_generate(m.ctx, nullptr, &gp, deliver, &fresh) == LES_OK);
  CHECK(again.tokens == fresh.tokens);
  CHECK(context_tokens(l.ctx) == context_tokens(m.ctx));
}

TEST_CASE("Cancel: les_generate_with_images' prefill stops between chunks too", "[api][cancel]") {
  LES_REQUIRE_FIXTURE(path, kModel);
  Loaded l;
  REQUIRE(open(path, l, 2048, 16));
  std::string prompt;
  for (int i = 0; i < 60; ++i) prompt += "the quick brown fox jumps over the lazy dog ";
  ChunkWatch w;
  w.ctx = l.ctx;
  w.cancel_at = 2;
  REQUIRE(les_context_set_activation_callback(l.ctx, watch_chunks, &w) == LES_OK);
  const les_generate_params gp = les::test::greedy_params(4);
  Delivered d;
  CHECK(les_generate_with_images(l.ctx, prompt.c_str(), nullptr, 0, &gp, deliver, &d) == LES_ERR_CANCELLED);
  CHECK(w.chunks == 2);
  CHECK(d.tokens.empty());
  CHECK(les_context_n_past(l.ctx) == 0);
  CHECK(last_stats(l.ctx).stop_reason == LES_STOP_CANCELLED);
}

TEST_CASE("Cancel: les_context_decode stops between chunks and consumes a pending cancel", "[api][cancel]") {
  LES_REQUIRE_FIXTURE(path, kModel);
  Loaded l;
  REQUIRE(open(path, l, 1024, 16));
  const std::vector<les_token> ids = prompt_ids(160);  // 10 chunks
  ChunkWatch w;
  w.ctx = l.ctx;
  w.cancel_at = 4;
  REQUIRE(les_context_set_activation_callback(l.ctx, watch_chunks, &w) == LES_OK);
  CHECK(les_context_decode(l.ctx, ids.data(), static_cast<int32_t>(ids.size())) == LES_ERR_CANCELLED);
  CHECK(w.chunks == 4);
  CHECK(les_context_n_past(l.ctx) == 0);
  CHECK(les_context_logits(l.ctx) == nullptr);
  w.cancel_at = 0;
  w.chunks = 0;
  CHECK(les_context_decode_all_logits(l.ctx, ids.data(), 40) == LES_OK);  // consumed: the next one runs
  CHECK(les_context_n_past(l.ctx) == 40);
  // A cancel while no call runs stops the next decode at once, nothing decoded.
  les_context_cancel(l.ctx);
  w.chunks = 0;
  CHECK(les_context_decode(l.ctx, ids.data(), 1) == LES_ERR_CANCELLED);
  CHECK(has(les_context_last_error(l.ctx), "before it started"));
  CHECK(w.chunks == 0);
  CHECK(les_context_n_past(l.ctx) == 40);
  CHECK(les_context_decode(l.ctx, ids.data(), 1) == LES_OK);
  CHECK(les_context_n_past(l.ctx) == 41);
  REQUIRE(les_context_set_activation_callback(l.ctx, nullptr, nullptr) == LES_OK);
}

namespace {

struct AbortAfter {
  int polls_before_token = -1;  // the abort callback returns true once this many tokens were delivered
  Delivered* d = nullptr;
  int calls = 0;
};

bool abort_when(void* ud) {
  auto* a = static_cast<AbortAfter*>(ud);
  ++a->calls;
  return a->polls_before_token >= 0 && static_cast<int>(a->d->tokens.size()) >= a->polls_before_token;
}

}  // namespace

TEST_CASE("Cancel: les_generate_params.abort_callback stops one call, before a token is committed", "[api][cancel]") {
  LES_REQUIRE_FIXTURE(path, kModel);
  Loaded l;
  REQUIRE(open(path, l, 1024, 16));
  const std::vector<les_token> prompt = prompt_ids(64);
  for (int k = 0; k <= 5; ++k) {
    INFO("abort after " << k << " delivered tokens");
    REQUIRE(les_context_reset(l.ctx) == LES_OK);
    les_generate_params gp = les::test::greedy_params(10);
    gp.prompt_tokens = prompt.data();
    gp.n_prompt_tokens = static_cast<int32_t>(prompt.size());
    Delivered d;
    AbortAfter a{k, &d, 0};
    gp.abort_callback = abort_when;
    gp.abort_user_data = &a;
    CHECK(les_generate(l.ctx, nullptr, &gp, deliver, &d) == LES_ERR_CANCELLED);
    CHECK(has(les_context_last_error(l.ctx), "abort callback"));
    CHECK(d.tokens.size() == static_cast<size_t>(k));
    if (k == 0) {
      CHECK(les_context_n_past(l.ctx) == 0);  // stopped before its prompt
    } else {
      check_counts(l.ctx, {}, gp.n_prompt_tokens, d);
    }
    // Scoped to the call: the next one, without it, runs.
    gp.abort_callback = nullptr;
    CHECK(les_generate(l.ctx, nullptr, &gp, nullptr, nullptr) == LES_OK);
  }
  // During the prefill: polled between chunks.
  REQUIRE(les_context_reset(l.ctx) == LES_OK);
  les_generate_params gp = les::test::greedy_params(4);
  gp.prompt_tokens = prompt.data();
  gp.n_prompt_tokens = static_cast<int32_t>(prompt.size());
  struct Countdown {
    int left;
  } c{2};
  gp.abort_callback = [](void* ud) { return --static_cast<Countdown*>(ud)->left < 0; };
  gp.abort_user_data = &c;
  CHECK(les_generate(l.ctx, nullptr, &gp, nullptr, nullptr) == LES_ERR_CANCELLED);
  CHECK(has(les_context_last_error(l.ctx), "during the prompt's evaluation"));
  CHECK(les_context_n_past(l.ctx) == 0);
  // A caller built before abort_callback existed gets none: the bytes past its struct are not read.
  les_generate_params old = les::test::greedy_params(2);
  old.abort_callback = [](void*) { return true; };
  old.struct_size = static_cast<uint32_t>(offsetof(les_generate_params, abort_callback));
  CHECK(les_generate(l.ctx, "x", &old, nullptr, nullptr) == LES_OK);
}
