// Sessions through les.h: later les_generate calls continue the conversation
// (no BOS, the last delivered token committed) and give the tokens of one long
// generation; the tokens a context holds; the standalone sampler (seeds);
// parse_special; saving and restoring a context's state (same tokens after a
// restore as without one) and every refusal of a state that does not fit.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "les/les.h"
#include "support/fixtures.h"

namespace {

constexpr const char* kTrained = "trained/tiny-qwen3moe-F16.gguf";

struct Session {
  les_model* model = nullptr;
  les_context* ctx = nullptr;
  bool own_model = true;
  ~Session() {
    les_context_free(ctx);
    if (own_model) les_model_free(model);
  }
};

void open(const std::string& path, Session& s, int32_t n_ctx = 256, les_kv_type kv = LES_KV_F16) {
  if (s.model == nullptr) REQUIRE(les_model_load(path.c_str(), nullptr, &s.model) == LES_OK);
  les_context_params cp = les_context_default_params();
  cp.n_ctx = n_ctx;
  cp.n_threads = 2;
  cp.kv_type = kv;
  REQUIRE(les_context_create(s.model, &cp, &s.ctx) == LES_OK);
}

bool collect_ids(les_token tok, const char*, size_t, void* ud) {
  if (tok >= 0) static_cast<std::vector<les_token>*>(ud)->push_back(tok);
  return true;
}

std::vector<les_token> generate(les_context* ctx, const char* prompt, int32_t n, bool ignore_eos = true) {
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = n;
  gp.ignore_eos = ignore_eos;
  gp.sampler.temperature = 0.0f;
  std::vector<les_token> ids;
  REQUIRE(les_generate(ctx, prompt, &gp, collect_ids, &ids) == LES_OK);
  return ids;
}

// Greedy generation of n tokens after the prompt ids (given directly).
std::vector<les_token> generate_after(les_context* ctx, const les_token* ids, int32_t n_ids, int32_t n) {
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = n;
  gp.ignore_eos = true;
  gp.sampler.temperature = 0.0f;
  gp.prompt_tokens = ids;
  gp.n_prompt_tokens = n_ids;
  std::vector<les_token> out;
  REQUIRE(les_generate(ctx, nullptr, &gp, collect_ids, &out) == LES_OK);
  return out;
}

std::vector<les_token> tokenize(const les_model* m, const std::string& text, bool add_special) {
  std::vector<les_token> ids(text.size() + 8);
  int32_t n = 0;
  REQUIRE(les_tokenize(m, text.data(), text.size(), add_special, false, ids.data(), static_cast<int32_t>(ids.size()),
                       &n) == LES_OK);
  ids.resize(static_cast<size_t>(n));
  return ids;
}

std::vector<les_token> context_tokens(const les_context* ctx) {
  int32_t n = 0;
  les_context_tokens(ctx, nullptr, 0, &n);
  std::vector<les_token> ids(static_cast<size_t>(n));
  REQUIRE(les_context_tokens(ctx, ids.data(), n, &n) == LES_OK);
  return ids;
}

std::vector<uint8_t> save(const les_context* ctx) {
  size_t n = 0;
  REQUIRE(les_context_state_size(ctx, &n) == LES_OK);
  std::vector<uint8_t> buf(n);
  size_t w = 0;
  REQUIRE(les_context_state_save(ctx, buf.data(), buf.size(), &w) == LES_OK);
  CHECK(w == n);
  return buf;
}

}  // namespace

