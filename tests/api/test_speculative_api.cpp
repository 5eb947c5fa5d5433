// Speculative decoding through the C ABI (les_generate_params lookup_ngram /
// draft_model / draft_max / draft_min, the speculative fields of
// les_generate_stats, les_model_check_draft) on the trained fixture: greedy
// output equals plain greedy decoding with either drafter (byte-aware length
// and forced drafts), the statistics add up, a 0.2-sized params struct (which
// ends before the settings) decodes plainly whatever bytes follow it, a
// 0.2-sized stats struct gets only its fields, and bad settings (ranges, two
// drafters, another vocabulary) are refused with a message naming the field
// while the context stays usable. A draft model freed after use leaves the
// context working.
#include <catch2/catch.hpp>

#include <climits>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "les/les.h"
#include "support/fixtures.h"

namespace {

const char* kPrompt = "It is a truth universally acknowledged, that a single man";
constexpr int32_t kN = 40;

les_model* load_model(const std::string& path) {
  les_model_params mp = les_model_default_params();
  mp.n_threads = 2;
  les_model* m = nullptr;
  if (les_model_load(path.c_str(), &mp, &m) != LES_OK) return nullptr;
  return m;
}

les_context* make_context(les_model* m) {
  les_context_params cp = les_context_default_params();
  cp.n_ctx = 256;
  les_context* c = nullptr;
  if (les_context_create(m, &cp, &c) != LES_OK) return nullptr;
  return c;
}

bool append(les_token, const char* piece, size_t len, void* ud) {
  static_cast<std::string*>(ud)->append(piece, len);
  return true;
}

les_generate_params greedy() {
  les_generate_params p = les_generate_default_params();
  p.n_predict = kN;
  p.ignore_eos = true;
  p.sampler.temperature = 0.0f;
  return p;
}

// A fresh context over `m`: the text les_generate gives with `p`, and the stats.
std::string run(les_model* m, const les_generate_params& p, les_generate_stats* st = nullptr) {
  les_context* c = make_context(m);
  REQUIRE(c != nullptr);
  std::string text;
  const les_status s = les_generate(c, kPrompt, &p, append, &text);
  INFO(les_context_last_error(c));
  CHECK(s == LES_OK);
  if (st != nullptr) {
    std::memset(st, 0, sizeof *st);
    st->struct_size = sizeof *st;
    CHECK(les_context_generate_stats(c, st) == LES_OK);
  }
  les_context_free(c);
  return text;
}

}  // namespace

