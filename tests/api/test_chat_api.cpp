// les_chat.h: applying templates by name and from the model's
// tokenizer.chat_template (rendered as Jinja2 renders it: compared with the
// committed Jinja2 results of tests/core/chat/jinja), its variants, the
// ChatML fallback's warning, the JSON form (tools, extra variables), the
// buffer protocol, and bad input (NULLs, unknown names, template errors,
// unsupported constructs, roles).
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "les/les.h"
#include "support/fixtures.h"
#include "support/gguf_copy.h"
#include "support/jinja_case.h"

namespace {

struct Model {
  les_model* p = nullptr;
  std::vector<std::string> warnings;
  ~Model() { les_model_free(p); }
};

void on_log(les_log_level level, const char* msg, void* ud) {
  if (level == LES_LOG_WARN) static_cast<Model*>(ud)->warnings.emplace_back(msg);
}

bool load(const std::string& path, Model& m) {
  les_model_params mp = les_model_default_params();
  mp.log_callback = on_log;
  mp.log_user_data = &m;
  return les_model_load(path.c_str(), &mp, &m.p) == LES_OK;
}

const les_chat_message kChat[] = {{"system", "Be brief."}, {"user", "Hi"}};

std::string apply_json(const les_model* m, const char* tmpl, const std::string& request) {
  size_t n = 0;
  les_status st = les_chat_apply_template_json(m, tmpl, request.c_str(), nullptr, 0, &n);
  INFO(les_last_error());
  REQUIRE(st == LES_ERR_INVALID_ARGUMENT);
  std::string buf(n + 1, '\0');
  st = les_chat_apply_template_json(m, tmpl, request.c_str(), buf.data(), buf.size(), &n);
  INFO(les_last_error());
  REQUIRE(st == LES_OK);
  buf.resize(n);
  return buf;
}

std::string read_test_file(const std::string& template_name) {
  std::ifstream in(std::string(LES_TESTS_SOURCE_DIR) + "/core/chat/jinja/templates/" + template_name + ".jinja",
                   std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  REQUIRE_FALSE(ss.str().empty());
  return ss.str();
}

std::string apply(const les_model* m, const char* tmpl, bool prefix = true) {
  size_t n = 0;
  CHECK(les_chat_apply_template(m, tmpl, kChat, 2, prefix, nullptr, 0, &n) == LES_ERR_INVALID_ARGUMENT);
  std::string buf(n + 1, '\0');
  size_t n2 = 0;
  REQUIRE(les_chat_apply_template(m, tmpl, kChat, 2, prefix, buf.data(), buf.size(), &n2) == LES_OK);
  CHECK(n2 == n);
  CHECK(buf[n] == '\0');
  buf.resize(n);
  return buf;
}

}  // namespace

TEST_CASE("chat API: a template by name needs no model", "[api][chat]") {
  CHECK(apply(nullptr, "chatml") ==
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  CHECK(apply(nullptr, "llama3", false) ==
        "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
        "Hi<|eot_id|>");
  const char* name = nullptr;
  les_chat_template_source src = LES_CHAT_TEMPLATE_FALLBACK;
  REQUIRE(les_chat_template_resolve(nullptr, "mixtral", &name, &src) == LES_OK);
  CHECK(std::string(name) == "mistral-v1");
  CHECK(src == LES_CHAT_TEMPLATE_NAMED);
  // The list of names.
  const int32_t n = les_chat_template_count();
  REQUIRE(n >= 22);
  CHECK(std::string(les_chat_template_name(0)) == "chatml");
  CHECK(les_chat_template_name(n) == nullptr);
  CHECK(les_chat_template_name(-1) == nullptr);
}

TEST_CASE("chat API: a model without a template gets chatml with a warning", "[api][chat]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-F16.gguf");
  Model plain;
  REQUIRE(load(path, plain));
  const char* name = nullptr;
  les_chat_template_source src = LES_CHAT_TEMPLATE_NAMED;
  REQUIRE(les_chat_template_resolve(plain.p, nullptr, &name, &src) == LES_OK);
  CHECK(std::string(name) == "chatml");
  CHECK(src == LES_CHAT_TEMPLATE_FALLBACK);
  REQUIRE_FALSE(plain.warnings.empty());
  CHECK(plain.warnings.back().find("no chat template") != std::string::npos);
  CHECK(apply(plain.p, "") == apply(nullptr, "chatml"));
  size_t n = 0;
  CHECK(les_chat_apply_template(plain.p, "jinja", kChat, 2, true, nullptr, 0, &n) == LES_ERR_INVALID_ARGUMENT);
}

TEST_CASE("chat API: the model's own template renders as Jinja2 renders it", "[api][chat]") {
  // mixtral's vocabulary (SentencePiece, BOS "<s>" added by the tokenizer, EOS "</s>") with real templates.
  LES_REQUIRE_FIXTURE(path, "synthetic/mixtral-Q4_K_M.gguf");
  const auto conv = les::test::load_test_json("core/chat/jinja/conversations.json");
  REQUIRE(conv["bos_token"] == "<s>");
  REQUIRE(conv["eos_token"] == "</s>");
  auto find_case = [&](const std::string& name) {
    for (const auto& c : conv["cases"])
      if (c["name"] == name) return c;
    FAIL("no case " << name);
    return nlohmann::ordered_json();
  };
  for (const std::string tmpl : {"mistralai-Mistral-Nemo-Instruct-2407", "Qwen-Qwen3-0.6B"}) {
    INFO(tmpl);
    const std::string copy = les::test::temp_dir() + "/mixtral-" + tmpl + ".gguf";
    les::test::copy_gguf_with_strings(path, copy, {{"tokenizer.chat_template", read_test_file(tmpl)}});
    Model m;
    REQUIRE(load(copy, m));
    const char* name = nullptr;
    les_chat_template_source src = LES_CHAT_TEMPLATE_NAMED;
    REQUIRE(les_chat_template_resolve(m.p, nullptr, &name, &src) == LES_OK);
    CHECK(std::string(name) == "jinja");
    CHECK(src == LES_CHAT_TEMPLATE_MODEL);
    const auto expected = les::test::load_test_json("core/chat/jinja/expected/" + tmpl + ".json")["cases"];
    for (const std::string c : {"system_multi", "tool_call", "reasoning", "thinking_off"}) {
      INFO(c);
      nlohmann::ordered_json request = find_case(c);
      request.erase("name");
      std::string want = expected[c]["output"].get<std::string>();
      if (want.rfind("<s>", 0) == 0) want.erase(0, 3);  // the tokenizer adds BOS itself
      CHECK(apply_json(m.p, nullptr, request.dump()) == want);
    }
    // Role and content through les_chat_apply_template: the same text.
    const les_chat_message turns[] = {{"system", "You are a concise assistant."},
                                      {"user", "What is 2+2?"},
                                      {"assistant", "4."},
                                      {"user", "And 3+3?"}};
    std::string want = expected["system_multi"]["output"].get<std::string>();
    if (want.rfind("<s>", 0) == 0) want.erase(0, 3);
    size_t n = 0;
    std::string buf(8192, '\0');
    REQUIRE(les_chat_apply_template(m.p, nullptr, turns, 4, true, buf.data(), buf.size(), &n) == LES_OK);
    CHECK(buf.substr(0, n) == want);
    CHECK(m.warnings.empty());
    // A name still selects a built-in family.
    CHECK(apply(m.p, "chatml") == apply(nullptr, "chatml"));
  }
}

TEST_CASE("chat API: template errors, unsupported constructs and variants", "[api][chat]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-F16.gguf");
  const std::string copy = les::test::temp_dir() + "/qwen3moe-templates.gguf";
  les::test::copy_gguf_with_strings(
      path, copy,
      {{"tokenizer.chat_template",
        "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
        "{% for m in messages %}<start_of_turn>{{ m.role }}\n{{ m.content }}<end_of_turn>\n{% endfor %}"
        "{{ tools | xmlattr if tools else '' }}"},
       {"tokenizer.chat_template.tool_use", "TOOLS {{ tools | map(attribute='function.name') | join(',') }}"}});
  Model m;
  REQUIRE(load(copy, m));
  size_t n = 0;
  // The template's own error: invalid argument with its message.
  CHECK(les_chat_apply_template(m.p, nullptr, kChat, 2, true, nullptr, 0, &n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_last_error()).find("System role not supported") != std::string::npos);
  const les_chat_message user[] = {{"user", "Hi"}};
  CHECK(les_chat_apply_template(m.p, nullptr, user, 1, true, nullptr, 0, &n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(n == std::string("<start_of_turn>user\nHi<end_of_turn>\n").size());  // the buffer protocol still tells the size
  // A construct LES does not implement: unsupported, named, with the way out.
  const std::string tools = R"({"messages": [{"role": "user", "content": "Hi"}],
                                "tools": [{"type": "function", "function": {"name": "f"}}]})";
  CHECK(les_chat_apply_template_json(m.p, nullptr, tools.c_str(), nullptr, 0, &n) == LES_ERR_UNSUPPORTED);
  CHECK(std::string(les_last_error()).find("filter 'xmlattr'") != std::string::npos);
  CHECK(std::string(les_last_error()).find("--chat-template NAME") != std::string::npos);
  // A variant of the model's template by its name.
  const char* name = nullptr;
  les_chat_template_source src = LES_CHAT_TEMPLATE_NAMED;
  REQUIRE(les_chat_template_resolve(m.p, "tool_use", &name, &src) == LES_OK);
  CHECK(std::string(name) == "jinja");
  CHECK(src == LES_CHAT_TEMPLATE_MODEL);
  CHECK(apply_json(m.p, "tool_use", tools) == "TOOLS f");
  // A family cannot render tools.
  CHECK(les_chat_apply_template_json(m.p, "chatml", tools.c_str(), nullptr, 0, &n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_last_error()).find("cannot render tools") != std::string::npos);
  // A template that is not valid Jinja: a format error.
  const std::string bad = les::test::temp_dir() + "/qwen3moe-bad-template.gguf";
  les::test::copy_gguf_with_strings(path, bad, {{"tokenizer.chat_template", "{% for m in messages %}<|im_start|>"}});
  Model b;
  REQUIRE(load(bad, b));
  CHECK(les_chat_template_resolve(b.p, nullptr, &name, &src) == LES_ERR_FORMAT);
  CHECK(std::string(les_last_error()).find("suggest 'chatml'") != std::string::npos);
  CHECK(apply(b.p, "chatml") == apply(nullptr, "chatml"));
}