TEST_CASE("session: a second generate continues the first, as one long generation", "[api][session]") {
  LES_REQUIRE_FIXTURE(path, kTrained);
  Session a;
  open(path, a);
  const std::string p1 = "The castle stood upon a rock, and the", p2 = " Emily said that";
  const auto g1 = generate(a.ctx, p1.c_str(), 8);
  const auto t1 = tokenize(a.model, p1, true);
  CHECK(les_context_n_past(a.ctx) == static_cast<int32_t>(t1.size() + g1.size()));  // the last token is committed
  std::vector<les_token> expect = t1;
  expect.insert(expect.end(), g1.begin(), g1.end());
  CHECK(context_tokens(a.ctx) == expect);
  const auto g2 = generate(a.ctx, p2.c_str(), 8);
  les_generate_stats st{};
  st.struct_size = sizeof st;
  REQUIRE(les_context_generate_stats(a.ctx, &st) == LES_OK);
  const auto t2 = tokenize(a.model, p2, false);  // no BOS on a continuation
  CHECK(st.n_prompt_tokens == static_cast<int32_t>(t2.size()));

  // One generation over the concatenation (prompt ids given directly).
  Session b;
  open(path, b);
  std::vector<les_token> all = expect;
  all.insert(all.end(), t2.begin(), t2.end());
  CHECK(generate_after(b.ctx, all.data(), static_cast<int32_t>(all.size()), 8) == g2);
  CHECK(context_tokens(b.ctx) == context_tokens(a.ctx));

  // generate(P, 8) + generate("", 8) == generate(P, 16).
  Session c, d;
  open(path, c);
  open(path, d);
  auto h = generate(c.ctx, p1.c_str(), 8);
  const auto h2 = generate(c.ctx, "", 8);
  h.insert(h.end(), h2.begin(), h2.end());
  CHECK(h == generate(d.ctx, p1.c_str(), 16));
  // A fresh context cannot continue from nothing when the vocabulary adds no BOS: tested in core.
}

TEST_CASE("session: trim and reset account for the pending token", "[api][session]") {
  LES_REQUIRE_FIXTURE(path, kTrained);
  Session a;
  open(path, a);
  generate(a.ctx, "It is a truth", 4);
  const int32_t n = les_context_n_past(a.ctx);
  CHECK(les_context_trim(a.ctx, n + 1) == LES_ERR_INVALID_ARGUMENT);
  REQUIRE(les_context_trim(a.ctx, n - 1) == LES_OK);  // drops only the pending token
  CHECK(les_context_n_past(a.ctx) == n - 1);
  CHECK(les_context_logits(a.ctx) != nullptr);  // still those of position n - 2
  REQUIRE(les_context_trim(a.ctx, 2) == LES_OK);
  CHECK(les_context_logits(a.ctx) == nullptr);
  CHECK(context_tokens(a.ctx).size() == 2);
  REQUIRE(les_context_reset(a.ctx) == LES_OK);
  CHECK(les_context_n_past(a.ctx) == 0);
  CHECK(context_tokens(a.ctx).empty());
}

TEST_CASE("session: parse_special turns control-token texts into tokens", "[api][session]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-F16.gguf");
  Session a;
  open(path, a);
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = 1;
  gp.sampler.temperature = 0.0f;
  const char* prompt = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
  les_generate_stats st{};
  st.struct_size = sizeof st;
  REQUIRE(les_generate(a.ctx, prompt, &gp, nullptr, nullptr) == LES_OK);
  REQUIRE(les_context_generate_stats(a.ctx, &st) == LES_OK);
  const int32_t plain = st.n_prompt_tokens;
  gp.parse_special = true;
  les_context_reset(a.ctx);
  REQUIRE(les_generate(a.ctx, prompt, &gp, nullptr, nullptr) == LES_OK);
  REQUIRE(les_context_generate_stats(a.ctx, &st) == LES_OK);
  CHECK(st.n_prompt_tokens < plain);
  CHECK(context_tokens(a.ctx)[0] == 4094);  // <|im_start|>
  // A caller compiled before parse_special existed (struct_size ends at n_stop)
  // has padding there: it is not read.
  les_context_reset(a.ctx);
  gp.struct_size = offsetof(les_generate_params, prompt_tokens);
  REQUIRE(les_generate(a.ctx, prompt, &gp, nullptr, nullptr) == LES_OK);
  REQUIRE(les_context_generate_stats(a.ctx, &st) == LES_OK);
  CHECK(st.n_prompt_tokens == plain);
  // prompt_tokens with a non-empty prompt, or ids out of range, are refused.
  gp = les_generate_default_params();
  const les_token bad[] = {1, 999999};
  gp.prompt_tokens = bad;
  gp.n_prompt_tokens = 2;
  CHECK(les_generate(a.ctx, "x", &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_generate(a.ctx, nullptr, &gp, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_context_last_error(a.ctx)).find("999999") != std::string::npos);
}

