// The C ABI against the trained fixture model: normal use, and bad use that
// must return a status (never crash): NULL handles, wrong struct sizes,
// out-of-range tokens, a cancelling callback, cancellation from another
// thread, a full context, and a model freed while its context lives.
#include <catch2/catch.hpp>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "les/les.h"
#include "support/c_api_loaded.h"
#include "support/fixtures.h"

namespace {

using les::test::load;
using les::test::Loaded;

struct Collect {
  std::string text;
  int n = 0;
  int stop_after = -1;
};

bool collect(les_token, const char* piece, size_t len, void* ud) {
  auto* c = static_cast<Collect*>(ud);
  c->text.append(piece, len);
  ++c->n;
  return c->stop_after < 0 || c->n < c->stop_after;
}

}  // namespace

TEST_CASE("C API: load errors name the problem", "[api]") {
  les_model* m = reinterpret_cast<les_model*>(0x1);
  CHECK(les_model_load("/nonexistent/model.gguf", nullptr, &m) == LES_ERR_IO);
  CHECK(m == nullptr);
  CHECK(std::string(les_last_error()).find("/nonexistent/model.gguf") != std::string::npos);
  CHECK(les_model_load(nullptr, nullptr, &m) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_model_load("x", nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);

  const std::string garbage = les::test::temp_dir() + "/garbage.gguf";
  FILE* f = std::fopen(garbage.c_str(), "wb");
  REQUIRE(f);
  std::fputs("this is not a gguf file at all", f);
  std::fclose(f);
  CHECK(les_model_load(garbage.c_str(), nullptr, &m) == LES_ERR_FORMAT);
  CHECK(std::string(les_last_error()).find("GGUF") != std::string::npos);

  les_model_params p = les_model_default_params();
  p.struct_size = sizeof(p) + 8;  // a newer caller than this library
  CHECK(les_model_load(garbage.c_str(), &p, &m) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_last_error()).find("struct_size") != std::string::npos);
  p.struct_size = 2;
  CHECK(les_model_load(garbage.c_str(), &p, &m) == LES_ERR_INVALID_ARGUMENT);
}

TEST_CASE("C API: n_threads above les_max_threads() is refused, naming the maximum", "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  const unsigned hw = std::thread::hardware_concurrency();
  const int32_t max = les_max_threads();
  CHECK(max == (hw ? static_cast<int32_t>(4 * hw) : 256));
  for (int32_t n : {max + 1, 100000, INT32_MAX}) {
    INFO("n_threads " << n);
    les_model_params mp = les_model_default_params();
    mp.n_threads = n;
    les_model* m = reinterpret_cast<les_model*>(0x1);
    CHECK(les_model_load(path.c_str(), &mp, &m) == LES_ERR_INVALID_ARGUMENT);
    CHECK(m == nullptr);
    const std::string err = les_last_error();
    CHECK(err.find("n_threads") != std::string::npos);
    CHECK(err.find("maximum " + std::to_string(max)) != std::string::npos);
    les_model_free(m == reinterpret_cast<les_model*>(0x1) ? nullptr : m);
  }
  Loaded l;
  les_model_params mp = les_model_default_params();
  mp.n_threads = max;  // the maximum itself is accepted
  REQUIRE(les_model_load(path.c_str(), &mp, &l.model) == LES_OK);
  les_context_params cp = les_context_default_params();
  cp.n_ctx = 16;
  for (int32_t n : {max + 1, INT32_MAX}) {
    INFO("n_threads " << n);
    cp.n_threads = n;
    les_context* c = reinterpret_cast<les_context*>(0x1);
    CHECK(les_context_create(l.model, &cp, &c) == LES_ERR_INVALID_ARGUMENT);
    CHECK(c == nullptr);
    CHECK(std::string(les_last_error()).find("maximum " + std::to_string(max)) != std::string::npos);
  }
  cp.n_threads = max;
  REQUIRE(les_context_create(l.model, &cp, &l.ctx) == LES_OK);
  const les_token t = 1;
  CHECK(les_context_decode(l.ctx, &t, 1) == LES_OK);
}

