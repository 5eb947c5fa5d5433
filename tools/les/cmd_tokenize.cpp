// `les tokenize MODEL.gguf TEXT`: tokenizes TEXT with the model's tokenizer
// (built from its tokenizer.ggml.* metadata; tensor bytes are never read) and
// prints one line per token: id, token type, the piece's bytes (escaped) and
// the vocabulary text. --ids prints only the ids, space-separated, on one line
// (the format of llama.cpp's .out files). --no-special: no BOS/EOS;
// --parse-special: control-token texts in TEXT become their ids.
// Errors (unreadable file, unsupported tokenizer) go to stderr, exit 1.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "core/gguf/gguf_reader.h"
#include "core/tokenizer/tokenizer.h"
#include "les/commands.h"

namespace les::tool {
namespace {

struct TokenizeArgs {
  std::string model;
  std::string text;
  bool ids_only = false;
  bool no_special = false;
  bool parse_special = false;
};

const char* type_name(TokenType t) {
  switch (t) {
    case TokenType::undefined: return "undefined";
    case TokenType::normal: return "normal";
    case TokenType::unknown: return "unknown";
    case TokenType::control: return "control";
    case TokenType::user_defined: return "user";
    case TokenType::unused: return "unused";
    case TokenType::byte: return "byte";
  }
  return "?";
}

// Printable ASCII as is, everything else as \xNN.
std::string escape(const std::string& s) {
  std::string out;
  for (const unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c >= 0x20 && c < 0x7f) out.push_back(static_cast<char>(c));
    else out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

int tokenize(const TokenizeArgs& a) {
  gguf::ReadOptions opts;
  opts.use_mmap = false;
  auto file = gguf::GgufFile::open(a.model, opts);
  if (!file.ok()) {
    std::fprintf(stderr, "les tokenize: %s\n", file.status().to_string().c_str());
    return 1;
  }
  auto tok = Tokenizer::from_gguf(**file);
  if (!tok.ok()) {
    std::fprintf(stderr, "les tokenize: %s: %s\n", a.model.c_str(), tok.status().to_string().c_str());
    return 1;
  }
  const auto ids = (*tok)->tokenize(a.text, !a.no_special, a.parse_special);
  if (!ids.ok()) {
    std::fprintf(stderr, "les tokenize: %s\n", ids.status().to_string().c_str());
    return 1;
  }
  if (a.ids_only) {
    std::string line;
    for (const int32_t id : *ids) line += fmt::format("{}{}", line.empty() ? "" : " ", id);
    fmt::print("{}\n", line);
    return 0;
  }
  const Vocab& v = (*tok)->vocab();
  fmt::print("{} tokens ({} model, pre '{}', {} in vocabulary)\n", ids->size(), v.model_name(), v.pre(),
             v.n_tokens());
  for (const int32_t id : *ids) {
    const auto piece = (*tok)->token_to_piece(id, /*render_special=*/true);
    fmt::print("{:>8}  {:<9} \"{}\"  {}\n", id, type_name(v.type(id)), escape(piece.ok() ? *piece : ""),
               escape(v.text(id)));
  }
  return 0;
}

}  // namespace

void register_tokenize(CLI::App& app, ToolState& state) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Tokenize text with a model's tokenizer and print the tokens");
  cmd->add_option("model", args->model, "GGUF file (only its tokenizer metadata is read)")->required();
  cmd->add_option("text", args->text, "Text to tokenize")->required();
  cmd->add_flag("--ids", args->ids_only, "Print only the token ids on one line");
  cmd->add_flag("--no-special", args->no_special, "Do not add BOS/EOS");
  cmd->add_flag("--parse-special", args->parse_special, "Turn control-token texts into their ids");
  cmd->callback([&state, args] { state.exit_code = tokenize(*args); });
}

}  // namespace les::tool