TEST_CASE("sampler: standalone use, seeds reproducible, default seed random and reported", "[api][sampler]") {
  LES_REQUIRE_FIXTURE(path, kTrained);
  Session a;
  open(path, a);
  const auto prompt = tokenize(a.model, "The castle stood upon a rock, and the", true);
  REQUIRE(les_context_decode(a.ctx, prompt.data(), static_cast<int32_t>(prompt.size())) == LES_OK);
  const float* logits = les_context_logits(a.ctx);
  const int32_t n_vocab = les_model_n_vocab(a.model);

  les_sampler_params sp = les_sampler_default_params();
  CHECK(sp.seed == LES_SEED_RANDOM);
  sp.seed = 42;
  sp.temperature = 1.5f;
  sp.top_k = 0;
  sp.top_p = 1.0f;
  sp.min_p = 0.0f;
  les_sampler *s1 = nullptr, *s2 = nullptr, *r1 = nullptr, *r2 = nullptr;
  REQUIRE(les_sampler_create(&sp, &s1) == LES_OK);
  REQUIRE(les_sampler_create(&sp, &s2) == LES_OK);
  CHECK(les_sampler_seed(s1) == 42);
  std::vector<les_token> x1, x2;
  for (int i = 0; i < 16; ++i) {
    les_token t1 = -1, t2 = -1;
    REQUIRE(les_sampler_sample(s1, logits, n_vocab, &t1) == LES_OK);
    REQUIRE(les_sampler_sample(s2, logits, n_vocab, &t2) == LES_OK);
    x1.push_back(t1);
    x2.push_back(t2);
    CHECK(les_sampler_accept(s1, t1) == LES_OK);
    CHECK(les_sampler_accept(s2, t2) == LES_OK);
  }
  CHECK(x1 == x2);
  les_sampler_reset(s1);
  les_token again = -1;
  REQUIRE(les_sampler_sample(s1, logits, n_vocab, &again) == LES_OK);
  CHECK(again == x1[0]);

  sp.seed = LES_SEED_RANDOM;
  REQUIRE(les_sampler_create(&sp, &r1) == LES_OK);
  REQUIRE(les_sampler_create(&sp, &r2) == LES_OK);
  CHECK(les_sampler_seed(r1) != LES_SEED_RANDOM);
  CHECK(les_sampler_seed(r1) != les_sampler_seed(r2));  // 2^-64 to collide

  // Bad use returns a status.
  les_token t = 0;
  CHECK(les_sampler_sample(nullptr, logits, n_vocab, &t) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_sampler_sample(s1, logits, 0, &t) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_sampler_accept(s1, -3) == LES_ERR_INVALID_ARGUMENT);
  les_sampler* bad = reinterpret_cast<les_sampler*>(0x1);
  sp.top_p = 0.0f;
  CHECK(les_sampler_create(&sp, &bad) == LES_ERR_INVALID_ARGUMENT);
  CHECK(bad == nullptr);
  CHECK(std::string(les_last_error()).find("top_p") != std::string::npos);
  for (les_sampler* s : {s1, s2, r1, r2}) les_sampler_free(s);
  les_sampler_free(nullptr);

  // les_generate reports the seed it drew.
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = 2;
  REQUIRE(les_generate(a.ctx, "", &gp, nullptr, nullptr) == LES_OK);
  les_generate_stats st{};
  st.struct_size = sizeof st;
  REQUIRE(les_context_generate_stats(a.ctx, &st) == LES_OK);
  CHECK(st.seed != LES_SEED_RANDOM);
  gp.sampler.seed = 7;
  REQUIRE(les_generate(a.ctx, "", &gp, nullptr, nullptr) == LES_OK);
  REQUIRE(les_context_generate_stats(a.ctx, &st) == LES_OK);
  CHECK(st.seed == 7);
}

