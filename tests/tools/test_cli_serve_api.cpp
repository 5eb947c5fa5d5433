// `les serve` end to end, the API beyond completions: `top_p: 0` as greedy
// decoding, CORS (--cors-origin: preflights with and without an API key, the
// Allow-Origin header on replies, errors and streams, origins not allowed,
// the option off, bad values), and /tokenize and /detokenize (llama-server's
// shapes, checked against the completion routes' own token counts, and each
// kind of bad input refused 400 naming the field).
#include <httplib.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/fixtures.h"
#include "tools/serve_client.h"

using namespace les::test::serve;

namespace {

const std::string kUser = R"("messages": [{"role": "user", "content": "Who is Emily?"}])";

std::string header(const httplib::Result& r, const char* name) { return r->get_header_value(name); }

}  // namespace

TEST_CASE("les serve: top_p 0 is greedy decoding, whatever the temperature and seed", "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  Server server(model);
  httplib::Client c = server.client();
  const Reply greedy = post(c, "/v1/chat/completions", chat_body("Who is Emily?", 16, false));
  REQUIRE(greedy.status == 200);
  const std::string want = greedy.body["choices"][0]["message"]["content"];
  // temperature 1.5 alone samples: some seed gives another text (else the check below could not fail).
  bool differs = false;
  for (int seed = 1; seed <= 4 && !differs; ++seed) {
    const Reply hot = post(c, "/v1/chat/completions",
                           chat_body("Who is Emily?", 16, false,
                                     R"({"temperature": 1.5, "seed": )" + std::to_string(seed) + "}"));
    REQUIRE(hot.status == 200);
    differs = hot.body["choices"][0]["message"]["content"] != want;
  }
  CHECK(differs);
  for (int seed = 1; seed <= 4; ++seed) {
    INFO("seed " << seed);
    const Reply r = post(c, "/v1/chat/completions",
                         chat_body("Who is Emily?", 16, false,
                                   R"({"temperature": 1.5, "top_p": 0, "seed": )" + std::to_string(seed) + "}"));
    REQUIRE(r.status == 200);
    CHECK(r.body["choices"][0]["message"]["content"] == want);
  }
  // Below 0 and above 1 stay refused.
  for (const char* bad : {R"(, "top_p": -0.25})", R"(, "top_p": 1.5})"}) {
    const Reply r = post(c, "/v1/chat/completions", "{" + kUser + bad);
    CHECK(r.status == 400);
    CHECK(r.body["error"]["param"] == "top_p");
  }
  CHECK(server.stop() == 0);
}