TEST_CASE("chat API: les_chat_apply_template_json's bad input", "[api][chat]") {
  size_t n = 7;
  char buf[64];
  const char* ok = R"({"messages": [{"role": "user", "content": "Hi"}]})";
  REQUIRE(les_chat_apply_template_json(nullptr, "chatml", ok, buf, sizeof buf, &n) == LES_OK);
  CHECK(std::string(buf) == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  for (const char* json : {"", "[1]", "{", "{\"messages\": 3}", "{\"tools\": []}",
                           "{\"messages\": [], \"add_generation_prompt\": 1}", "{\"messages\": [1]}",
                           "{\"messages\": [{\"content\": \"x\"}]}"}) {
    INFO(json);
    CHECK(les_chat_apply_template_json(nullptr, "chatml", json, buf, sizeof buf, &n) == LES_ERR_INVALID_ARGUMENT);
  }
  CHECK(les_chat_apply_template_json(nullptr, "chatml", nullptr, buf, sizeof buf, &n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_chat_apply_template_json(nullptr, "chatml", ok, buf, sizeof buf, nullptr) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_chat_apply_template_json(nullptr, nullptr, ok, buf, sizeof buf, &n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_chat_apply_template_json(nullptr, "chatml", ok, buf, 10, &n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(n == std::strlen("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
}

TEST_CASE("chat API: bad input returns a status", "[api][chat]") {
  size_t n = 7;
  char buf[8];
  CHECK(les_chat_apply_template(nullptr, nullptr, kChat, 2, true, buf, sizeof buf, &n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_last_error()).find("model is NULL") != std::string::npos);
  CHECK(les_chat_apply_template(nullptr, "chatml", kChat, 2, true, buf, sizeof buf, nullptr) ==
        LES_ERR_INVALID_ARGUMENT);
  CHECK(les_chat_apply_template(nullptr, "chatml", nullptr, 2, true, buf, sizeof buf, &n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_chat_apply_template(nullptr, "chatml2", kChat, 2, true, buf, sizeof buf, &n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_last_error()).find("chatml2") != std::string::npos);
  const les_chat_message null_role[] = {{nullptr, "x"}};
  CHECK(les_chat_apply_template(nullptr, "chatml", null_role, 1, true, buf, sizeof buf, &n) ==
        LES_ERR_INVALID_ARGUMENT);
  const les_chat_message tool[] = {{"tool", "x"}};
  CHECK(les_chat_apply_template(nullptr, "gemma", tool, 1, true, buf, sizeof buf, &n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(std::string(les_last_error()).find("'tool'") != std::string::npos);
  // Zero messages: only the prefix; the exact-size buffer (length + NUL) is enough.
  char exact[23];
  REQUIRE(les_chat_apply_template(nullptr, "chatml", nullptr, 0, true, exact, sizeof exact, &n) == LES_OK);
  CHECK(std::string(exact) == "<|im_start|>assistant\n");
  CHECK(les_chat_apply_template(nullptr, "chatml", nullptr, 0, true, exact, n, &n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_chat_template_resolve(nullptr, nullptr, nullptr, nullptr) == LES_ERR_INVALID_ARGUMENT);
}
