#include "core/tokenizer/pre_tokenizer.h"

#include <fmt/format.h>

#include "core/tokenizer/pre_tokenizer_names.h"
#include "core/tokenizer/split_regex.h"
#include "core/tokenizer/utf8.h"

namespace les {

namespace {

const NameDef* find_name(std::string_view name) {
  for (const NameDef& d : pre_tokenizer_name_table()) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

const TypeDef* find_type(std::string_view type) {
  for (const TypeDef& t : pre_tokenizer_types()) {
    if (type == t.type) return &t;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> PreTokenizer::names() {
  std::vector<std::string> out;
  for (const NameDef& d : pre_tokenizer_name_table()) out.emplace_back(d.name);
  return out;
}

const PreTokenizerTraits* PreTokenizer::traits_of(std::string_view name) {
  const NameDef* d = find_name(name);
  return d != nullptr ? &d->traits : nullptr;
}

Result<PreTokenizer> PreTokenizer::create(std::string_view name) {
  const NameDef* d = find_name(name);
  if (d == nullptr) {
    std::string known;
    for (const NameDef& n : pre_tokenizer_name_table()) {
      if (!known.empty()) known += ", ";
      known += n.name;
    }
    return unsupported_error(fmt::format(
        "BPE pre-tokenizer '{}' (tokenizer.ggml.pre) is not supported (supported: {})", name, known));
  }
  const TypeDef* t = find_type(d->type);
  if (t == nullptr) return internal_error(fmt::format("pre-tokenizer '{}' has no type '{}'", d->name, d->type));
  PreTokenizer p;
  p.name_ = d->name;
  p.type_ = t->type;
  p.traits_ = d->traits;
  for (const StageDef& s : t->stages) {
    Stage st;
    if (s.custom != nullptr) {
      st.custom = s.custom;
    } else {
      LES_ASSIGN_OR_RETURN(SplitRegex re, SplitRegex::compile(s.pattern));
      st.regex = std::make_shared<const SplitRegex>(std::move(re));
    }
    p.stages_.push_back(std::move(st));
  }
  return p;
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  static const uint32_t kReplacementFlags = unicode_class(utf8::kReplacement);
  std::vector<CodePoint> cps;
  cps.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const utf8::Decoded d = utf8::decode(text, i);
    cps.push_back({d.cp, d.valid ? unicode_class(d.cp) : kReplacementFlags, static_cast<uint32_t>(i)});
    i += d.len;
  }
  const auto n = static_cast<uint32_t>(cps.size());

  // Symbols for the pattern stages, made when a stage first needs them.
  std::vector<uint32_t> symbols[2];
  auto symbols_for = [&](SymbolMode mode) -> const std::vector<uint32_t>& {
    std::vector<uint32_t>& s = symbols[mode == SymbolMode::categories ? 0 : 1];
    if (s.empty() && n > 0) {
      s.resize(n);
      for (uint32_t i = 0; i < n; ++i) s[i] = regex_symbol(cps[i].cp, cps[i].flags, mode);
    }
    return s;
  };

  std::vector<std::pair<uint32_t, uint32_t>> pieces, next;
  if (n > 0) pieces.emplace_back(0, n);
  SplitRegex::Scratch scratch;
  for (const Stage& st : stages_) {
    next.clear();
    next.reserve(pieces.size() * 2);
    for (const auto& [b, e] : pieces) {
      if (st.custom != nullptr) {
        st.custom(cps.data() + b, e - b, b, next);
      } else {
        st.regex->split(symbols_for(st.regex->mode()).data() + b, e - b, b, next, scratch);
      }
    }
    pieces.swap(next);
  }

  std::vector<std::string_view> out;
  out.reserve(pieces.size());
  for (const auto& [b, e] : pieces) {
    const size_t from = cps[b].byte_off;
    const size_t to = e < n ? cps[e].byte_off : text.size();
    out.push_back(text.substr(from, to - from));
  }
  return out;
}

}  // namespace les
