// Chat templates: turning a conversation into the prompt text a chat model
// was trained on.
//
// A GGUF stores its template as Jinja source in `tokenizer.chat_template`
// (named variants in `tokenizer.chat_template.NAME`, e.g. tool_use). LES
// renders that source with its own Jinja engine (jinja/template.h) as Hugging
// Face's apply_chat_template does (chat_jinja.h); that is the default for a
// model with a template. A template using a construct the engine does not
// implement is refused (unsupported, the construct named), never rendered
// approximately.
//
// The built-in families below are the fallback for a model without a
// template (ChatML, with a warning) and what a name selects
// (`--chat-template NAME`, e.g. over a template LES refuses). detect_family()
// still recognises a family from the markers in a template's source (the way
// llama.cpp's built-in list does), for messages.
//
// Family names (`--chat-template NAME`, les_chat_apply_template's name) and
// what they render, for messages m1..mn (S = system, U = user, A = assistant):
//   chatml             <|im_start|>ROLE\nCONTENT<|im_end|>\n ...; prefix <|im_start|>assistant\n
//                      (Qwen 1.5-3.5 and their MoE models, MiniCPM-V 2.6+, Hermes, Yi, ...)
//   llama2 / llama2-sys  [INST] (<<SYS>>\nS\n<</SYS>>\n\n)U [/INST]A</s>[INST] ...
//   llama3             <|start_header_id|>ROLE<|end_header_id|>\n\nTRIMMED<|eot_id|>; prefix header of assistant
//   llama4             <|header_start|>ROLE<|header_end|>\n\nTRIMMED<|eot|>
//   mistral-v1         " [INST] S\n\nU [/INST] A</s>" (Mixtral 8x7B Instruct); alias `mistral`
//   mistral-v3         "[INST] S\n\nU[/INST] TRIMMED-A</s>" (Mixtral 8x22B Instruct)
//   mistral-v3-tekken  "[INST]S\n\nU[/INST]A</s>"
//   mistral-v7         "[SYSTEM_PROMPT] S[/SYSTEM_PROMPT][INST] U[/INST] A</s>"
//   mistral-v7-tekken  the same without the spaces
//   gemma              <start_of_turn>user|model\n...<end_of_turn>\n, system text merged into the next user turn
//   deepseek           deepseek-coder: S, ### Instruction:\nU\n, ### Response:\nA\n<|EOT|>\n
//   deepseek2          S\n\n, User: U\n\n, Assistant: A<｜end▁of▁sentence｜>; prefix "Assistant:"
//   deepseek3          S\n\n, <｜User｜>U, <｜Assistant｜>A<｜end▁of▁sentence｜> (DeepSeek V3/R1)
//   gpt-oss            <|start|>ROLE<|message|>CONTENT<|end|> (assistant: <|return|>); prefix <|start|>assistant
//   minicpm            <用户>U<AI>A (MiniCPM 1/2; MiniCPM-V 2.6+ and 4.x ship ChatML templates)
//   phi3               <|ROLE|>\nCONTENT<|end|>\n
//   phi4               <|im_start|>ROLE<|im_sep|>CONTENT<|im_end|>
//   zephyr             <|ROLE|>\nCONTENT<|endoftext|>\n
//   command-r          <|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|/USER_TOKEN|/CHATBOT_TOKEN|>TRIMMED<|END_OF_TURN_TOKEN|>
//   kimi-k2            <|im_system|>system<|im_middle|>...<|im_end|> (user: <|im_user|>, assistant: <|im_assistant|>)
//   hunyuan-moe        <|startoftext|>S<|extra_4|>, <|startoftext|>U<|extra_0|>, A<|eos|>
// The exact strings are in chat_render.cpp, one function per family, and each
// is tested against its rendering of a fixed conversation
// (tests/core/chat/test_chat_template.cpp).
//
// BOS is never part of the rendered text: the tokenizer adds it (first turn
// only), as for any prompt. Special-token texts in the result are meant to be
// tokenized with parse_special.
//
// Thread-safety: every function here is pure (no shared state).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/chat/chat_jinja.h"
#include "core/chat/jinja/template.h"
#include "util/status.h"

namespace les::chat {

enum class Family {
  chatml,
  llama2,
  llama2_sys,
  llama3,
  llama4,
  mistral_v1,
  mistral_v3,
  mistral_v3_tekken,
  mistral_v7,
  mistral_v7_tekken,
  gemma,
  deepseek,
  deepseek2,
  deepseek3,
  gpt_oss,
  minicpm,
  phi3,
  phi4,
  zephyr,
  command_r,
  kimi_k2,
  hunyuan_moe,
};

// One turn of a conversation. role: "system", "user", "assistant" (and "tool"
// where the family has it; families that print the role name accept any
// non-empty role). content: UTF-8 text.
struct Message {
  std::string role;
  std::string content;
};

// The canonical name of a family ("chatml", "mistral-v7", ...).
const char* family_name(Family f) noexcept;

// Every name family_from_name() accepts, canonical names first, then aliases
// ("mistral" = mistral-v1), in a fixed order.
std::span<const std::string_view> template_names() noexcept;

// "chatml, llama2, ..." (for messages).
std::string template_names_list();

// The family of a name, or nullopt.
std::optional<Family> family_from_name(std::string_view name) noexcept;

// The family a Jinja template's source belongs to, from the markers it contains;
// nullopt when none matches. A source that is exactly a family name counts as that family.
std::optional<Family> detect_family(std::string_view jinja_source) noexcept;

// Where the template in use came from.
enum class TemplateSource {
  explicit_name,   // the caller named a family
  model,           // the model's own template, rendered by the Jinja engine
  fallback,        // the model has no template: ChatML, with a warning
};

// The name that asks for the model's own template (and that names it).
inline constexpr std::string_view kModelTemplateName = "jinja";

struct ResolvedTemplate {
  Family family = Family::chatml;  // explicit_name / fallback: the family rendered
  TemplateSource source = TemplateSource::fallback;
  std::string warning;  // non-empty for the fallback (to be shown to the user)
  std::shared_ptr<const jinja::Template> jinja;  // source == model: the parsed template
};

// Chooses the template: `requested` (a family name) wins; else, for "" or
// "jinja", `model_template` (the GGUF's tokenizer.chat_template, nullptr when
// the key is absent), parsed; else, for a model without a template, ChatML
// with a warning. Errors: invalid_argument for an unknown requested name
// (listing the known ones) or "jinja" without a model template; format for a
// model template that is not valid Jinja, unsupported for one using a
// statement LES does not implement (both messages name --chat-template and
// the family the template's markers suggest, if any).
Result<ResolvedTemplate> resolve_template(std::string_view requested, const std::string* model_template);

// Renders `chat` with the resolved template: the model's own through the
// Jinja engine (render_jinja_chat), a family from each message's role and
// string content (chat.add_generation_prompt adds the assistant prefix; tools,
// documents, tool calls or non-text content are invalid_argument: only the
// model's template can render them). Errors: those of the renderer; a
// model-template error's message starts "the model's chat template: ".
Result<std::string> render_chat(const ResolvedTemplate& t, const JinjaChat& chat,
                                const jinja::RenderOptions& options = {});

// Renders `messages` in `family`'s format. add_assistant_prefix: end with the
// text that opens an assistant turn (so the model answers next); families
// whose user turn already ends in the answer's opening (mistral, minicpm,
// hunyuan-moe) add nothing. Errors: invalid_argument for an empty role or a
// role the family cannot express (the message names the family's roles).
Result<std::string> apply_template(Family family, std::span<const Message> messages, bool add_assistant_prefix);

}  // namespace les::chat
