// See tokenize.h.
#include "serve/tokenize.h"

#include <les/les.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/prompt_reuse.h"
#include "common/text_input.h"
#include "serve/body.h"
#include "serve/http.h"
#include "serve/json_limits.h"
#include "serve/reply.h"

namespace les::tool {
namespace {

using nlohmann::json;

// Reads, checks and parses the body as a JSON object into *body, with the
// model's engine into *engine; false when a reply (an error) was sent.
bool read_json_object(ServeState& state, const httplib::Request& req, httplib::Response& res,
                      const httplib::ContentReader& reader, json* body, const ServeEngine** engine) {
  std::string text;
  BodyError body_error;
  if (!read_request_body(req, res, reader, state.max_body_bytes, &text, &body_error)) {
    send_error(req, res, body_error.status, body_error.message, "invalid_request_error");
    if (body_error.close_connection) close_after_reply(res);
    return false;
  }
  if (!authorized(state, req)) {
    refuse_unauthorized(req, res);
    return false;
  }
  *engine = state.engine.load();
  if (*engine == nullptr) {
    res.set_header("Retry-After", "1");
    send_error(req, res, 503, "the model is loading", "unavailable_error");
    return false;
  }
  if (const std::string shape = check_json_shape(text, state.json_limits); !shape.empty()) {
    send_error(req, res, 400, shape, "invalid_request_error");
    return false;
  }
  {
    ParseGate::Ticket turn(state.parse_gate);
    *body = json::parse(text, nullptr, false);
  }
  if (body->is_discarded() || !body->is_object()) {
    send_error(req, res, 400, "the request body must be a JSON object", "invalid_request_error");
    return false;
  }
  return true;
}

// body[name] as a boolean (absent: `fallback`); false with a 400 sent when it is not one.
bool flag(const json& body, const char* name, bool fallback, bool* out, const httplib::Request& req,
          httplib::Response& res) {
  *out = fallback;
  if (!body.contains(name) || body[name].is_null()) return true;
  if (!body[name].is_boolean()) {
    send_error(req, res, 400, std::string(name) + " must be a boolean", "invalid_request_error", name);
    return false;
  }
  *out = body[name].get<bool>();
  return true;
}

// One token's bytes ("" for an id les_token_to_piece refuses; ids are checked before).
std::string piece(const les_model* model, les_token id) {
  std::string out(32, '\0');
  size_t n = 0;
  les_status st = les_token_to_piece(model, id, out.data(), out.size(), &n);
  if (st != LES_OK && n > out.size()) {
    out.resize(n);
    st = les_token_to_piece(model, id, out.data(), out.size(), &n);
  }
  if (st != LES_OK) return {};
  out.resize(n);
  return out;
}

}  // namespace

void handle_tokenize(ServeState& state, const httplib::Request& req, httplib::Response& res,
                     const httplib::ContentReader& reader) {
  json body;
  const ServeEngine* engine = nullptr;
  if (!read_json_object(state, req, res, reader, &body, &engine)) return;
  if (!body.contains("content"))
    return send_error(req, res, 400, "content is missing (the text to tokenize)", "invalid_request_error", "content");
  if (!body["content"].is_string())
    return send_error(req, res, 400, "content must be a string", "invalid_request_error", "content");
  bool add_special = false, parse_special = true, with_pieces = false;
  if (!flag(body, "add_special", false, &add_special, req, res) ||
      !flag(body, "parse_special", true, &parse_special, req, res) ||
      !flag(body, "with_pieces", false, &with_pieces, req, res))
    return;
  const std::string& content = body["content"].get_ref<const std::string&>();
  les_status st = LES_OK;
  const std::vector<les_token> ids = tokenize_prompt(engine->model(), content, parse_special, &st, add_special);
  if (st != LES_OK)
    return send_error(req, res, 400, std::string("content cannot be tokenized: ") + les_last_error(),
                      "invalid_request_error", "content");
  json tokens = json::array();
  for (les_token id : ids) {
    if (!with_pieces) {
      tokens.push_back(id);
      continue;
    }
    const std::string bytes = piece(engine->model(), id);
    json p;
    if (valid_utf8(bytes) == bytes) {
      p = bytes;
    } else {
      p = json::array();
      for (unsigned char c : bytes) p.push_back(static_cast<int>(c));
    }
    tokens.push_back({{"id", id}, {"piece", std::move(p)}});
  }
  send_json(res, 200, {{"tokens", std::move(tokens)}});
}

void handle_detokenize(ServeState& state, const httplib::Request& req, httplib::Response& res,
                       const httplib::ContentReader& reader) {
  json body;
  const ServeEngine* engine = nullptr;
  if (!read_json_object(state, req, res, reader, &body, &engine)) return;
  if (!body.contains("tokens"))
    return send_error(req, res, 400, "tokens is missing (an array of token ids)", "invalid_request_error", "tokens");
  const json& tokens = body["tokens"];
  if (!tokens.is_array())
    return send_error(req, res, 400, "tokens must be an array of token ids", "invalid_request_error", "tokens");
  const int32_t n_vocab = les_model_n_vocab(engine->model());
  std::string bytes;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const json& t = tokens[i];
    const std::string where = "tokens[" + std::to_string(i) + "]";
    bool integral = t.is_number_integer();
    if (t.is_number_float()) {
      const double d = t.get<double>();
      integral = std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15;
    }
    if (!integral)
      return send_error(req, res, 400, where + " must be an integer token id", "invalid_request_error", "tokens");
    const double id = t.get<double>();
    if (id < 0 || id >= n_vocab)
      return send_error(req, res, 400,
                        where + " is " + t.dump() + ", not a token id of this model (0.." +
                            std::to_string(n_vocab - 1) + ")",
                        "invalid_request_error", "tokens");
    bytes += piece(engine->model(), static_cast<les_token>(id));
  }
  send_json(res, 200, {{"content", valid_utf8(bytes)}});
}

}  // namespace les::tool