TEST_CASE("C API: NULL handles are rejected, not dereferenced", "[api]") {
  CHECK(les_model_n_vocab(nullptr) == 0);
  CHECK(les_model_desc(nullptr, nullptr, 0) == -1);
  CHECK(les_token_bos(nullptr) == -1);
  int32_t n = 0;
  CHECK(les_tokenize(nullptr, "a", 1, true, false, nullptr, 0, &n) == LES_ERR_INVALID_ARGUMENT);
  les_context* c = nullptr;
  CHECK(les_context_create(nullptr, nullptr, &c) == LES_ERR_INVALID_ARGUMENT);
  const les_token t = 1;
  CHECK(les_context_decode(nullptr, &t, 1) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_logits(nullptr) == nullptr);
  CHECK(les_generate(nullptr, "x", nullptr, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_reset(nullptr) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_trim(nullptr, 0) == LES_ERR_INVALID_ARGUMENT);
  les_context_cancel(nullptr);
  les_context_free(nullptr);
  les_model_free(nullptr);
  CHECK(std::string(les_context_last_error(nullptr)).empty());
}

TEST_CASE("C API: tokenize, decode, logits, trim on the trained model", "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded l;
  REQUIRE(load(path, l, 64));
  CHECK(les_model_n_vocab(l.model) == 8192);
  CHECK(les_model_n_layer(l.model) == 8);
  CHECK(les_model_n_expert(l.model) == 32);
  CHECK(les_model_n_expert_used(l.model) == 4);
  char buf[128];
  CHECK(les_model_meta_str(l.model, "general.architecture", buf, sizeof buf) == 8);
  CHECK(std::string(buf) == "qwen3moe");
  CHECK(les_model_meta_str(l.model, "no.such.key", buf, sizeof buf) == -1);
  CHECK(les_model_desc(l.model, buf, sizeof buf) > 0);

  const std::string text = "The castle stood upon a rock, and the";
  int32_t n = 0;
  CHECK(les_tokenize(l.model, text.data(), text.size(), true, false, nullptr, 0, &n) == LES_ERR_INVALID_ARGUMENT);
  REQUIRE(n == 10);  // the size needed
  std::vector<les_token> ids(n);
  REQUIRE(les_tokenize(l.model, text.data(), text.size(), true, false, ids.data(), n, &n) == LES_OK);
  CHECK(ids == std::vector<les_token>{1, 404, 1331, 1713, 516, 261, 2921, 8125, 285, 266});

  size_t len = 0;
  CHECK(les_token_to_piece(l.model, 404, buf, sizeof buf, &len) == LES_OK);
  CHECK(std::string(buf, len) == " The");
  CHECK(les_token_to_piece(l.model, 8192, buf, sizeof buf, &len) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_token_to_piece(l.model, -1, buf, sizeof buf, &len) == LES_ERR_INVALID_ARGUMENT);

  CHECK(les_context_logits(l.ctx) == nullptr);
  REQUIRE(les_context_decode(l.ctx, ids.data(), n) == LES_OK);
  const float* logits = les_context_logits(l.ctx);
  REQUIRE(logits != nullptr);
  int best = 0;
  for (int i = 1; i < 8192; ++i)
    if (logits[i] > logits[best]) best = i;
  REQUIRE(les_token_to_piece(l.model, best, buf, sizeof buf, &len) == LES_OK);
  CHECK(std::string(buf, len) == " sun");  // llama.cpp's greedy first token
  CHECK(les_context_n_past(l.ctx) == 10);

  // Out-of-range tokens: an error, and the state is unchanged.
  const les_token bad[2] = {5, 9000};
  CHECK(les_context_decode(l.ctx, bad, 2) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_context_last_error(l.ctx)).find("9000") != std::string::npos);
  CHECK(les_context_n_past(l.ctx) == 10);
  CHECK(les_context_decode(l.ctx, bad, 0) == LES_ERR_INVALID_ARGUMENT);

  CHECK(les_context_trim(l.ctx, 11) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_trim(l.ctx, 4) == LES_OK);
  CHECK(les_context_n_past(l.ctx) == 4);
  CHECK(les_context_reset(l.ctx) == LES_OK);
  CHECK(les_context_n_past(l.ctx) == 0);

  // A full context: an error naming it, nothing appended.
  std::vector<les_token> many(65, 404);
  CHECK(les_context_decode(l.ctx, many.data(), 65) == LES_ERR_CONTEXT_FULL);
  CHECK(les_context_n_past(l.ctx) == 0);
}