TEST_CASE("session: after a trim, les_generate(ctx, \"\") continues from the last kept token", "[api][session]") {
  LES_REQUIRE_FIXTURE(path, kTrained);
  Session a, b, c, d;
  open(path, a);
  for (Session* s : {&b, &c, &d}) {
    s->model = a.model;
    s->own_model = false;
    open(path, *s);
  }
  generate(a.ctx, "The castle stood upon a rock, and the", 12);
  const auto held = context_tokens(a.ctx);
  const int32_t keep = static_cast<int32_t>(held.size()) - 5;  // drop the last 5, logits of the kept end gone
  REQUIRE(les_context_trim(a.ctx, keep) == LES_OK);
  CHECK(les_context_n_past(a.ctx) == keep);
  CHECK(context_tokens(a.ctx) == std::vector<les_token>(held.begin(), held.begin() + keep));
  CHECK(les_context_logits(a.ctx) == nullptr);  // the last kept token is pending, evaluated by the next decode
  const auto state = save(a.ctx);               // a trimmed context's state continues too (below)
  const auto cont = generate(a.ctx, "", 6);

  // The same as one generation over the kept tokens.
  CHECK(cont == generate_after(b.ctx, held.data(), keep, 6));
  CHECK(context_tokens(a.ctx) == context_tokens(b.ctx));

  // Restored from the trimmed state: the same continuation.
  REQUIRE(les_context_state_load(c.ctx, state.data(), state.size()) == LES_OK);
  CHECK(generate(c.ctx, "", 6) == cont);
  // les_context_decode after a trim evaluates the pending token first: its logits equal b's.
  REQUIRE(les_context_trim(c.ctx, keep) == LES_OK);
  const les_token next = held[static_cast<size_t>(keep)];
  REQUIRE(les_context_decode(c.ctx, &next, 1) == LES_OK);
  CHECK(les_context_n_past(c.ctx) == keep + 1);
  // Trimming everything leaves nothing pending.
  REQUIRE(les_context_trim(c.ctx, 0) == LES_OK);
  CHECK(les_context_n_past(c.ctx) == 0);

  // A state saved after les_context_decode holds no logits and no pending token: generate("")
  // says what to do, and les_context_trim(ctx, n_past) makes the last token pending again.
  REQUIRE(les_context_decode(c.ctx, held.data(), keep) == LES_OK);
  const auto decoded = save(c.ctx);
  REQUIRE(les_context_state_load(d.ctx, decoded.data(), decoded.size()) == LES_OK);
  les_generate_params gq = les_generate_default_params();
  gq.n_predict = 6;
  CHECK(les_generate(d.ctx, "", &gq, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_context_last_error(d.ctx)).find("les_context_trim(ctx, les_context_n_past(ctx))") !=
        std::string::npos);
  REQUIRE(les_context_trim(d.ctx, les_context_n_past(d.ctx)) == LES_OK);
  CHECK(les_context_n_past(d.ctx) == keep);
  CHECK(generate(d.ctx, "", 6) == cont);
}