TEST_CASE("C API speculative: defaults, and greedy output equals plain greedy with either drafter", "[api]") {
  LES_REQUIRE_FIXTURE(target_path, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(draft_path, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const les_generate_params d = les_generate_default_params();
  CHECK(d.lookup_ngram == 0);
  CHECK(d.draft_model == nullptr);
  CHECK(d.draft_max == 8);
  CHECK(d.draft_min == 0);

  les_model* target = load_model(target_path);
  les_model* draft = load_model(draft_path);
  REQUIRE(target != nullptr);
  REQUIRE(draft != nullptr);
  CHECK(les_model_check_draft(target, draft) == LES_OK);

  les_generate_stats plain_st;
  const std::string plain = run(target, greedy(), &plain_st);
  REQUIRE(plain.size() > 20);
  CHECK(plain_st.n_target_passes == 0);
  CHECK(plain_st.n_drafted == 0);

  struct Case {
    const char* name;
    int32_t lookup;
    bool use_draft;
    int32_t draft_min;
  };
  for (const Case& c : {Case{"lookup 3, byte-aware length", 3, false, 0}, Case{"lookup 3, forced", 3, false, 1},
                        Case{"draft model, byte-aware length", 0, true, 0}, Case{"draft model, forced 4", 0, true, 4}}) {
    INFO(c.name);
    les_generate_params p = greedy();
    p.lookup_ngram = c.lookup;
    p.draft_model = c.use_draft ? draft : nullptr;
    p.draft_max = 4;
    p.draft_min = c.draft_min;
    les_generate_stats st;
    CHECK(run(target, p, &st) == plain);
    CHECK(st.n_generated == plain_st.n_generated);
    // Every generated token but the first (the prefill's) came out of a target pass.
    CHECK(st.n_pass_tokens == st.n_decoded);
    CHECK(st.n_target_passes > 0);
    CHECK(st.n_pass_tokens == st.n_target_passes + st.n_draft_accepted);
    CHECK(st.n_draft_accepted <= st.n_draft_verified);
    CHECK(st.n_draft_verified <= st.n_drafted);
    CHECK(st.n_verify_passes <= st.n_target_passes);
    CHECK(st.union_experts > 0);
    CHECK(st.union_bytes > 0);
    CHECK(st.expert_bytes_read == 0);  // resident
    if (c.draft_min > 0) {
      CHECK(st.n_verify_passes > 0);
      if (c.use_draft) CHECK(st.n_draft_accepted * 2 > st.n_draft_verified);  // the Q4_K_M copy agrees mostly
    }
    if (c.use_draft) CHECK(st.draft_seconds > 0);
  }
  les_model_free(draft);
  les_model_free(target);
}

TEST_CASE("C API speculative: a context keeps its drafter across calls; a freed draft model stays safe", "[api]") {
  LES_REQUIRE_FIXTURE(target_path, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(draft_path, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  les_model* target = load_model(target_path);
  REQUIRE(target != nullptr);
  // Two calls of 20 tokens equal one of 40 (a session), plain and speculative.
  les_generate_params half = greedy();
  half.n_predict = kN / 2;
  les_context* plain_ctx = make_context(target);
  REQUIRE(plain_ctx != nullptr);
  std::string plain;
  REQUIRE(les_generate(plain_ctx, kPrompt, &half, append, &plain) == LES_OK);
  REQUIRE(les_generate(plain_ctx, "", &half, append, &plain) == LES_OK);
  les_context_free(plain_ctx);

  les_model* draft = load_model(draft_path);
  REQUIRE(draft != nullptr);
  les_context* c = make_context(target);
  REQUIRE(c != nullptr);
  les_generate_params p = half;
  p.draft_model = draft;
  p.draft_min = 2;
  std::string text;
  REQUIRE(les_generate(c, kPrompt, &p, append, &text) == LES_OK);
  les_model_free(draft);  // the context's drafter keeps the weights
  p.draft_model = nullptr;
  p.lookup_ngram = 2;  // another drafter for the second call
  REQUIRE(les_generate(c, "", &p, append, &text) == LES_OK);
  CHECK(text == plain);
  les_generate_stats st{};
  st.struct_size = sizeof st;
  REQUIRE(les_context_generate_stats(c, &st) == LES_OK);
  CHECK(st.n_target_passes > 0);
  // Back to plain decoding: the speculative statistics are zero again.
  REQUIRE(les_generate(c, "", &half, append, &text) == LES_OK);
  REQUIRE(les_context_generate_stats(c, &st) == LES_OK);
  CHECK(st.n_target_passes == 0);
  CHECK(st.union_bytes == 0);
  les_context_free(c);
  les_model_free(target);
}

TEST_CASE("C API speculative: 0.2-sized structs decode plainly and get only their fields", "[api]") {
  LES_REQUIRE_FIXTURE(target_path, "trained/tiny-qwen3moe-F16.gguf");
  les_model* target = load_model(target_path);
  REQUIRE(target != nullptr);
  const std::string plain = run(target, greedy());
  // A 0.2 caller's struct ends at n_prompt_tokens; what follows in its memory
  // is not ours to read (here: settings that would be refused).
  les_generate_params p = greedy();
  p.struct_size = static_cast<uint32_t>(offsetof(les_generate_params, lookup_ngram));
  p.lookup_ngram = 99;
  p.draft_max = -5;
  les_context* c = make_context(target);
  REQUIRE(c != nullptr);
  std::string text;
  CHECK(les_generate(c, kPrompt, &p, append, &text) == LES_OK);
  CHECK(text == plain);
  les_generate_stats st;
  std::memset(&st, 0xAB, sizeof st);
  st.struct_size = static_cast<uint32_t>(offsetof(les_generate_stats, n_target_passes));
  REQUIRE(les_context_generate_stats(c, &st) == LES_OK);
  CHECK(st.struct_size == offsetof(les_generate_stats, n_target_passes));
  CHECK(st.n_generated == kN);
  CHECK(st.n_target_passes == static_cast<int32_t>(0xABABABAB));  // untouched past the caller's size
  les_context_free(c);
  les_model_free(target);
}

TEST_CASE("C API speculative: bad settings are refused naming the field; the context stays usable", "[api]") {
  LES_REQUIRE_FIXTURE(target_path, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(other_path, "synthetic/qwen3moe-Q4_K_M.gguf");
  LES_REQUIRE_FIXTURE(draft_path, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  les_model* target = load_model(target_path);
  les_model* other = load_model(other_path);
  les_model* draft = load_model(draft_path);
  REQUIRE(target != nullptr);
  REQUIRE(other != nullptr);
  REQUIRE(draft != nullptr);
  const std::string plain = run(target, greedy());
  les_context* c = make_context(target);
  REQUIRE(c != nullptr);

  // Another vocabulary: les_model_check_draft and les_generate name the difference.
  CHECK(les_model_check_draft(target, other) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_last_error()).find("draft model") != std::string::npos);
  CHECK(les_model_check_draft(nullptr, draft) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_model_check_draft(target, nullptr) == LES_ERR_INVALID_ARGUMENT);

  struct Case {
    const char* name;
    int32_t lookup;
    les_model* draft;
    int32_t draft_max, draft_min;
    const char* mentions;
  };
  for (const Case& k : {Case{"lookup 17", 17, nullptr, 8, 0, "lookup_ngram"},
                        Case{"lookup -1", -1, nullptr, 8, 0, "lookup_ngram"},
                        Case{"draft_max 0", 3, nullptr, 0, 0, "draft_max"},
                        Case{"draft_max 65", 3, nullptr, 65, 0, "draft_max"},
                        Case{"draft_max INT_MAX", 3, nullptr, INT_MAX, 0, "draft_max"},
                        Case{"draft_max INT_MIN", 0, nullptr, INT_MIN, 0, "draft_max"},
                        Case{"draft_min > draft_max", 3, nullptr, 4, 5, "draft_min"},
                        Case{"draft_min -1", 3, nullptr, 4, -1, "draft_min"},
                        Case{"two drafters", 3, draft, 8, 0, "one drafter"},
                        Case{"another vocabulary", 0, other, 8, 0, "vocabulary"}}) {
    INFO(k.name);
    les_generate_params p = greedy();
    p.lookup_ngram = k.lookup;
    p.draft_model = k.draft;
    p.draft_max = k.draft_max;
    p.draft_min = k.draft_min;
    std::string text;
    CHECK(les_generate(c, kPrompt, &p, append, &text) == LES_ERR_INVALID_ARGUMENT);
    CHECK(std::string(les_context_last_error(c)).find(k.mentions) != std::string::npos);
    CHECK(text.empty());
    CHECK(les_context_n_past(c) == 0);
  }
  std::string text;
  const les_generate_params g = greedy();
  CHECK(les_generate(c, kPrompt, &g, append, &text) == LES_OK);
  CHECK(text == plain);
  les_context_free(c);
  les_model_free(draft);
  les_model_free(other);
  les_model_free(target);
}
