// Chat templates: each family's rendering of one fixed conversation (written
// out by hand from the family's published prompt format), detection from
// template sources, the ChatML fallback, and refusals.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/chat/chat_template.h"

using les::chat::Family;
using les::chat::Message;

namespace {

// A system prompt, two user turns and an assistant answer padded with spaces
// (families that trim show it).
const std::vector<Message> kChat = {{"system", "You are terse."},
                                    {"user", "Hello"},
                                    {"assistant", "  Hi there.  "},
                                    {"user", "Who are you?"}};

std::string render(Family f, bool prefix = true) {
  auto r = les::chat::apply_template(f, kChat, prefix);
  REQUIRE(r.ok());
  return *r;
}

}  // namespace

TEST_CASE("every family renders the conversation in its published format", "[chat]") {
  struct Case {
    const char* name;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"chatml",
       "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
       "<|im_start|>assistant\n  Hi there.  <|im_end|>\n<|im_start|>user\nWho are you?<|im_end|>\n"
       "<|im_start|>assistant\n"},
      {"llama2", "[INST] You are terse.\nHello [/INST]  Hi there.  </s>[INST] Who are you? [/INST]"},
      {"llama2-sys",
       "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHello [/INST]  Hi there.  </s>[INST] Who are you? [/INST]"},
      {"llama3",
       "<|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
       "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
       "<|start_header_id|>assistant<|end_header_id|>\n\nHi there.<|eot_id|>"
       "<|start_header_id|>user<|end_header_id|>\n\nWho are you?<|eot_id|>"
       "<|start_header_id|>assistant<|end_header_id|>\n\n"},
      {"llama4",
       "<|header_start|>system<|header_end|>\n\nYou are terse.<|eot|>"
       "<|header_start|>user<|header_end|>\n\nHello<|eot|>"
       "<|header_start|>assistant<|header_end|>\n\nHi there.<|eot|>"
       "<|header_start|>user<|header_end|>\n\nWho are you?<|eot|>"
       "<|header_start|>assistant<|header_end|>\n\n"},
      {"mistral-v1", " [INST] You are terse.\n\nHello [/INST]   Hi there.  </s> [INST] Who are you? [/INST]"},
      {"mistral-v3", "[INST] You are terse.\n\nHello[/INST] Hi there.</s>[INST] Who are you?[/INST]"},
      {"mistral-v3-tekken", "[INST]You are terse.\n\nHello[/INST]  Hi there.  </s>[INST]Who are you?[/INST]"},
      {"mistral-v7",
       "[SYSTEM_PROMPT] You are terse.[/SYSTEM_PROMPT][INST] Hello[/INST]   Hi there.  </s>[INST] Who are you?[/INST]"},
      {"mistral-v7-tekken",
       "[SYSTEM_PROMPT]You are terse.[/SYSTEM_PROMPT][INST]Hello[/INST]  Hi there.  </s>[INST]Who are you?[/INST]"},
      {"gemma",
       "<start_of_turn>user\nYou are terse.\n\nHello<end_of_turn>\n<start_of_turn>model\nHi there.<end_of_turn>\n"
       "<start_of_turn>user\nWho are you?<end_of_turn>\n<start_of_turn>model\n"},
      {"deepseek",
       "You are terse.### Instruction:\nHello\n### Response:\n  Hi there.  \n<|EOT|>\n### Instruction:\nWho are "
       "you?\n### Response:\n"},
      {"deepseek2",
       "You are terse.\n\nUser: Hello\n\nAssistant:   Hi there.  <｜end▁of▁sentence｜>User: Who are you?\n\nAssistant:"},
      {"deepseek3",
       "You are terse.\n\n<｜User｜>Hello<｜Assistant｜>  Hi there.  <｜end▁of▁sentence｜><｜User｜>Who are "
       "you?<｜Assistant｜>"},
      {"gpt-oss",
       "<|start|>system<|message|>You are terse.<|end|><|start|>user<|message|>Hello<|end|>"
       "<|start|>assistant<|message|>  Hi there.  <|return|><|start|>user<|message|>Who are you?<|end|>"
       "<|start|>assistant"},
      {"minicpm", "You are terse.<用户>Hello<AI>Hi there.<用户>Who are you?<AI>"},
      {"phi3",
       "<|system|>\nYou are terse.<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\n  Hi there.  <|end|>\n"
       "<|user|>\nWho are you?<|end|>\n<|assistant|>\n"},
      {"phi4",
       "<|im_start|>system<|im_sep|>You are terse.<|im_end|><|im_start|>user<|im_sep|>Hello<|im_end|>"
       "<|im_start|>assistant<|im_sep|>  Hi there.  <|im_end|><|im_start|>user<|im_sep|>Who are you?<|im_end|>"
       "<|im_start|>assistant<|im_sep|>"},
      {"zephyr",
       "<|system|>\nYou are terse.<|endoftext|>\n<|user|>\nHello<|endoftext|>\n<|assistant|>\n  Hi there.  "
       "<|endoftext|>\n<|user|>\nWho are you?<|endoftext|>\n<|assistant|>\n"},
      {"command-r",
       "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are terse.<|END_OF_TURN_TOKEN|>"
       "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|>"
       "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hi there.<|END_OF_TURN_TOKEN|>"
       "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are you?<|END_OF_TURN_TOKEN|>"
       "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"},
      {"kimi-k2",
       "<|im_system|>system<|im_middle|>You are terse.<|im_end|><|im_user|>user<|im_middle|>Hello<|im_end|>"
       "<|im_assistant|>assistant<|im_middle|>  Hi there.  <|im_end|><|im_user|>user<|im_middle|>Who are "
       "you?<|im_end|><|im_assistant|>assistant<|im_middle|>"},
      {"hunyuan-moe",
       "<|startoftext|>You are terse.<|extra_4|><|startoftext|>Hello<|extra_0|>  Hi there.  <|eos|>"
       "<|startoftext|>Who are you?<|extra_0|>"},
  };
  // Every canonical name is covered.
  size_t canonical = 0;
  for (auto name : les::chat::template_names())
    if (les::chat::family_name(*les::chat::family_from_name(name)) == name) ++canonical;
  CHECK(cases.size() == canonical);
  for (const Case& c : cases) {
    INFO(c.name);
    auto f = les::chat::family_from_name(c.name);
    REQUIRE(f);
    CHECK(std::string(les::chat::family_name(*f)) == c.name);
    CHECK(render(*f) == c.expected);
  }
}