TEST_CASE("C API: generate streams greedy text identical to llama.cpp; callbacks cancel", "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded l;
  REQUIRE(load(path, l));
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = 8;
  gp.ignore_eos = true;
  gp.sampler.temperature = 0.0f;
  Collect c;
  REQUIRE(les_generate(l.ctx, "The castle stood upon a rock, and the", &gp, collect, &c) == LES_OK);
  CHECK(c.text == " sun was now heard, that the sun");
  CHECK(c.n == 8);
  les_generate_stats st;
  st.struct_size = sizeof st;
  REQUIRE(les_context_generate_stats(l.ctx, &st) == LES_OK);
  CHECK(st.n_prompt_tokens == 10);
  CHECK(st.n_generated == 8);
  CHECK(st.decode_tokens_per_second > 0);
  CHECK(st.n_decoded == 7);  // the 8th sampled token is delivered but not evaluated
  CHECK(st.forward_seconds > 0);  // inside the decode loop's time
  CHECK(st.forward_seconds <= st.decode_seconds);
  CHECK(st.stop_reason == LES_STOP_N_PREDICT);
  CHECK(std::string(les_stop_reason_name(st.stop_reason)) == "n_predict");
  CHECK(std::string(les_stop_reason_name(static_cast<les_stop_reason>(99))) == "unknown");
  // A caller compiled against the first version of the struct gets its fields only.
  les_generate_stats old_st;
  std::memset(&old_st, 0xAB, sizeof old_st);
  old_st.struct_size = offsetof(les_generate_stats, n_decoded);
  REQUIRE(les_context_generate_stats(l.ctx, &old_st) == LES_OK);
  CHECK(old_st.n_generated == 8);
  CHECK(old_st.struct_size == offsetof(les_generate_stats, n_decoded));
  CHECK(old_st.n_decoded == static_cast<int32_t>(0xABABABAB));

  // The callback stops after 3 tokens.
  les_context_reset(l.ctx);
  Collect c2;
  c2.stop_after = 3;
  CHECK(les_generate(l.ctx, "The castle stood upon a rock, and the", &gp, collect, &c2) == LES_ERR_CANCELLED);
  CHECK(c2.n == 3);
  REQUIRE(les_context_generate_stats(l.ctx, &st) == LES_OK);
  CHECK(st.stop_reason == LES_STOP_CANCELLED);

  // Bad sampler parameters are rejected with a message.
  les_context_reset(l.ctx);
  gp.sampler.top_p = 2.0f;
  CHECK(les_generate(l.ctx, "x", &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_context_last_error(l.ctx)).find("top_p") != std::string::npos);
  gp.sampler.top_p = 0.95f;
  gp.struct_size = 3;
  CHECK(les_generate(l.ctx, "x", &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
}

TEST_CASE("C API: cancel from another thread", "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded l;
  REQUIRE(load(path, l));
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = 200;
  gp.ignore_eos = true;
  struct Shared {
    les_context* ctx;
    std::atomic<int> n{0};
  } sh{l.ctx};
  auto cb = [](les_token, const char*, size_t, void* ud) {
    auto* s = static_cast<Shared*>(ud);
    ++s->n;
    return true;
  };
  std::thread canceller([&] {
    while (sh.n.load() < 2) std::this_thread::yield();
    les_context_cancel(l.ctx);
  });
  const les_status st = les_generate(l.ctx, "It is a truth", &gp, cb, &sh);
  canceller.join();
  CHECK(st == LES_ERR_CANCELLED);
  CHECK(sh.n.load() < 200);
  // The context stays usable.
  les_context_reset(l.ctx);
  gp.n_predict = 2;
  CHECK(les_generate(l.ctx, "It is a truth", &gp, nullptr, nullptr) == LES_OK);
}

TEST_CASE("C API: a model freed while its context lives stays valid for that context", "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  les_model* m = nullptr;
  REQUIRE(les_model_load(path.c_str(), nullptr, &m) == LES_OK);
  les_context* c = nullptr;
  REQUIRE(les_context_create(m, nullptr, &c) == LES_OK);
  les_model_free(m);  // the context keeps the weights alive
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = 4;
  gp.ignore_eos = true;
  gp.sampler.temperature = 0.0f;
  Collect col;
  CHECK(les_generate(c, "The castle stood upon a rock, and the", &gp, collect, &col) == LES_OK);
  CHECK(col.text == " sun was now heard");
  les_context_free(c);
}

TEST_CASE("C API: log callback receives the library's log lines", "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  struct Log {
    std::vector<std::string> lines;
  } log;
  les_model_params mp = les_model_default_params();
  mp.log_level = LES_LOG_INFO;
  mp.log_user_data = &log;
  mp.log_callback = [](les_log_level level, const char* msg, void* ud) {
    if (level >= LES_LOG_INFO) static_cast<Log*>(ud)->lines.emplace_back(msg);
  };
  les_model* m = nullptr;
  REQUIRE(les_model_load(path.c_str(), &mp, &m) == LES_OK);
  REQUIRE_FALSE(log.lines.empty());
  CHECK(log.lines[0].find("loaded") != std::string::npos);
  les_model_free(m);
}

namespace {
// Streaming settings for the trained F16 fixture: 4 MiB of its 25 MiB of experts, c = k + 2, pread.
les_context_params streaming_params() {
  les_context_params cp = les_context_default_params();
  cp.expert_budget_bytes = 4u << 20;
  cp.prefetch_candidates = 6;
  cp.io_backend = LES_IO_PREAD;
  return cp;
}
}  // namespace

TEST_CASE("C API: streamed experts give the resident text; budget and statistics", "[api][stream]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  les_model_params mp = les_model_default_params();
  mp.n_threads = 2;
  les_model* m = nullptr;
  REQUIRE(les_model_load(path.c_str(), &mp, &m) == LES_OK);
  const les_context_params cp = streaming_params();
  les_context* c = nullptr;
  REQUIRE(les_context_create(m, &cp, &c) == LES_OK);

  les_generate_params gp = les_generate_default_params();
  gp.n_predict = 8;
  gp.ignore_eos = true;
  gp.sampler.temperature = 0.0f;
  Collect col;
  REQUIRE(les_generate(c, "The castle stood upon a rock, and the", &gp, collect, &col) == LES_OK);
  CHECK(col.text == " sun was now heard, that the sun");

  les_stream_stats st;
  std::memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  REQUIRE(les_context_stream_stats(c, &st) == LES_OK);
  CHECK(st.budget_bytes == (4u << 20));
  CHECK(st.n_slots > 0);
  CHECK(st.prefetch_candidates == 6);
  CHECK(st.tokens >= 17);  // 10 prompt tokens + 7 decoded
  CHECK(st.bytes_read > 0);
  CHECK(st.reads_issued > 0);
  CHECK(st.cache_hits + st.inflight_hits + st.cache_misses > 0);
  CHECK(st.hit_rate >= 0.0);
  CHECK(st.hit_rate <= 1.0);
  CHECK(st.read_errors == 0);
  CHECK(st.one_token_budget_bytes > 0);
  CHECK(les_context_default_params().eviction == LES_EVICTION_ADAPTIVE);
  {
    // A caller built against the first les_stream_stats (without one_token_budget_bytes)
    // still gets its fields, and nothing is written past them.
    les_stream_stats v1;
    std::memset(&v1, 0xAB, sizeof v1);
    v1.struct_size = static_cast<uint32_t>(offsetof(les_stream_stats, one_token_budget_bytes));
    REQUIRE(les_context_stream_stats(c, &v1) == LES_OK);
    CHECK(v1.budget_bytes == st.budget_bytes);
    CHECK(v1.one_token_budget_bytes == 0xABABABABABABABABull);
  }
  les_stream_layer_stats ls;
  ls.struct_size = sizeof ls;
  REQUIRE(les_context_stream_layer_stats(c, 7, &ls) == LES_OK);
  CHECK(ls.recall >= 0.0);
  CHECK(ls.recall <= 1.0);
  CHECK(les_context_stream_layer_stats(c, 8, &ls) == LES_ERR_INVALID_ARGUMENT);
  // The struct_size rule of every versioned struct: smaller than the first version or
  // larger than this library's is refused, naming the struct.
  st.struct_size = 8;
  CHECK(les_context_stream_stats(c, &st) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_last_error()).find("les_stream_stats.struct_size is 8") != std::string::npos);
  st.struct_size = sizeof st + 8;
  CHECK(les_context_stream_stats(c, &st) == LES_ERR_INVALID_ARGUMENT);
  ls.struct_size = 4;
  CHECK(les_context_stream_layer_stats(c, 0, &ls) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_stream_stats(c, nullptr) == LES_ERR_INVALID_ARGUMENT);

  // The budget can be lowered at run time; below the minimum it is refused, naming it.
  CHECK(les_context_set_expert_budget(c, 2u << 20) == LES_OK);
  CHECK(les_context_set_expert_budget(c, 1024) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_last_error()).find("minimum") != std::string::npos);
  st.struct_size = sizeof st;
  REQUIRE(les_context_stream_stats(c, &st) == LES_OK);
  CHECK(st.budget_bytes == (2u << 20));
  les_context_reset(c);
  Collect col2;
  REQUIRE(les_generate(c, "The castle stood upon a rock, and the", &gp, collect, &col2) == LES_OK);
  CHECK(col2.text == col.text);
  les_context_free(c);
  les_model_free(m);
}