TEST_CASE("les serve --cors-origin: preflights, Allow-Origin on every reply, off by default", "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const std::string app = "https://app.example";
  const httplib::Headers key = {{"Authorization", "Bearer k3y"}};
  {
    Server server(model, {"--api-key", "k3y", "--cors-origin", app + ",http://localhost:5173"});
    httplib::Client c = server.client();
    // The preflight: 204 with the Allow-* headers, no key needed (browsers send none on it).
    const httplib::Headers preflight = {{"Origin", app},
                                        {"Access-Control-Request-Method", "POST"},
                                        {"Access-Control-Request-Headers", "authorization, content-type, x-stainless-os"}};
    for (const char* path : {"/v1/chat/completions", "/v1/models", "/tokenize"}) {
      INFO(path);
      auto r = c.Options(path, preflight);
      REQUIRE(r);
      CHECK(r->status == 204);
      CHECK(header(r, "Access-Control-Allow-Origin") == app);
      CHECK(header(r, "Access-Control-Allow-Methods").find("POST") != std::string::npos);
      CHECK(header(r, "Access-Control-Allow-Headers") == "authorization, content-type, x-stainless-os");
      CHECK(header(r, "Vary") == "Origin");
      CHECK(r->body.empty());
    }
    // Replies: success, 401, 404, 400 and a stream all carry Allow-Origin for an allowed origin.
    httplib::Headers with_origin = key;
    with_origin.emplace("Origin", "http://localhost:5173");
    auto models = c.Get("/v1/models", with_origin);
    REQUIRE(models);
    CHECK(models->status == 200);
    CHECK(header(models, "Access-Control-Allow-Origin") == "http://localhost:5173");
    auto unauthorized = c.Get("/v1/models", {{"Origin", app}});
    REQUIRE(unauthorized);
    CHECK(unauthorized->status == 401);
    CHECK(header(unauthorized, "Access-Control-Allow-Origin") == app);
    auto missing = c.Get("/nosuch", {{"Origin", app}});
    REQUIRE(missing);
    CHECK(missing->status == 404);
    CHECK(header(missing, "Access-Control-Allow-Origin") == app);
    auto bad = c.Post("/v1/chat/completions", with_origin, "{not json", "application/json");
    REQUIRE(bad);
    CHECK(bad->status == 400);
    CHECK(header(bad, "Access-Control-Allow-Origin") == "http://localhost:5173");
    auto stream = c.Post("/v1/chat/completions", with_origin, chat_body("Who is Emily?", 4, true), "application/json");
    REQUIRE(stream);
    CHECK(stream->status == 200);
    CHECK(stream->body.find("data: [DONE]") != std::string::npos);
    CHECK(header(stream, "Access-Control-Allow-Origin") == "http://localhost:5173");
    // An origin not in the list: no Allow-Origin (the browser refuses); the request itself is served.
    auto other = c.Get("/v1/models", {{"Origin", "https://evil.example"}, {"Authorization", "Bearer k3y"}});
    REQUIRE(other);
    CHECK(other->status == 200);
    CHECK_FALSE(other->has_header("Access-Control-Allow-Origin"));
    auto other_preflight =
        c.Options("/v1/models", {{"Origin", "https://evil.example"}, {"Access-Control-Request-Method", "GET"}});
    REQUIRE(other_preflight);
    CHECK_FALSE(other_preflight->has_header("Access-Control-Allow-Origin"));
    // Not a preflight (no Access-Control-Request-Method): the key check as before.
    auto plain_options = c.Options("/v1/models", {{"Origin", app}});
    REQUIRE(plain_options);
    CHECK(plain_options->status == 401);
    CHECK(server.stop() == 0);
  }
  {
    Server server(model, {"--cors-origin", "*"});
    httplib::Client c = server.client();
    auto r = c.Get("/health", {{"Origin", "https://anyone.example"}});
    REQUIRE(r);
    CHECK(header(r, "Access-Control-Allow-Origin") == "*");
    auto p = c.Options("/v1/completions", {{"Origin", "https://anyone.example"}, {"Access-Control-Request-Method", "POST"}});
    REQUIRE(p);
    CHECK(p->status == 204);
    CHECK(header(p, "Access-Control-Allow-Origin") == "*");
    CHECK(header(p, "Access-Control-Allow-Headers") == "Authorization, Content-Type");  // none asked for
    CHECK(server.stop() == 0);
  }
  {
    // Off by default: no CORS header, and a preflight is not answered as one.
    Server server(model, {"--api-key", "k3y"});
    httplib::Client c = server.client();
    auto r = c.Get("/health", {{"Origin", app}});
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK_FALSE(r->has_header("Access-Control-Allow-Origin"));
    auto p = c.Options("/v1/models", {{"Origin", app}, {"Access-Control-Request-Method", "GET"}});
    REQUIRE(p);
    CHECK(p->status == 401);
    CHECK_FALSE(p->has_header("Access-Control-Allow-Origin"));
    CHECK(server.stop() == 0);
  }
  // Bad values are usage errors naming the entry.
  for (const char* bad : {"ftp://x.example", "https://a.example/path", "https://a.example,", "https://a b",
                          "https://a.example\r\nX-Evil: 1"}) {
    INFO(bad);
    const les::test::RunResult r =
        les::test::run_les("serve -m " + les::test::sh_quote(model) + " --port 0 --cors-origin " + les::test::sh_quote(bad));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--cors-origin") && Catch::Contains("is not an origin"));
  }
}