TEST_CASE("without the assistant prefix the text ends after the last message", "[chat]") {
  const std::string with = render(Family::chatml, true), without = render(Family::chatml, false);
  CHECK(with == without + "<|im_start|>assistant\n");
  CHECK(render(Family::llama3, false).size() < render(Family::llama3, true).size());
  // Families whose user turn opens the answer are the same either way.
  CHECK(render(Family::mistral_v7, false) == render(Family::mistral_v7, true));
  CHECK(render(Family::minicpm, false) == render(Family::minicpm, true));
}

TEST_CASE("aliases name families", "[chat]") {
  CHECK(les::chat::family_from_name("mistral") == Family::mistral_v1);
  CHECK(les::chat::family_from_name("mixtral") == Family::mistral_v1);
  CHECK(les::chat::family_from_name("qwen") == Family::chatml);
  CHECK_FALSE(les::chat::family_from_name("ChatML"));
  CHECK_FALSE(les::chat::family_from_name(""));
}

TEST_CASE("families are detected from the markers of their Jinja sources", "[chat]") {
  struct Case {
    std::string source;
    Family family;
  };
  const std::vector<Case> cases = {
      // Qwen3 / Qwen3-MoE / MiniCPM-V 4 (ChatML)
      {"{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + "
       "'\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
       Family::chatml},
      {"{% for m in messages %}{{'<|im_start|>' + m['role'] + '<|im_sep|>' + m['content'] + '<|im_end|>'}}{% endfor %}",
       Family::phi4},
      // Llama 3.x
      {"{{- bos_token }}{%- for message in messages %}{{- '<|start_header_id|>' + message['role'] + "
       "'<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}{%- endfor %}",
       Family::llama3},
      {"{{- '<|header_start|>' + message['role'] + '<|header_end|>\\n\\n' }}", Family::llama4},
      // Mixtral 8x7B Instruct v0.1: [INST] without system support
      {"{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + "
       "message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token "
       "}}{% endif %}{% endfor %}",
       Family::llama2},
      {"{% if messages[0]['role'] == 'system' %}{{ '<<SYS>>\\n' + system + '\\n<</SYS>>\\n\\n' }}{% endif %}[INST]",
       Family::llama2_sys},
      {"{%- if tools %}[AVAILABLE_TOOLS]{%- endif %}{{- \"[INST] \" + message[\"content\"] + \"[/INST]\" }}",
       Family::mistral_v3},
      {"{%- if tools %}[AVAILABLE_TOOLS]{%- endif %}{{- \"[INST]\" + message[\"content\"] + \"[/INST]\" }}",
       Family::mistral_v3_tekken},
      {"{{- ' [INST] ' + system_message + '\\n\\n' }}[AVAILABLE_TOOLS] [INST]", Family::mistral_v1},
      {"{{- '[SYSTEM_PROMPT]' + system_message + '[/SYSTEM_PROMPT]' }}{{- '[INST]' + message['content'] + "
       "'[/INST]' }}",
       Family::mistral_v7},
      {"{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}", Family::gemma},
      {"{{'### Instruction:\\n' + message['content'] + '\\n'}}{{'### Response:\\n' + message['content'] + "
       "'\\n<|EOT|>\\n'}}",
       Family::deepseek},
      {"{{ 'User: ' + message['content'] + '\\n\\n' }}{{ 'Assistant: ' + message['content'] + eos_token }}",
       Family::deepseek2},
      {"{{'<｜User｜>' + message['content']}}{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}",
       Family::deepseek3},
      {"{{- '<|start|>assistant<|channel|>final<|message|>' + message.content + '<|end|>' }}", Family::gpt_oss},
      {"{% for message in messages %}{% if message['role'] == 'user' %}{{'<用户>' + message['content'].strip() + "
       "'<AI>'}}{% else %}{{message['content'].strip()}}{% endif %}{% endfor %}",
       Family::minicpm},
      {"{{'<|' + message['role'] + '|>' + '\\n' + message['content'] + '<|end|>\\n'}}{{ '<|assistant|>\\n' }}",
       Family::phi3},
      {"{{ '<|user|>\\n' + message['content'] + eos_token }}<|endoftext|>", Family::zephyr},
      {"<|START_OF_TURN_TOKEN|><|USER_TOKEN|>{{ content }}<|END_OF_TURN_TOKEN|>", Family::command_r},
      {"<|im_assistant|>assistant<|im_middle|>{{ content }}<|im_end|>", Family::kimi_k2},
      {"<|startoftext|>{{ content }}<|extra_0|>{{ a }}<|eos|><|extra_4|>", Family::hunyuan_moe},
      {"chatml", Family::chatml},
      {"mistral-v7-tekken", Family::mistral_v7_tekken},
  };
  for (const Case& c : cases) {
    INFO(c.source);
    auto f = les::chat::detect_family(c.source);
    REQUIRE(f);
    CHECK(les::chat::family_name(*f) == std::string(les::chat::family_name(c.family)));
  }
  CHECK_FALSE(les::chat::detect_family("{{ messages | tojson }}"));
  CHECK_FALSE(les::chat::detect_family(""));
}