TEST_CASE("C API: one model, a streaming and a resident context side by side give the same text",
          "[api][stream]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  les_model* m = nullptr;
  REQUIRE(les_model_load(path.c_str(), nullptr, &m) == LES_OK);
  const les_context_params cp = streaming_params();
  les_context* streamed = nullptr;
  les_context* resident = nullptr;
  REQUIRE(les_context_create(m, &cp, &streamed) == LES_OK);
  REQUIRE(les_context_create(m, nullptr, &resident) == LES_OK);
  les_model_free(m);  // the contexts keep the weights
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = 8;
  gp.ignore_eos = true;
  gp.sampler.temperature = 0.0f;
  Collect a, b;
  REQUIRE(les_generate(streamed, "The castle stood upon a rock, and the", &gp, collect, &a) == LES_OK);
  REQUIRE(les_generate(resident, "The castle stood upon a rock, and the", &gp, collect, &b) == LES_OK);
  CHECK(a.text == " sun was now heard, that the sun");
  CHECK(b.text == a.text);
  les_stream_stats st;
  st.struct_size = sizeof st;
  CHECK(les_context_stream_stats(streamed, &st) == LES_OK);
  CHECK(les_context_stream_stats(resident, &st) == LES_ERR_INVALID_ARGUMENT);
  les_context_free(streamed);
  les_context_free(resident);
}

