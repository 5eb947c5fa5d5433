// The MTP draft head through the C ABI (les_generate_params.mtp) on the
// synthetic qwen35moe file with an MTP block: greedy output equals plain
// greedy decoding (forced drafts and the byte-aware length), the head drafts
// (verify passes, accepted drafts counted), a second call continues the
// conversation with the same drafter; a model without an MTP block is
// LES_ERR_UNSUPPORTED naming the model, mtp with another drafter is
// LES_ERR_INVALID_ARGUMENT, and a params struct that ends before mtp decodes
// plainly whatever byte follows it. The context stays usable after each
// refusal.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "les/les.h"
#include "support/fixtures.h"

namespace {

const char* kPrompt = "The door of the room was open, and she went in. The door of the room";
const char* kMore = " and the window";
constexpr int32_t kN = 24;

les_model* load_model(const std::string& path) {
  les_model_params mp = les_model_default_params();
  mp.n_threads = 2;
  les_model* m = nullptr;
  if (les_model_load(path.c_str(), &mp, &m) != LES_OK) return nullptr;
  return m;
}

les_context* make_context(les_model* m) {
  les_context_params cp = les_context_default_params();
  cp.n_ctx = 160;
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

les_generate_stats stats_of(les_context* c) {
  les_generate_stats st;
  std::memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  CHECK(les_context_generate_stats(c, &st) == LES_OK);
  return st;
}

// Two turns on a fresh context (kPrompt, then kMore): the texts.
std::vector<std::string> two_turns(les_model* m, const les_generate_params& p, les_generate_stats* first = nullptr,
                                   les_generate_stats* second = nullptr) {
  les_context* c = make_context(m);
  REQUIRE(c != nullptr);
  std::vector<std::string> out(2);
  les_status s = les_generate(c, kPrompt, &p, append, &out[0]);
  INFO(les_context_last_error(c));
  CHECK(s == LES_OK);
  if (first != nullptr) *first = stats_of(c);
  s = les_generate(c, kMore, &p, append, &out[1]);
  INFO(les_context_last_error(c));
  CHECK(s == LES_OK);
  if (second != nullptr) *second = stats_of(c);
  les_context_free(c);
  return out;
}

}  // namespace

TEST_CASE("C API MTP: greedy output equals plain greedy, the head drafts", "[api][mtp]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen35moe-mtp-F16.gguf");
  CHECK_FALSE(les_generate_default_params().mtp);
  les_model* m = load_model(path);
  REQUIRE(m != nullptr);
  const std::vector<std::string> plain = two_turns(m, greedy());
  REQUIRE(plain[0].size() > 10);
  for (int32_t draft_min : {3, 0}) {
    INFO("draft_min " << draft_min);
    les_generate_params p = greedy();
    p.mtp = true;
    p.draft_max = 3;
    p.draft_min = draft_min;
    les_generate_stats st, st2;
    CHECK(two_turns(m, p, &st, &st2) == plain);
    CHECK(st.n_target_passes > 0);
    CHECK(st.n_pass_tokens == st.n_target_passes + st.n_draft_accepted);
    if (draft_min > 0) {
      CHECK(st.n_verify_passes > 0);
      CHECK(st.n_drafted > 0);
      CHECK(st.draft_seconds > 0);
      // The head followed into the second turn (the first one may end with
      // the target trimmed behind the head: a stop inside a verified run).
      CHECK(st2.n_verify_passes > 0);
    }
  }
  les_model_free(m);
}

TEST_CASE("C API MTP: no MTP block, two drafters and an old struct size", "[api][mtp]") {
  LES_REQUIRE_FIXTURE(mtp_path, "synthetic/qwen35moe-mtp-F16.gguf");
  LES_REQUIRE_FIXTURE(plain_path, "synthetic/qwen35moe-F16.gguf");
  les_model* no_head = load_model(plain_path);
  les_model* with_head = load_model(mtp_path);
  REQUIRE(no_head != nullptr);
  REQUIRE(with_head != nullptr);
  {
    les_context* c = make_context(no_head);
    REQUIRE(c != nullptr);
    les_generate_params p = greedy();
    p.mtp = true;
    std::string text;
    CHECK(les_generate(c, kPrompt, &p, append, &text) == LES_ERR_UNSUPPORTED);
    const std::string err = les_context_last_error(c);
    INFO(err);
    CHECK(err.find("mtp") != std::string::npos);
    CHECK(err.find("qwen35moe") != std::string::npos);  // the model, by its description
    CHECK(err.find("no MTP") != std::string::npos);
    CHECK(text.empty());
    CHECK(les_context_n_past(c) == 0);
    const les_generate_params g = greedy();
    CHECK(les_generate(c, kPrompt, &g, append, &text) == LES_OK);  // still usable
    CHECK_FALSE(text.empty());
    les_context_free(c);
  }
  const std::vector<std::string> plain = two_turns(with_head, greedy());
  les_context* c = make_context(with_head);
  REQUIRE(c != nullptr);
  les_generate_params p = greedy();
  p.mtp = true;
  p.lookup_ngram = 2;
  std::string text;
  CHECK(les_generate(c, kPrompt, &p, append, &text) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_context_last_error(c)).find("one drafter") != std::string::npos);
  CHECK(les_context_n_past(c) == 0);
  // A caller built before mtp: the byte after its struct is not read.
  les_generate_params old = greedy();
  old.struct_size = static_cast<uint32_t>(offsetof(les_generate_params, mtp));
  old.mtp = true;
  CHECK(les_generate(c, kPrompt, &old, append, &text) == LES_OK);
  CHECK(text == plain[0]);
  CHECK(stats_of(c).n_target_passes == 0);  // no drafter
  les_context_free(c);
  les_model_free(with_head);
  les_model_free(no_head);
}