TEST_CASE("resolve: explicit name, model template, fallback, refusals", "[chat]") {
  const std::string qwen =
      "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{% endfor %}"
      "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
  const std::string gemma = "{{ '<start_of_turn>' }}";
  const std::string not_jinja = "{% for m in messages %}<|im_start|>";
  const std::string unsupported = "{% include 'other.jinja' %}<start_of_turn>";

  // The model's template is parsed and rendered by the Jinja engine.
  auto r = les::chat::resolve_template("", &qwen);
  REQUIRE(r.ok());
  CHECK(r->source == les::chat::TemplateSource::model);
  REQUIRE(r->jinja);
  CHECK(r->family == Family::chatml);  // what its markers suggest (for messages)
  CHECK(r->warning.empty());
  les::chat::JinjaChat chat;
  chat.messages = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "Hi"}])");
  auto text = les::chat::render_chat(*r, chat);
  REQUIRE(text.ok());
  CHECK(*text == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  r = les::chat::resolve_template("jinja", &qwen);  // the model's own, by name
  REQUIRE(r.ok());
  CHECK(r->source == les::chat::TemplateSource::model);

  r = les::chat::resolve_template("llama3", &gemma);  // the explicit name wins
  REQUIRE(r.ok());
  CHECK(r->family == Family::llama3);
  CHECK(r->source == les::chat::TemplateSource::explicit_name);
  CHECK_FALSE(r->jinja);

  const std::string empty;
  for (const std::string* none : {static_cast<const std::string*>(nullptr), &empty}) {
    r = les::chat::resolve_template("", none);
    REQUIRE(r.ok());
    CHECK(r->family == Family::chatml);
    CHECK(r->source == les::chat::TemplateSource::fallback);
    CHECK(r->warning.find("chatml") != std::string::npos);
    CHECK(les::chat::resolve_template("jinja", none).status().code() == les::StatusCode::invalid_argument);
  }

  // A template that is not valid Jinja, or uses a statement LES does not implement, is refused
  // with the way out (a family name) and the family its markers suggest.
  r = les::chat::resolve_template("", &not_jinja);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == les::StatusCode::format);
  CHECK(r.status().message().find("TemplateSyntaxError") != std::string::npos);
  CHECK(r.status().message().find("--chat-template NAME") != std::string::npos);
  CHECK(r.status().message().find("suggest 'chatml'") != std::string::npos);
  r = les::chat::resolve_template("", &unsupported);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == les::StatusCode::unsupported);
  CHECK(r.status().message().find("{% include %}") != std::string::npos);
  CHECK(r.status().message().find("suggest 'gemma'") != std::string::npos);
  // Such a model template can still be overridden by name.
  CHECK(les::chat::resolve_template("gemma", &unsupported).ok());

  r = les::chat::resolve_template("chatml2", &qwen);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == les::StatusCode::invalid_argument);
  CHECK(r.status().message().find("chatml2") != std::string::npos);
  CHECK(r.status().message().find("mistral-v7") != std::string::npos);
}

