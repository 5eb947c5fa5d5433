// The families' formats (chat_template.h): one small renderer each. The
// formats are the models' published prompt formats (model cards and the
// Jinja templates shipped in their GGUF files); the code is LES's own.
#include <cctype>

#include "core/chat/chat_template.h"

namespace les::chat {
namespace {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Roles a family can express; an empty list means any non-empty role (the
// family prints the role's name).
using Roles = std::span<const std::string_view>;
constexpr std::string_view kSystemUserAssistant[] = {"system", "user", "assistant"};
constexpr std::string_view kWithTool[] = {"system", "user", "assistant", "tool"};

Roles roles_of(Family f) {
  switch (f) {
    case Family::chatml:
    case Family::llama3:
    case Family::llama4:
    case Family::gpt_oss:
    case Family::phi3:
    case Family::phi4:
    case Family::zephyr: return {};
    case Family::kimi_k2: return kWithTool;
    default: return kSystemUserAssistant;
  }
}

Status check_roles(Family f, std::span<const Message> msgs) {
  const Roles roles = roles_of(f);
  for (size_t i = 0; i < msgs.size(); ++i) {
    const std::string& role = msgs[i].role;
    if (role.empty())
      return invalid_argument_error("chat message " + std::to_string(i) + " has an empty role");
    if (roles.size() == 0) continue;
    bool known = false;
    std::string list;
    for (std::string_view r : roles) {
      known = known || r == role;
      list += (list.empty() ? "" : ", ") + std::string(r);
    }
    if (!known)
      return invalid_argument_error("chat message " + std::to_string(i) + " has role '" + role +
                                    "', which the " + family_name(f) + " template cannot express (roles: " + list +
                                    ")");
  }
  return Status();
}

// Formats that wrap every message as OPEN(role) + content + CLOSE(role) and
// open an assistant turn with OPEN("assistant").
template <typename Open, typename Close>
std::string wrap_each(std::span<const Message> msgs, bool add_prefix, Open open, Close close, bool trim_content) {
  std::string out;
  for (const Message& m : msgs) out += open(m.role) + (trim_content ? trim(m.content) : m.content) + close(m.role);
  if (add_prefix) out += open("assistant");
  return out;
}

// Llama 2 and Mistral v1/v3: [INST] blocks; a system message joins the next user message.
std::string render_inst(Family f, std::span<const Message> msgs) {
  const bool llama2 = f == Family::llama2 || f == Family::llama2_sys;
  const std::string lead = f == Family::mistral_v1 ? " " : "";
  const std::string trail = f == Family::mistral_v3_tekken ? "" : " ";
  std::string out;
  bool in_turn = false;
  for (const Message& m : msgs) {
    if (!in_turn) {
      out += llama2 ? "[INST] " : lead + "[INST]" + trail;
      in_turn = true;
    }
    if (m.role == "system") {
      if (f == Family::llama2_sys) out += "<<SYS>>\n" + m.content + "\n<</SYS>>\n\n";
      else out += m.content + (llama2 ? "\n" : "\n\n");
    } else if (m.role == "user") {
      out += m.content + (llama2 ? " [/INST]" : lead + "[/INST]");
    } else {
      out += (llama2 ? "" : trail) + (f == Family::mistral_v3 ? trim(m.content) : m.content) + "</s>";
      in_turn = false;
    }
  }
  return out;
}

std::string render_mistral_v7(Family f, std::span<const Message> msgs) {
  const std::string sp = f == Family::mistral_v7 ? " " : "";
  std::string out;
  for (const Message& m : msgs) {
    if (m.role == "system") out += "[SYSTEM_PROMPT]" + sp + m.content + "[/SYSTEM_PROMPT]";
    else if (m.role == "user") out += "[INST]" + sp + m.content + "[/INST]";
    else out += sp + m.content + "</s>";
  }
  return out;
}

std::string render_gemma(std::span<const Message> msgs, bool add_prefix) {
  std::string out, system;
  for (const Message& m : msgs) {
    if (m.role == "system") {  // Gemma has no system turn: it opens the next user turn
      system += trim(m.content);
      continue;
    }
    const bool model = m.role == "assistant";
    out += model ? "<start_of_turn>model\n" : "<start_of_turn>user\n";
    if (!model && !system.empty()) {
      out += system + "\n\n";
      system.clear();
    }
    out += trim(m.content) + "<end_of_turn>\n";
  }
  if (add_prefix) out += "<start_of_turn>model\n";
  return out;
}

// Formats of the shape SYSTEM + per-role prefix/suffix, assistant prefix at the end.
struct RoleFormat {
  std::string system_open, system_close, user_open, user_close, assistant_open, assistant_close, prefix;
  bool trim = false;
};

std::string render_roles(const RoleFormat& r, std::span<const Message> msgs, bool add_prefix) {
  std::string out;
  for (const Message& m : msgs) {
    const std::string c = r.trim ? trim(m.content) : m.content;
    if (m.role == "system") out += r.system_open + c + r.system_close;
    else if (m.role == "user") out += r.user_open + c + r.user_close;
    else out += r.assistant_open + c + r.assistant_close;
  }
  if (add_prefix) out += r.prefix;
  return out;
}

std::string render_kimi(std::span<const Message> msgs, bool add_prefix) {
  std::string out;
  for (const Message& m : msgs) {
    if (m.role == "system") out += "<|im_system|>system<|im_middle|>";
    else if (m.role == "user") out += "<|im_user|>user<|im_middle|>";
    else if (m.role == "assistant") out += "<|im_assistant|>assistant<|im_middle|>";
    else out += "<|im_system|>tool<|im_middle|>";
    out += m.content + "<|im_end|>";
  }
  if (add_prefix) out += "<|im_assistant|>assistant<|im_middle|>";
  return out;
}

}  // namespace

Result<std::string> apply_template(Family f, std::span<const Message> msgs, bool add_prefix) {
  LES_RETURN_IF_ERROR(check_roles(f, msgs));
  switch (f) {
    case Family::chatml:
      return wrap_each(msgs, add_prefix, [](const std::string& r) { return "<|im_start|>" + r + "\n"; },
                       [](const std::string&) { return std::string("<|im_end|>\n"); }, false);
    case Family::phi4:
      return wrap_each(msgs, add_prefix, [](const std::string& r) { return "<|im_start|>" + r + "<|im_sep|>"; },
                       [](const std::string&) { return std::string("<|im_end|>"); }, false);
    case Family::llama3:
      return wrap_each(
          msgs, add_prefix, [](const std::string& r) { return "<|start_header_id|>" + r + "<|end_header_id|>\n\n"; },
          [](const std::string&) { return std::string("<|eot_id|>"); }, true);
    case Family::llama4:
      return wrap_each(
          msgs, add_prefix, [](const std::string& r) { return "<|header_start|>" + r + "<|header_end|>\n\n"; },
          [](const std::string&) { return std::string("<|eot|>"); }, true);
    case Family::phi3:
      return wrap_each(msgs, add_prefix, [](const std::string& r) { return "<|" + r + "|>\n"; },
                       [](const std::string&) { return std::string("<|end|>\n"); }, false);
    case Family::zephyr:
      return wrap_each(msgs, add_prefix, [](const std::string& r) { return "<|" + r + "|>\n"; },
                       [](const std::string&) { return std::string("<|endoftext|>\n"); }, false);
    case Family::gpt_oss: {
      // Harmony: the prefix opens the assistant turn without a channel; the model writes it.
      std::string out = wrap_each(
          msgs, false, [](const std::string& r) { return "<|start|>" + r + "<|message|>"; },
          [](const std::string& r) { return std::string(r == "assistant" ? "<|return|>" : "<|end|>"); }, false);
      if (add_prefix) out += "<|start|>assistant";
      return out;
    }
    case Family::llama2:
    case Family::llama2_sys:
    case Family::mistral_v1:
    case Family::mistral_v3:
    case Family::mistral_v3_tekken: return render_inst(f, msgs);
    case Family::mistral_v7:
    case Family::mistral_v7_tekken: return render_mistral_v7(f, msgs);
    case Family::gemma: return render_gemma(msgs, add_prefix);
    case Family::deepseek:
      return render_roles({"", "", "### Instruction:\n", "\n", "### Response:\n", "\n<|EOT|>\n", "### Response:\n"},
                          msgs, add_prefix);
    case Family::deepseek2:
      return render_roles({"", "\n\n", "User: ", "\n\n", "Assistant: ", "<｜end▁of▁sentence｜>", "Assistant:"}, msgs,
                          add_prefix);
    case Family::deepseek3:
      return render_roles({"", "\n\n", "<｜User｜>", "", "<｜Assistant｜>", "<｜end▁of▁sentence｜>", "<｜Assistant｜>"},
                          msgs, add_prefix);
    case Family::minicpm:  // the user turn ends by opening the answer
      return render_roles({"", "", "<用户>", "<AI>", "", "", "", true}, msgs, false);
    case Family::command_r:
      return render_roles({"<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>", "<|END_OF_TURN_TOKEN|>",
                           "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>", "<|END_OF_TURN_TOKEN|>",
                           "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>",
                           "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", true},
                          msgs, add_prefix);
    case Family::kimi_k2: return render_kimi(msgs, add_prefix);
    case Family::hunyuan_moe:  // the user turn ends by opening the answer
      return render_roles({"<|startoftext|>", "<|extra_4|>", "<|startoftext|>", "<|extra_0|>", "", "<|eos|>", ""},
                          msgs, false);
  }
  return internal_error("apply_template: unhandled family");
}

}  // namespace les::chat