TEST_CASE("les serve: /tokenize and /detokenize, and their bad input", "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  Server server(model, {"--api-key", "k3y"});
  httplib::Client c = server.client();
  const httplib::Headers key = {{"Authorization", "Bearer k3y"}};
  const json story = {{"content", kStory}};
  const Reply t = post(c, "/tokenize", story.dump(), key);
  REQUIRE(t.status == 200);
  REQUIRE(t.body["tokens"].is_array());
  REQUIRE(t.body["tokens"].size() > 4);
  for (const json& id : t.body["tokens"]) CHECK(id.is_number_integer());
  // The completion route tokenizes its prompt with add_special: the same count.
  const Reply special = post(c, "/tokenize", json({{"content", kStory}, {"add_special", true}}).dump(), key);
  REQUIRE(special.status == 200);
  const Reply done = post(c, "/v1/completions", json({{"prompt", kStory}, {"max_tokens", 0}}).dump(), key);
  REQUIRE(done.status == 200);
  CHECK(done.body["usage"]["prompt_tokens"] == special.body["tokens"].size());
  // ... and the ids given as the prompt give the same text as the string.
  const Reply by_text = post(c, "/v1/completions", json({{"prompt", kStory}, {"max_tokens", 8}, {"temperature", 0}}).dump(), key);
  const Reply by_ids =
      post(c, "/v1/completions", json({{"prompt", special.body["tokens"]}, {"max_tokens", 8}, {"temperature", 0}}).dump(), key);
  REQUIRE(by_text.status == 200);
  REQUIRE(by_ids.status == 200);
  CHECK(by_ids.body["choices"][0]["text"] == by_text.body["choices"][0]["text"]);
  // Back to the text.
  const Reply d = post(c, "/detokenize", json({{"tokens", t.body["tokens"]}}).dump(), key);
  REQUIRE(d.status == 200);
  // The pieces joined, as llama-server gives them: this SentencePiece vocabulary's first
  // piece carries the space the tokenizer put in front of the text.
  std::string text = d.body["content"];
  if (text == " " + std::string(kStory)) text.erase(0, 1);
  CHECK(text == kStory);
  const Reply empty = post(c, "/detokenize", R"({"tokens": []})", key);
  CHECK(empty.body["content"] == "");
  CHECK(post(c, "/tokenize", R"({"content": ""})", key).body["tokens"] == json::array());
  // with_pieces: the pieces join to the text.
  const Reply pieces = post(c, "/tokenize", json({{"content", kStory}, {"with_pieces", true}}).dump(), key);
  REQUIRE(pieces.status == 200);
  REQUIRE(pieces.body["tokens"].size() == t.body["tokens"].size());
  std::string joined;
  for (size_t i = 0; i < pieces.body["tokens"].size(); ++i) {
    const json& p = pieces.body["tokens"][i];
    CHECK(p["id"] == t.body["tokens"][i]);
    REQUIRE(p["piece"].is_string());  // this text is ASCII: every piece is whole
    joined += p["piece"].get<std::string>();
  }
  CHECK(joined == d.body["content"]);
  // A control token's text (this vocabulary's BOS, <s>): that one token with parse_special
  // (the default), several without; add_special puts the BOS in front.
  const Reply ctl = post(c, "/tokenize", R"({"content": "<s>"})", key);
  const Reply raw = post(c, "/tokenize", R"({"content": "<s>", "parse_special": false})", key);
  REQUIRE(ctl.body["tokens"].size() == 1);
  CHECK(raw.body["tokens"].size() > 1);
  CHECK(special.body["tokens"].size() == t.body["tokens"].size() + 1);
  CHECK(special.body["tokens"][0] == ctl.body["tokens"][0]);
  // Bad input: 400 naming the field; the server stays up.
  const std::vector<std::pair<std::string, std::string>> tokenize_cases = {
      {"{not json", ""},         {"[1, 2]", ""},
      {"{}", "content"},         {R"({"content": 5})", "content"},
      {R"({"content": ["a"]})", "content"}, {R"({"content": "a", "add_special": "yes"})", "add_special"},
      {R"({"content": "a", "parse_special": 1})", "parse_special"},
      {R"({"content": "a", "with_pieces": null, "add_special": []})", "add_special"},
  };
  for (const auto& [body, param] : tokenize_cases) {
    INFO(body);
    const Reply r = post(c, "/tokenize", body, key);
    CHECK(r.status == 400);
    CHECK(r.body["error"]["type"] == "invalid_request_error");
    if (!param.empty()) {
      CHECK(r.body["error"]["param"] == param);
      CHECK(r.body["error"]["message"].get<std::string>().find(param) != std::string::npos);
    }
  }
  const std::vector<std::pair<std::string, std::string>> detokenize_cases = {
      {"{not json", ""},
      {"{}", "tokens is missing"},
      {R"({"tokens": "1 2"})", "tokens must be an array"},
      {R"({"tokens": [1, "a"]})", "tokens[1] must be an integer"},
      {R"({"tokens": [1, 2.5]})", "tokens[1] must be an integer"},
      {R"({"tokens": [[1]]})", "tokens[0] must be an integer"},
      {R"({"tokens": [-1]})", "tokens[0] is -1, not a token id"},
      {R"({"tokens": [3, 1000000000]})", "tokens[1] is 1000000000, not a token id"},
      {R"({"tokens": [1e300]})", "tokens[0] must be an integer"},
  };
  for (const auto& [body, message] : detokenize_cases) {
    INFO(body);
    const Reply r = post(c, "/detokenize", body, key);
    CHECK(r.status == 400);
    CHECK(r.body["error"]["message"].get<std::string>().find(message) != std::string::npos);
  }
  // The key is needed, as on /v1/.
  CHECK(post(c, "/tokenize", story.dump()).status == 401);
  CHECK(post(c, "/detokenize", R"({"tokens": [1]})").status == 401);
  CHECK(get(c, "/health").status == 200);
  CHECK(server.stop() == 0);
}