TEST_CASE("C API: bad streaming settings are refused at context creation, naming the field", "[api][stream]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  les_model* m = nullptr;
  REQUIRE(les_model_load(path.c_str(), nullptr, &m) == LES_OK);
  auto refused = [&](const les_context_params& cp, const char* needle) {
    les_context* c = reinterpret_cast<les_context*>(&m);  // must be reset to NULL
    const les_status st = les_context_create(m, &cp, &c);
    CHECK(c == nullptr);
    const std::string msg = les_last_error();
    INFO(msg);
    CHECK(msg.find(needle) != std::string::npos);
    return st;
  };
  les_context_params cp = streaming_params();
  cp.expert_budget_bytes = 4096;  // below the minimum, which the message names
  CHECK(refused(cp, "minimum") == LES_ERR_INVALID_ARGUMENT);
  cp = streaming_params();
  cp.prefetch_candidates = 100;  // outside [k, 2k]
  CHECK(refused(cp, "[k, 2k]") == LES_ERR_INVALID_ARGUMENT);
  cp.prefetch_candidates = -2;
  CHECK(refused(cp, "prefetch_candidates") == LES_ERR_INVALID_ARGUMENT);
  cp = streaming_params();
  cp.io_backend = static_cast<les_io_backend>(42);
  CHECK(refused(cp, "io_backend 42") == LES_ERR_INVALID_ARGUMENT);
  cp = streaming_params();
  cp.eviction = static_cast<les_eviction_policy>(-3);
  CHECK(refused(cp, "eviction -3") == LES_ERR_INVALID_ARGUMENT);
  cp = streaming_params();
  cp.struct_size = sizeof cp + 4;  // a newer caller than this library
  CHECK(refused(cp, "les_context_params.struct_size") == LES_ERR_INVALID_ARGUMENT);
  les_model_free(m);
}

