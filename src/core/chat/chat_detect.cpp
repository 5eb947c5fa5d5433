// Chat template names, family detection from Jinja source, and the choice
// between an explicit name, the model's template and the ChatML fallback
// (chat_template.h).
#include <array>
#include <utility>

#include "core/chat/chat_template.h"

namespace les::chat {
namespace {

struct NamedFamily {
  std::string_view name;
  Family family;
};

// Canonical names first (in Family order), then aliases.
constexpr NamedFamily kNames[] = {
    {"chatml", Family::chatml},
    {"llama2", Family::llama2},
    {"llama2-sys", Family::llama2_sys},
    {"llama3", Family::llama3},
    {"llama4", Family::llama4},
    {"mistral-v1", Family::mistral_v1},
    {"mistral-v3", Family::mistral_v3},
    {"mistral-v3-tekken", Family::mistral_v3_tekken},
    {"mistral-v7", Family::mistral_v7},
    {"mistral-v7-tekken", Family::mistral_v7_tekken},
    {"gemma", Family::gemma},
    {"deepseek", Family::deepseek},
    {"deepseek2", Family::deepseek2},
    {"deepseek3", Family::deepseek3},
    {"gpt-oss", Family::gpt_oss},
    {"minicpm", Family::minicpm},
    {"phi3", Family::phi3},
    {"phi4", Family::phi4},
    {"zephyr", Family::zephyr},
    {"command-r", Family::command_r},
    {"kimi-k2", Family::kimi_k2},
    {"hunyuan-moe", Family::hunyuan_moe},
    // aliases
    {"mistral", Family::mistral_v1},
    {"mixtral", Family::mistral_v1},
    {"qwen", Family::chatml},
};

constexpr std::array<std::string_view, std::size(kNames)> make_name_list() {
  std::array<std::string_view, std::size(kNames)> out{};
  for (size_t i = 0; i < std::size(kNames); ++i) out[i] = kNames[i].name;
  return out;
}
constexpr auto kNameList = make_name_list();

}  // namespace

const char* family_name(Family f) noexcept {
  for (const NamedFamily& n : kNames)
    if (n.family == f) return n.name.data();  // the first entry of a family is its canonical name
  return "?";
}

std::span<const std::string_view> template_names() noexcept { return kNameList; }

std::string template_names_list() {
  std::string out;
  for (std::string_view n : kNameList) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::optional<Family> family_from_name(std::string_view name) noexcept {
  for (const NamedFamily& n : kNames)
    if (n.name == name) return n.family;
  return std::nullopt;
}

std::optional<Family> detect_family(std::string_view t) noexcept {
  if (auto f = family_from_name(t)) return f;
  auto has = [t](std::string_view s) { return t.find(s) != std::string_view::npos; };
  // Order matters: more specific markers are checked before the markers they contain.
  if (has("<|im_start|>")) return has("<|im_sep|>") ? Family::phi4 : Family::chatml;
  if (has("[SYSTEM_PROMPT]")) return Family::mistral_v7;  // the tekken variant only by name
  if (t.rfind("mistral", 0) == 0 || has("[INST]")) {
    // Mistral's published v1/v3 templates declare tools or build " [INST] "
    // with a leading space; the rest of the [INST] family is Llama 2's format.
    if (has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]")) {
      if (has(" [INST]")) return Family::mistral_v1;
      if (has("\"[INST]\"")) return Family::mistral_v3_tekken;
      return Family::mistral_v3;
    }
    return has("<<SYS>>") ? Family::llama2_sys : Family::llama2;
  }
  if (has("<|assistant|>") && has("<|end|>")) return Family::phi3;
  if (has("<|user|>") && has("<|endoftext|>")) return Family::zephyr;
  if (has("<start_of_turn>")) return Family::gemma;
  if (has("### Instruction:") && has("<|EOT|>")) return Family::deepseek;
  if (has("<|START_OF_TURN_TOKEN|>") && has("<|USER_TOKEN|>")) return Family::command_r;
  if (has("<|start_header_id|>") && has("<|end_header_id|>")) return Family::llama3;
  if (has("<用户>")) return Family::minicpm;
  if (has("'Assistant: ' + message['content'] + eos_token")) return Family::deepseek2;
  if (has("<｜Assistant｜>") && has("<｜User｜>") && has("<｜end▁of▁sentence｜>")) return Family::deepseek3;
  if (has("<|header_start|>") && has("<|header_end|>")) return Family::llama4;
  if (has("<|extra_0|>") && has("<|extra_4|>")) return Family::hunyuan_moe;
  if (has("<|start|>") && has("<|channel|>")) return Family::gpt_oss;
  if (has("<|im_assistant|>assistant<|im_middle|>")) return Family::kimi_k2;
  return std::nullopt;
}

namespace {

// What to tell a user whose model template LES cannot use.
std::string name_a_family_hint(const std::string& model_template) {
  std::string hint = "; name a built-in template with --chat-template NAME (one of: " + template_names_list() + ")";
  if (auto f = detect_family(model_template))
    hint += "; this template's markers suggest '" + std::string(family_name(*f)) + "'";
  return hint;
}

}  // namespace

Result<ResolvedTemplate> resolve_template(std::string_view requested, const std::string* model_template) {
  ResolvedTemplate r;
  const bool own = requested.empty() || requested == kModelTemplateName;
  if (!own) {
    auto f = family_from_name(requested);
    if (!f)
      return invalid_argument_error("unknown chat template '" + std::string(requested) + "'; known templates: " +
                                    std::string(kModelTemplateName) + " (the model's own), " + template_names_list());
    r.family = *f;
    r.source = TemplateSource::explicit_name;
    return r;
  }
  if (model_template == nullptr || model_template->empty()) {
    if (!requested.empty())
      return invalid_argument_error("chat template '" + std::string(kModelTemplateName) +
                                    "': the model has no chat template (tokenizer.chat_template)");
    r.family = Family::chatml;
    r.source = TemplateSource::fallback;
    r.warning = "the model has no chat template (tokenizer.chat_template); using chatml. "
                "Name the right one with --chat-template NAME if its answers look wrong";
    return r;
  }
  auto parsed = jinja::Template::parse(*model_template);
  if (!parsed.ok())
    return Status(parsed.status().code(), "the model's chat template (tokenizer.chat_template) cannot be used: " +
                                              parsed.status().message() + name_a_family_hint(*model_template));
  r.jinja = std::make_shared<const jinja::Template>(std::move(*parsed));
  r.family = detect_family(*model_template).value_or(Family::chatml);
  r.source = TemplateSource::model;
  return r;
}

}  // namespace les::chat