TEST_CASE("render_chat: families render roles and text only; model template errors say so", "[chat]") {
  les::chat::ResolvedTemplate chatml;  // the fallback: chatml
  les::chat::JinjaChat chat;
  chat.messages = nlohmann::ordered_json::parse(
      R"([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": null, "reasoning_content": "hm"}])");
  chat.add_generation_prompt = false;
  auto text = les::chat::render_chat(chatml, chat);
  REQUIRE(text.ok());
  CHECK(*text == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<|im_end|>\n");
  // Tools and tool calls need the model's template.
  chat.tools = nlohmann::ordered_json::parse(R"([{"type": "function", "function": {"name": "f"}}])");
  auto r = les::chat::render_chat(chatml, chat);
  CHECK(r.status().code() == les::StatusCode::invalid_argument);
  CHECK(r.status().message().find("cannot render tools") != std::string::npos);
  chat.tools = nullptr;
  chat.messages[1]["tool_calls"] = nlohmann::ordered_json::parse(R"([{"function": {"name": "f"}}])");
  CHECK(les::chat::render_chat(chatml, chat).status().message().find("tool calls") != std::string::npos);
  chat.messages = nlohmann::ordered_json::parse(R"([{"role": "user", "content": [{"type": "text"}]}])");
  CHECK(les::chat::render_chat(chatml, chat).status().message().find("non-text content") != std::string::npos);

  // The model template's own errors and unsupported constructs are named as the template's.
  const std::string strict =
      "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
      "{{ messages | map(attribute='content') | xmlattr }}";
  auto own = les::chat::resolve_template("", &strict);
  REQUIRE(own.ok());
  chat.messages = nlohmann::ordered_json::parse(R"([{"role": "system", "content": "x"}])");
  r = les::chat::render_chat(*own, chat);
  CHECK(r.status().code() == les::StatusCode::invalid_argument);
  CHECK(r.status().message().find("the model's chat template: TemplateError: System role not supported") == 0);
  chat.messages = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "x"}])");
  r = les::chat::render_chat(*own, chat);
  CHECK(r.status().code() == les::StatusCode::unsupported);
  CHECK(r.status().message().find("filter 'xmlattr'") != std::string::npos);
  CHECK(r.status().message().find("--chat-template NAME") != std::string::npos);
}

TEST_CASE("roles a family cannot express are refused; empty roles always", "[chat]") {
  const std::vector<Message> tool = {{"user", "x"}, {"tool", "42"}};
  CHECK(les::chat::apply_template(Family::chatml, tool, true).ok());
  CHECK(les::chat::apply_template(Family::kimi_k2, tool, true).ok());
  auto r = les::chat::apply_template(Family::gemma, tool, true);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == les::StatusCode::invalid_argument);
  CHECK(r.status().message().find("'tool'") != std::string::npos);
  CHECK(r.status().message().find("gemma") != std::string::npos);
  const std::vector<Message> empty_role = {{"", "x"}};
  CHECK_FALSE(les::chat::apply_template(Family::chatml, empty_role, true).ok());
  // No messages: just the assistant prefix.
  auto e = les::chat::apply_template(Family::chatml, {}, true);
  REQUIRE(e.ok());
  CHECK(*e == "<|im_start|>assistant\n");
}
