// llama.cpp's load-time token rules; see token_rules.h.
#include "core/tokenizer/token_rules.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace les {
namespace {

// Texts llama.cpp treats as end of generation (and therefore as control).
constexpr std::string_view kEogTexts[] = {
    "<|eot_id|>",    "<|im_end|>", "<|end|>",  "<|return|>",        "<|call|>",         "<|flush|>",
    "<|calls|>",     "<end_of_turn>", "<|endoftext|>", "</s>",      "<|eom_id|>",       "<EOT>",
    "_<EOT>",        "[EOT]",      "[EOS]",    "<|end_of_text|>",   "<end_of_utterance>", "<eos>",
    "<turn|>",       "<|tool_response>", "<\xef\xbd\x9c" "end\xe2\x96\x81" "of\xe2\x96\x81" "sentence\xef\xbd\x9c>",
};

// Fill-in-the-middle markers by kind (pre, suf, mid, pad, rep, sep); each kind
// is recognised by text only when its tokenizer.ggml.fim_*_token_id is absent.
const std::vector<std::string_view> kFimTexts[6] = {
    {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xef\xbd\x9c" "fim\xe2\x96\x81" "begin\xef\xbd\x9c>", "<PRE>",
     "\xe2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"},
    {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xef\xbd\x9c" "fim\xe2\x96\x81" "hole\xef\xbd\x9c>", "<SUF>",
     "\xe2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"},
    {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xef\xbd\x9c" "fim\xe2\x96\x81" "end\xef\xbd\x9c>", "<MID>",
     "\xe2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"},
    {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"},
    {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"},
    {"<|file_sep|>"},
};

bool contains_any(const std::string& s, std::initializer_list<std::string_view> subs) {
  return std::any_of(subs.begin(), subs.end(), [&](std::string_view x) { return s.find(x) != std::string::npos; });
}

bool is_special(TokenType t) {
  return t == TokenType::control || t == TokenType::user_defined || t == TokenType::unknown;
}

}  // namespace

TokenRuleResult apply_token_rules(const TokenRuleInputs& in, const std::vector<std::string>& texts,
                                  std::vector<TokenType>& types, int32_t eos,
                                  const std::function<int32_t(std::string_view)>& find) {
  TokenRuleResult r;
  auto make_control = [&](int32_t id) {
    TokenType& t = types[static_cast<size_t>(id)];
    if (t == TokenType::control) return;
    r.warnings.push_back(fmt::format(
        "control-looking token {} '{}' was not control-type; treating it as control (as llama.cpp does)", id,
        texts[static_cast<size_t>(id)]));
    t = TokenType::control;
  };
  for (int k = 0; k < 6; ++k) {
    if (in.fim_ids_given[k]) continue;
    for (std::string_view text : kFimTexts[k]) {
      const int32_t id = find(text);
      if (id != kNoToken) make_control(id);
    }
  }
  std::vector<int32_t> eog;
  for (std::string_view text : kEogTexts) {
    const int32_t id = find(text);
    if (id == kNoToken) continue;
    make_control(id);
    eog.push_back(id);
  }
  auto has = [&](std::string_view text) {
    const int32_t id = find(text);
    return id != kNoToken && std::find(eog.begin(), eog.end(), id) != eog.end();
  };
  // <|end|> is no end of generation next to <|return|>/<|call|> (o200k_harmony)
  // or <|calls|>/<|flush|> (solar-open).
  if (has("<|end|>") && ((has("<|return|>") && has("<|call|>")) || (has("<|calls|>") && has("<|flush|>")))) {
    const int32_t id = find("<|end|>");
    eog.erase(std::find(eog.begin(), eog.end(), id));
    types[static_cast<size_t>(id)] = TokenType::user_defined;
  }
  // </s> is no end of generation next to <|tool_response> (gemma4, paddleocr).
  if (has("<|tool_response>") && has("</s>")) {
    const int32_t id = find("</s>");
    eog.erase(std::find(eog.begin(), eog.end(), id));
    types[static_cast<size_t>(id)] = TokenType::normal;
  }
  // gpt-oss: always rendered.
  for (std::string_view text : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
    const int32_t id = find(text);
    if (id != kNoToken) types[static_cast<size_t>(id)] = TokenType::user_defined;
  }
  if (eos != kNoToken && std::find(eog.begin(), eog.end(), eos) == eog.end()) eog.push_back(eos);
  std::sort(eog.begin(), eog.end());
  if (eos != kNoToken) {  // eos first, then ascending
    eog.erase(std::find(eog.begin(), eog.end(), eos));
    eog.insert(eog.begin(), eos);
  }
  r.eog = std::move(eog);

  r.strip.assign(texts.size(), 0);
  std::string name = in.name;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  auto set = [&](std::string_view text, uint8_t bit, bool on) {
    const int32_t id = find(text);
    if (id == kNoToken) return;
    uint8_t& s = r.strip[static_cast<size_t>(id)];
    s = on ? (s | bit) : (s & ~bit);
  };
  if (contains_any(in.pre, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
      contains_any(in.arch, {"nomic-bert-moe", "jina-bert-v3"})) {
    set("<mask>", kStripLeft, true);
  } else if (contains_any(name, {"phi-3", "phi3"})) {
    for (size_t id = 0; id < texts.size(); ++id)
      if (is_special(types[id])) r.strip[id] |= kStripRight;
    set("</s>", kStripRight, true);
    for (std::string_view text : {"<unk>", "<s>", "<|endoftext|>"}) set(text, kStripRight, false);
  } else if (contains_any(name, {"modern-bert"})) {
    set("[MASK]", kStripLeft, true);
  }
  return r;
}

}  // namespace les
