// les_chat.h: applying templates by name and from the model's
// tokenizer.chat_template, the ChatML fallback's warning, the buffer
// protocol, and bad input (NULLs, unknown names, unknown templates, roles).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "les/les.h"
#include "support/fixtures.h"
#include "support/gguf_copy.h"

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

TEST_CASE("chat API: the model's template is recognised; none gives chatml with a warning", "[api][chat]") {
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

  const std::string gemma_path = les::test::temp_dir() + "/qwen3moe-gemma-template.gguf";
  les::test::copy_gguf_with_strings(path, gemma_path,
                                    {{"tokenizer.chat_template", "{{ '<start_of_turn>' + role + '\\n' }}"}});
  Model gemma;
  REQUIRE(load(gemma_path, gemma));
  REQUIRE(les_chat_template_resolve(gemma.p, nullptr, &name, &src) == LES_OK);
  CHECK(std::string(name) == "gemma");
  CHECK(src == LES_CHAT_TEMPLATE_MODEL);
  CHECK(apply(gemma.p, nullptr) == "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n");
  CHECK(gemma.warnings.empty());
  // A name overrides the model's template.
  CHECK(apply(gemma.p, "chatml") == apply(nullptr, "chatml"));

  const std::string odd_path = les::test::temp_dir() + "/qwen3moe-odd-template.gguf";
  les::test::copy_gguf_with_strings(path, odd_path, {{"tokenizer.chat_template", "{{ messages | tojson }}"}});
  Model odd;
  REQUIRE(load(odd_path, odd));
  size_t n = 0;
  CHECK(les_chat_apply_template(odd.p, nullptr, kChat, 2, true, nullptr, 0, &n) == LES_ERR_UNSUPPORTED);
  CHECK(std::string(les_last_error()).find("--chat-template") != std::string::npos);
  CHECK(apply(odd.p, "phi3").find("<|user|>") != std::string::npos);
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
