// Issue 37's check of the built-in families: each family rendered on a
// multi-turn conversation with a system message (conversations.json's
// system_multi, with the generation prompt), compared with what Jinja2
// renders from the real template of a model of that family
// (tests/core/chat/jinja/expected, written by render_reference.py). A model
// with a template is rendered from that template itself (test_jinja_templates);
// the families are the fallback for files without one and what a name selects,
// so where a family is not byte-identical to its models' templates the test
// records how (the table in tests/core/chat/jinja/README.md).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/chat/chat_template.h"
#include "support/jinja_case.h"

namespace {

struct Pair {
  const char* family;
  const char* model_template;
  bool identical;
};

// The families and the real templates of their models in tests/core/chat/jinja/templates.
const Pair kPairs[] = {
    {"chatml", "Qwen-Qwen2.5-7B-Instruct", true},
    {"chatml", "Qwen-Qwen3-0.6B", true},
    {"chatml", "Qwen-QwQ-32B", false},
    {"llama3", "meta-llama-Llama-3.1-8B-Instruct", false},
    {"llama3", "meta-llama-Llama-3.2-3B-Instruct", false},
    {"llama3", "meta-llama-Llama-3.3-70B-Instruct", false},
    {"mistral-v3-tekken", "mistralai-Mistral-Nemo-Instruct-2407", false},
    {"mistral-v7", "Mistral-Small-3.2-24B-Instruct-2506", false},
    {"mistral-v7-tekken", "Mistral-Small-3.2-24B-Instruct-2506", true},
    {"mistral-v7-tekken", "unsloth-mistral-Devstral-Small-2507", true},
    {"deepseek3", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", false},
    {"deepseek3", "deepseek-ai-DeepSeek-V3.1", false},
    {"gpt-oss", "openai-gpt-oss-120b", false},
    {"phi3", "microsoft-Phi-3.5-mini-instruct", true},
    {"kimi-k2", "moonshotai-Kimi-K2", true},
    {"kimi-k2", "Kimi-K2-Instruct", true},
    {"command-r", "CohereForAI-c4ai-command-r7b-12-2024-tool_use", false},
};

}  // namespace

TEST_CASE("built-in families against their models' real templates (Jinja2)", "[chat][jinja]") {
  const auto conv = les::test::load_test_json("core/chat/jinja/conversations.json");
  std::vector<les::chat::Message> msgs;
  for (const auto& c : conv["cases"])
    if (c["name"] == "system_multi")
      for (const auto& m : c["messages"]) msgs.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
  REQUIRE(msgs.size() == 4);
  const std::string bos = conv["bos_token"].get<std::string>();
  for (const Pair& p : kPairs) {
    INFO(p.family << " vs " << p.model_template);
    const auto family = les::chat::family_from_name(p.family);
    REQUIRE(family);
    const auto got = les::chat::apply_template(*family, msgs, true);
    REQUIRE(got.ok());
    const auto ref = les::test::load_test_json(std::string("core/chat/jinja/expected/") + p.model_template +
                                               ".json")["cases"]["system_multi"];
    REQUIRE(ref.contains("output"));
    std::string want = ref["output"].get<std::string>();
    if (want.rfind(bos, 0) == 0) want.erase(0, bos.size());  // a family's text never holds BOS
    auto show = [](const std::string& text) {
      return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    size_t at = 0;
    while (at < want.size() && at < got->size() && want[at] == (*got)[at]) ++at;
    INFO("first difference at byte " << at << "\nJinja2: " << show(want.substr(at, 120))
                                      << "\nfamily: " << show(got->substr(at, 120)));
    CHECK((*got == want) == p.identical);
    if (std::getenv("LES_PRINT_FAMILY_TABLE") != nullptr)  // the README's table
      std::printf("| %s | %s | %s |\n", p.family, p.model_template,
                  *got == want ? "identical"
                               : ("differs at byte " + std::to_string(at) + ": Jinja2 " +
                                  show(want.substr(at, 50)) + ", family " +
                                  show(got->substr(at, 50)))
                                     .c_str());
  }
}