TEST_CASE("state: save, restore into a fresh context, continue = the same tokens", "[api][session]") {
  LES_REQUIRE_FIXTURE(path, kTrained);
  Session a;
  open(path, a);
  generate(a.ctx, "The castle stood upon a rock, and the", 6);
  const auto state = save(a.ctx);
  const auto held = context_tokens(a.ctx);
  const auto cont = generate(a.ctx, " Then", 10);

  Session b;
  b.model = a.model;
  b.own_model = false;
  open(path, b);
  REQUIRE(les_context_state_load(b.ctx, state.data(), state.size()) == LES_OK);
  CHECK(context_tokens(b.ctx) == held);
  CHECK(les_context_logits(b.ctx) == nullptr);
  CHECK(generate(b.ctx, " Then", 10) == cont);

  // Through a file, into a context of another load of the same file.
  const std::string file = les::test::temp_dir() + "/session.lesstate";
  Session c;
  open(path, c);
  REQUIRE(les_context_state_load(c.ctx, state.data(), state.size()) == LES_OK);
  REQUIRE(les_context_state_save_file(c.ctx, file.c_str()) == LES_OK);
  Session d;
  open(path, d);
  REQUIRE(les_context_state_load_file(d.ctx, file.c_str()) == LES_OK);
  CHECK(generate(d.ctx, " Then", 10) == cont);
  // Restoring replaces what the context held.
  REQUIRE(les_context_state_load(d.ctx, state.data(), state.size()) == LES_OK);
  CHECK(context_tokens(d.ctx) == held);
}