TEST_CASE("C API: streaming calls on a resident context are refused", "[api][stream]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded l;
  REQUIRE(load(path, l));
  les_stream_stats st;
  st.struct_size = sizeof st;
  CHECK(les_context_stream_stats(l.ctx, &st) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_last_error()).find("expert_budget_bytes") != std::string::npos);
  CHECK(les_context_set_expert_budget(l.ctx, 1u << 30) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_stream_stats(nullptr, &st) == LES_ERR_INVALID_ARGUMENT);
}

TEST_CASE("C API: a dense model with an expert budget has nothing to stream and runs resident", "[api][stream]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/llama-dense-Q4_K_M.gguf");
  Loaded l;
  REQUIRE(les_model_load(path.c_str(), nullptr, &l.model) == LES_OK);
  CHECK(les_model_n_expert(l.model) == 0);
  les_context_params cp = les_context_default_params();
  cp.expert_budget_bytes = 4u << 20;
  REQUIRE(les_context_create(l.model, &cp, &l.ctx) == LES_OK);
  les_token ids[16];
  int32_t n = 0;
  REQUIRE(les_tokenize(l.model, "Hello", 5, true, false, ids, 16, &n) == LES_OK);
  REQUIRE(n > 0);
  CHECK(les_context_decode(l.ctx, ids, n) == LES_OK);
  les_stream_stats st;
  st.struct_size = sizeof st;
  CHECK(les_context_stream_stats(l.ctx, &st) == LES_ERR_INVALID_ARGUMENT);
}

TEST_CASE("C API: a caller built against the first les_context_params gets resident experts", "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  les_model* m = nullptr;
  REQUIRE(les_model_load(path.c_str(), nullptr, &m) == LES_OK);
  les_context_params p = streaming_params();
  p.struct_size = static_cast<uint32_t>(offsetof(les_context_params, expert_budget_bytes));
  // The streaming fields lie beyond the old struct: they must be ignored (defaults used).
  les_context* c = nullptr;
  REQUIRE(les_context_create(m, &p, &c) == LES_OK);
  les_stream_stats st;
  st.struct_size = sizeof st;
  CHECK(les_context_stream_stats(c, &st) == LES_ERR_INVALID_ARGUMENT);  // resident: the default
  les_context_free(c);
  les_model_free(m);
}

TEST_CASE("C API: a 0.1 les_model_params that still held the streaming fields is refused, naming struct_size",
          "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  // 0.1's struct: these fields, then uint64 budget, int32 c, two int32 enums.
  les_model_params p = les_model_default_params();
  p.struct_size = static_cast<uint32_t>(sizeof(les_model_params) + sizeof(uint64_t) + 3 * sizeof(int32_t));
  les_model* m = nullptr;
  CHECK(les_model_load(path.c_str(), &p, &m) == LES_ERR_INVALID_ARGUMENT);
  CHECK(m == nullptr);
  CHECK(std::string(les_last_error()).find("les_model_params.struct_size") != std::string::npos);
  p.struct_size = sizeof p;
  REQUIRE(les_model_load(path.c_str(), &p, &m) == LES_OK);
  les_model_free(m);
}
