// The Jinja engine's front door (template.h).
#include "core/chat/jinja/template.h"

#include "core/chat/jinja/parser.h"

namespace les::jinja {

Result<Template> Template::parse(std::string_view source, const LexOptions& options) {
  LES_ASSIGN_OR_RETURN(std::vector<Token> tokens, lex(source, options));
  LES_ASSIGN_OR_RETURN(Body body, jinja::parse(tokens));
  Template t;
  t.body_ = std::make_shared<const Body>(std::move(body));
  return t;
}

Result<std::string> Template::render(const Variables& variables, const RenderOptions& options) const {
  auto globals = std::make_shared<Scope>();
  for (const auto& [name, value] : variables) globals->set(name, value);
  std::string out;
  {
    Evaluator ev(options, globals);
    LES_RETURN_IF_ERROR(ev.render(*body_, &out));
  }
  return out;
}

}  // namespace les::jinja
