// `les tokenize MODEL.gguf TEXT` (or `-f FILE`, `-f -` for stdin): tokenizes
// TEXT with the model's tokenizer (built from its tokenizer.ggml.* metadata;
// tensor bytes are never read) and prints a header line, then one line per
// token: id, token type, the piece as text (the bytes the token stands for;
// valid UTF-8 as is, control characters and invalid bytes escaped as \n, \t,
// \xNN) and the vocabulary entry (escaped the same way). --ids prints only
// the ids, space-separated, on one line (the format of llama.cpp's .out
// files). --no-special: no BOS/EOS; --parse-special: control-token texts in
// TEXT become their ids.
// Errors (unreadable file, unsupported tokenizer) go to stderr, exit 1; no
// TEXT and no -f, or both, exit 2.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "common/text_input.h"
#include "core/gguf/gguf_reader.h"
#include "core/tokenizer/tokenizer.h"
#include "core/tokenizer/utf8.h"

namespace les::tool {
namespace {

struct TokenizeArgs {
  std::string model;
  std::string text;
  std::string file;  // -f: read the text from this file ("-" = stdin)
  bool ids_only = false;
  bool no_special = false;
  bool parse_special = false;
  const CLI::Option* text_opt = nullptr;  // was TEXT given (an empty TEXT is text too)
  const CLI::Option* file_opt = nullptr;
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

// Text for one table cell: valid UTF-8 characters as they are, the
// backslash and quote escaped, control characters and bytes that are not
// valid UTF-8 as \n, \r, \t or \xNN.
std::string escape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const utf8::Decoded d = utf8::decode(s, i);
    if (c == '\\' || c == '"') out += std::string("\\") + static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (d.valid && c >= 0x20 && c != 0x7f) out.append(s, i, d.len);
    else {
      out += fmt::format("\\x{:02x}", c);
      i += 1;
      continue;
    }
    i += (d.valid && c >= 0x80) ? d.len : 1;
  }
  return out;
}

int tokenize(TokenizeArgs a) {
  const bool has_text = a.text_opt->count() > 0, has_file = a.file_opt->count() > 0;
  if (has_text == has_file) {
    std::fprintf(stderr, has_text ? "les tokenize: give TEXT or -f FILE, not both\n"
                                  : "les tokenize: give TEXT or -f FILE (-f - reads standard input)\n");
    return 2;
  }
  if (!a.file.empty()) {
    auto text = read_prompt_file(a.file);
    if (!text.ok()) {
      std::fprintf(stderr, "les tokenize: %s\n", text.status().message().c_str());
      return 1;
    }
    a.text = std::move(text).value();
  }
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
  for (const std::string& w : (*tok)->vocab().warnings()) std::fprintf(stderr, "les tokenize: warning: %s\n", w.c_str());
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
  args->text_opt = cmd->add_option("text", args->text, "Text to tokenize (or -f FILE)");
  args->file_opt = cmd->add_option("-f,--file", args->file,
                                   "Read the text from FILE ('-' = standard input; one trailing newline removed)");
  cmd->add_flag("--ids", args->ids_only, "Print only the token ids on one line");
  cmd->add_flag("--no-special", args->no_special, "Do not add BOS/EOS");
  cmd->add_flag("--parse-special", args->parse_special, "Turn control-token texts into their ids");
  cmd->callback([&state, args] { state.exit_code = tokenize(*args); });
}

}  // namespace les::tool