TEST_CASE("state: mismatches and damage are refused by name, the context unchanged", "[api][session]") {
  LES_REQUIRE_FIXTURE(path, kTrained);
  LES_REQUIRE_FIXTURE(other, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  Session a;
  open(path, a);
  generate(a.ctx, "It is a truth universally acknowledged", 4);
  const auto state = save(a.ctx);

  Session victim;
  victim.model = a.model;
  victim.own_model = false;
  open(path, victim, 256);
  generate(victim.ctx, "Once", 2);
  const auto before = context_tokens(victim.ctx);
  auto refused = [&](const std::vector<uint8_t>& bytes, les_status want, const char* mention) {
    INFO(mention);
    CHECK(les_context_state_load(victim.ctx, bytes.data(), bytes.size()) == want);
    CHECK(std::string(les_context_last_error(victim.ctx)).find(mention) != std::string::npos);
    CHECK(context_tokens(victim.ctx) == before);
  };
  auto corrupt = state;
  corrupt[corrupt.size() / 2] ^= 0x40;
  refused(corrupt, LES_ERR_FORMAT, "checksum");
  refused(std::vector<uint8_t>(state.begin(), state.end() - 9), LES_ERR_FORMAT, "");
  refused(std::vector<uint8_t>(100, 7), LES_ERR_FORMAT, "LESSTATE");
  const uint8_t none[1] = {0};
  CHECK(les_context_state_load(victim.ctx, none, 0) == LES_ERR_FORMAT);  // 0 bytes (not NULL): no LESSTATE magic
  auto newer = state;
  newer[8] = 9;  // format version 9, the checksum not updated: corruption (or a newer format)
  refused(newer, LES_ERR_FORMAT, "format version 9; this LES reads version ");
  refused(newer, LES_ERR_FORMAT, ": corrupt, or saved by a newer LES");
  // With its checksum (FNV-1a 64 of all but the last 8 bytes) a newer version is unsupported.
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i + 8 < newer.size(); ++i) h = (h ^ newer[i]) * 0x100000001b3ull;
  std::memcpy(newer.data() + newer.size() - 8, &h, 8);
  refused(newer, LES_ERR_UNSUPPORTED, "version 9");
  refused(newer, LES_ERR_UNSUPPORTED, "saved by a newer LES");

  // Another model (same shapes, other weights and types).
  Session q;
  open(other, q);
  CHECK(les_context_state_load(q.ctx, state.data(), state.size()) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_context_last_error(q.ctx)).find("another model") != std::string::npos);
  // Another KV cache type.
  Session q8;
  q8.model = a.model;
  q8.own_model = false;
  open(path, q8, 256, LES_KV_Q8_0);
  CHECK(les_context_state_load(q8.ctx, state.data(), state.size()) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_context_last_error(q8.ctx)).find("Q8_0") != std::string::npos);
  // Too small a context.
  Session small;
  small.model = a.model;
  small.own_model = false;
  open(path, small, 8);
  CHECK(les_context_state_load(small.ctx, state.data(), state.size()) == LES_ERR_CONTEXT_FULL);
  CHECK(std::string(les_context_last_error(small.ctx)).find("n_ctx 8") != std::string::npos);
  // Files and buffers.
  CHECK(les_context_state_load_file(victim.ctx, "/nonexistent/state") == LES_ERR_IO);
  CHECK(std::string(les_context_last_error(victim.ctx)).find("/nonexistent/state") != std::string::npos);
  CHECK(les_context_state_save_file(a.ctx, "/nonexistent/dir/state") == LES_ERR_IO);
  // The failure is the context's last error too (apps print les_context_last_error(ctx)).
  CHECK(std::string(les_context_last_error(a.ctx)).find("/nonexistent/dir/state") != std::string::npos);
  size_t n = 0;
  CHECK(les_context_state_save(a.ctx, nullptr, 0, &n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(n == state.size());
  CHECK(std::string(les_context_last_error(a.ctx)).find("buf_size is 0") != std::string::npos);
  CHECK(les_context_state_save(a.ctx, nullptr, 0, nullptr) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_state_save(nullptr, nullptr, 0, &n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_state_save_file(nullptr, "/tmp/x") == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_state_save_file(a.ctx, nullptr) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_context_last_error(a.ctx)).find("path is NULL") != std::string::npos);
  CHECK(les_context_state_load(nullptr, state.data(), state.size()) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_state_load(victim.ctx, nullptr, 5) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_state_load(victim.ctx, nullptr, 0) == LES_ERR_INVALID_ARGUMENT);  // as the header says
  CHECK(std::string(les_context_last_error(victim.ctx)).find("buf is NULL") != std::string::npos);
  int32_t nt = 0;
  CHECK(les_context_tokens(victim.ctx, nullptr, 0, &nt) == LES_ERR_INVALID_ARGUMENT);
  CHECK(nt == static_cast<int32_t>(before.size()));
  // The victim still generates.
  CHECK(generate(victim.ctx, " and", 2).size() == 2);
}

TEST_CASE("state: a hybrid model's recurrent state is saved and restored too", "[api][session]") {
  // qwen35moe: Gated DeltaNet layers (conv + delta-rule state) between
  // attention layers; the state file carries both the K/V rows and the
  // recurrent state, and a restored context continues with the same tokens.
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen35moe-F16.gguf");
  LES_REQUIRE_FIXTURE(plain, kTrained);
  Session a;
  open(path, a);
  generate(a.ctx, "The castle stood upon a rock, and the", 6);
  const auto state = save(a.ctx);
  const auto held = context_tokens(a.ctx);
  const auto cont = generate(a.ctx, " Then", 10);

  Session b;
  b.model = a.model;
  b.own_model = false;
  open(path, b);
  // b's own recurrent state differs from a's: a restore that left it in place
  // (or zeroed it) would continue differently.
  generate(b.ctx, "Something else entirely", 3);
  REQUIRE(les_context_state_load(b.ctx, state.data(), state.size()) == LES_OK);
  CHECK(context_tokens(b.ctx) == held);
  CHECK(generate(b.ctx, " Then", 10) == cont);

  // The state of an attention-only model is refused (another model), and the
  // context is unchanged.
  const auto before = context_tokens(b.ctx);
  Session q;
  open(plain, q);
  generate(q.ctx, "It is", 2);
  const auto other = save(q.ctx);
  CHECK(les_context_state_load(b.ctx, other.data(), other.size()) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_context_last_error(b.ctx)).find("another model") != std::string::npos);
  CHECK(context_tokens(b.ctx) == before);

  // Trimming back into the middle of a recurrent sequence is refused by name
  // (no checkpoint reaches it), and the context is unchanged.
  const int32_t n = les_context_n_past(b.ctx);
  CHECK(les_context_trim(b.ctx, 3) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_n_past(b.ctx) == n);
}
