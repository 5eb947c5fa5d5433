// `les serve` end to end: a real server process on a loopback port (--port 0:
// it picks a free one and prints it) and a real HTTP client (cpp-httplib's),
// against the trained qwen3moe fixture: /health, /v1/models, greedy chat and
// text completions equal to `les run` (same text, same token counts), the
// streamed reply's server-sent events and their text, stop strings, seeds,
// two clients at once (queued), a client that disconnects (its generation
// stops; the server goes on), the API key, bad requests (each an OpenAI
// error object, never a crash), a port in use, and SIGTERM / SIGINT / SIGHUP
// stops. test_cli_serve_limits.cpp: a full queue, shutdown replies, bodies.
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/fixtures.h"
#include "tools/serve_client.h"

using namespace les::test::serve;

namespace {

// `les run` with the same model and arguments: (text, prompt tokens, generated).
struct RunText {
  std::string text;
  int prompt_tokens = 0, generated = 0;
};

RunText les_run(const std::string& model, const std::string& args) {
  const les::test::RunResult r = les::test::run_les("run -m " + les::test::sh_quote(model) + " -t 1 " + args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return {r.out, static_cast<int>(les::test::number_after(r.err, "prompt tokens ")),
          static_cast<int>(les::test::number_after(r.err, "generated "))};
}

}  // namespace

TEST_CASE("les serve: health, models, greedy chat and completions equal les run, streamed equals whole",
          "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  Server server(model);
  httplib::Client c = server.client();

  // "listening on" comes after the model is loaded: /health is 200 at once.
  const Reply health = get(c, "/health");
  CHECK(health.status == 200);
  CHECK(health.body["status"] == "ok");
  CHECK(health.body["requests"] == json({{"running", 0}, {"waiting", 0}, {"max_waiting", 16}}));
  const std::string& log = server.child->err();
  CHECK(log.find("les serve: ready") < log.find("les serve: listening on"));
  CHECK(log.find("warning: --host") == std::string::npos);
  const Reply models = get(c, "/v1/models");
  REQUIRE(models.status == 200);
  CHECK(models.body["object"] == "list");
  REQUIRE(models.body["data"].size() == 1);
  CHECK(models.body["data"][0]["id"] == "tiny-qwen3moe-Q4_K_M");

  // Chat: the same text and token counts as `les run --chat` (chatml fallback).
  const RunText ref = les_run(model, "--chat --temp 0 -n 30 -p 'Who is Emily?'");
  REQUIRE_FALSE(ref.text.empty());
  const Reply chat = post(c, "/v1/chat/completions", chat_body("Who is Emily?", 30, false));
  REQUIRE(chat.status == 200);
  CHECK(chat.body["object"] == "chat.completion");
  CHECK(chat.body["id"].get<std::string>().rfind("chatcmpl-", 0) == 0);
  CHECK(chat.body["created"].get<int64_t>() > 0);
  CHECK(chat.body["model"] == "tiny-qwen3moe-Q4_K_M");
  const json& choice = chat.body["choices"][0];
  CHECK(choice["message"]["role"] == "assistant");
  CHECK(choice["message"]["content"] == ref.text);
  CHECK(choice["finish_reason"] == (ref.generated == 30 ? "length" : "stop"));
  CHECK(chat.body["usage"]["prompt_tokens"] == ref.prompt_tokens);
  CHECK(chat.body["usage"]["completion_tokens"] == ref.generated);
  CHECK(chat.body["usage"]["total_tokens"] == ref.prompt_tokens + ref.generated);

  // Streamed: role first, the deltas make the same text, finish_reason, usage, [DONE].
  const Stream s = post_stream(c, "/v1/chat/completions",
                               chat_body("Who is Emily?", 30, true, R"({"stream_options": {"include_usage": true}})"));
  CHECK(s.status == 200);
  CHECK(s.done);
  REQUIRE(s.events.size() >= 4);
  CHECK(s.events.front()["object"] == "chat.completion.chunk");
  CHECK(s.events.front()["choices"][0]["delta"]["role"] == "assistant");
  CHECK(s.text == ref.text);
  const json& last_choice = s.events[s.events.size() - 2]["choices"][0];
  CHECK(last_choice["finish_reason"] == choice["finish_reason"]);
  CHECK(s.events.back()["choices"].empty());
  CHECK(s.events.back()["usage"] == chat.body["usage"]);
  for (const json& e : s.events) CHECK(e["id"] == s.events.front()["id"]);

  // Text completion: llama.cpp's greedy text of the trained fixture, as `les run` gives it.
  const RunText story = les_run(model, "--temp 0 -n 40 -p " + les::test::sh_quote(kStory));
  const json completion_req = {{"prompt", kStory}, {"temperature", 0}, {"max_tokens", 40}};
  const Reply text = post(c, "/v1/completions", completion_req.dump());
  REQUIRE(text.status == 200);
  CHECK(text.body["object"] == "text_completion");
  CHECK(text.body["choices"][0]["text"] == story.text);
  CHECK(text.body["choices"][0]["finish_reason"] == "length");
  CHECK(text.body["usage"]["prompt_tokens"] == story.prompt_tokens);
  CHECK(text.body["usage"]["completion_tokens"] == 40);
  json streamed_req = completion_req;
  streamed_req["stream"] = true;
  const Stream ts = post_stream(c, "/v1/completions", streamed_req.dump());
  CHECK(ts.done);
  CHECK(ts.text == story.text);
  CHECK(ts.events.back()["choices"][0]["finish_reason"] == "length");
  CHECK(server.stop() == 0);
}

TEST_CASE("les serve: stop strings, seeds, and two clients at once", "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  Server server(model);
  httplib::Client c = server.client();
  const RunText story = les_run(model, "--temp 0 -n 40 -p " + les::test::sh_quote(kStory));
  const size_t cut = story.text.find(" castle");
  REQUIRE(cut != std::string::npos);
  for (const json& stop : {json(" castle"), json::array({"zzz", " castle"})}) {
    json req = {{"prompt", kStory}, {"temperature", 0}, {"max_tokens", 40}, {"stop", stop}};
    const Reply r = post(c, "/v1/completions", req.dump());
    REQUIRE(r.status == 200);
    CHECK(r.body["choices"][0]["text"] == story.text.substr(0, cut));
    CHECK(r.body["choices"][0]["finish_reason"] == "stop");
    req["stream"] = true;
    const Stream s = post_stream(c, "/v1/completions", req.dump());
    CHECK(s.text == story.text.substr(0, cut));
    CHECK(s.events.back()["choices"][0]["finish_reason"] == "stop");
  }

  // A seed makes sampled text reproducible.
  const std::string seeded = R"({"prompt": "CHAPTER XII.", "max_tokens": 24, "temperature": 1.0, "seed": 1234})";
  const Reply a = post(c, "/v1/completions", seeded);
  const Reply b = post(c, "/v1/completions", seeded);
  REQUIRE(a.status == 200);
  CHECK(a.body["choices"][0]["text"] == b.body["choices"][0]["text"]);
  // Any seed `les run --seed` takes (0..2^64-1) is a request's seed too, with the same text.
  const Reply big_seed = post(c, "/v1/completions",
                              R"({"prompt": "CHAPTER XII.", "max_tokens": 12, "temperature": 1.0, "seed": 18446744073709551000})");
  REQUIRE(big_seed.status == 200);
  CHECK(big_seed.body["choices"][0]["text"] ==
        les_run(model, "--temp 1 -n 12 --seed 18446744073709551000 -p 'CHAPTER XII.'").text);

  // Two clients at once: both served (one after the other), each with its own text.
  // (Their threads use no Catch assertions, which are not thread-safe.)
  int first_status = -1, second_status = -1;
  std::string first_body, second_body;
  std::thread t1([&] {
    httplib::Client c1 = server.client();
    if (auto r = c1.Post("/v1/chat/completions", chat_body("Who is Emily?", 30, false), "application/json"))
      first_status = r->status, first_body = r->body;
  });
  std::thread t2([&] {
    httplib::Client c2 = server.client();
    if (auto r = c2.Post("/v1/completions", json({{"prompt", kStory}, {"temperature", 0}, {"max_tokens", 40}}).dump(),
                         "application/json"))
      second_status = r->status, second_body = r->body;
  });
  t1.join();
  t2.join();
  const Reply first{first_status, json::parse(first_body, nullptr, false), {}};
  const Reply second{second_status, json::parse(second_body, nullptr, false), {}};
  REQUIRE(first.status == 200);
  REQUIRE(second.status == 200);
  CHECK(first.body["choices"][0]["message"]["content"] ==
        les_run(model, "--chat --temp 0 -n 30 -p 'Who is Emily?'").text);
  CHECK(second.body["choices"][0]["text"] == story.text);
  CHECK(server.stop() == 0);
}

TEST_CASE("les serve: a client that disconnects stops its generation; the server goes on", "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  Server server(model, {"-c", "4096"});
  httplib::Client c = server.client();
  // 4000 tokens take seconds; the client leaves after its first events.
  const std::string long_req =
      R"({"prompt": "CHAPTER XII.", "temperature": 0, "max_tokens": 4000, "ignore_eos": true, "stream": true})";
  post_stream(c, "/v1/completions", long_req, 600);
  REQUIRE(server.child->wait_for_stderr("(stop: cancelled: the client went away)", 120));
  const std::string& err = server.child->err();
  const size_t p = err.find("generated ", err.find("#1 completion"));
  REQUIRE(p != std::string::npos);
  CHECK(std::stoi(err.substr(p + 10)) < 4000);

  // The same for a whole (non-streamed) reply: the client gives up waiting.
  {
    httplib::Client impatient = server.client();
    impatient.set_read_timeout(0, 300 * 1000);
    auto r = impatient.Post("/v1/completions", R"({"prompt": "CHAPTER XII.", "max_tokens": 4000, "ignore_eos": true})",
                            "application/json");
    CHECK_FALSE(r);
  }

  // The next client is served (after the abandoned generation stopped).
  httplib::Client next = server.client();
  CHECK(get(next, "/health").status == 200);
  const Reply r = post(next, "/v1/chat/completions", chat_body("Who is Emily?", 8, false));
  CHECK(r.status == 200);
  CHECK(r.body["usage"]["completion_tokens"].get<int>() > 0);
  REQUIRE(server.child->wait_for_stderr("#3 chat", 120));
  const std::string& log = server.child->err();
  const size_t second = log.find("#2 completion");
  REQUIRE(second != std::string::npos);
  CHECK(log.substr(second, log.find('\n', second) - second).find("(stop: cancelled: the client went away)") !=
        std::string::npos);
  CHECK(server.stop() == 0);
}

TEST_CASE("les serve: --api-key guards /v1/ routes; -n 0 is max_tokens 0", "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  Server server(model, {"--api-key", "s3cret", "-n", "0"});
  httplib::Client c = server.client();
  const Reply none = get(c, "/v1/models");
  CHECK(none.status == 401);
  CHECK(none.body["error"]["type"] == "authentication_error");
  CHECK(get(c, "/v1/models", {{"Authorization", "Bearer wrong"}}).status == 401);
  CHECK(post(c, "/v1/chat/completions", chat_body("hi", 4, false)).status == 401);
  CHECK(get(c, "/v1/models", {{"Authorization", "Bearer s3cret"}}).status == 200);
  CHECK(post(c, "/v1/chat/completions", chat_body("hi", 4, false), {{"Authorization", "Bearer s3cret"}}).status == 200);
  // The scheme is case-insensitive (RFC 7235); the key is not.
  CHECK(get(c, "/v1/models", {{"Authorization", "bearer s3cret"}}).status == 200);
  CHECK(get(c, "/v1/models", {{"Authorization", "BEARER  s3cret"}}).status == 200);
  CHECK(get(c, "/v1/models", {{"Authorization", "Bearer S3CRET"}}).status == 401);
  CHECK(get(c, "/v1/models", {{"Authorization", "Basic s3cret"}}).status == 401);
  CHECK(get(c, "/v1/models", {{"Authorization", "Bearers3cret"}}).status == 401);
  // A refused POST's body is not taken for a next request on the connection.
  for (int i = 0; i < 3; ++i) CHECK(post(c, "/v1/completions", R"({"prompt": "x"})").status == 401);
  CHECK(get(c, "/health").status == 200);  // health checks need no key
  // The server's -n 0 is every request's default max_tokens 0: the prompt is
  // evaluated, nothing generated; a request's max_tokens still wins.
  const httplib::Headers key = {{"Authorization", "Bearer s3cret"}};
  const Reply none_generated = post(c, "/v1/completions", R"({"prompt": "CHAPTER XII.", "temperature": 0})", key);
  REQUIRE(none_generated.status == 200);
  CHECK(none_generated.body["choices"][0]["text"] == "");
  CHECK(none_generated.body["choices"][0]["finish_reason"] == "length");
  CHECK(none_generated.body["usage"]["completion_tokens"] == 0);
  const Reply three = post(c, "/v1/completions", R"({"prompt": "CHAPTER XII.", "temperature": 0, "max_tokens": 3})", key);
  CHECK(three.body["usage"]["completion_tokens"] == 3);
  CHECK(server.stop() == 0);
}

TEST_CASE("les serve: bad requests get 4xx error objects and the server stays up", "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  Server server(model);
  httplib::Client c = server.client();
  const std::string user = R"("messages": [{"role": "user", "content": "hi"}])";
  const std::vector<std::pair<std::string, std::string>> chat_cases = {
      {"{not json", ""},
      {"[1, 2]", ""},
      {"{}", "messages"},
      {R"({"messages": "hi"})", "messages"},
      {R"({"messages": []})", "messages"},
      {R"({"messages": [{"role": "wizard", "content": "hi"}]})", "messages[0].role"},
      {R"({"messages": [{"role": 3, "content": "hi"}]})", "messages[0].role"},
      {R"({"messages": [{"role": "user"}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", "messages[0].content[0]"},
      {"{" + user + R"(, "max_tokens": -1})", "max_tokens"},
      {"{" + user + R"(, "max_tokens": 2147483648})", "max_tokens"},
      {"{" + user + R"(, "max_completion_tokens": -5})", "max_completion_tokens"},
      {"{" + user + R"(, "max_tokens": 1e300})", "max_tokens"},
      {"{" + user + R"(, "max_tokens": 2.5})", "max_tokens"},
      {"{" + user + R"(, "max_tokens": "10"})", "max_tokens"},
      {"{" + user + R"(, "temperature": -1})", "temperature"},
      {"{" + user + R"(, "temperature": "hot"})", "temperature"},
      {"{" + user + R"(, "top_p": -0.25})", "top_p"},
      {"{" + user + R"(, "top_p": 1.5})", "top_p"},
      {"{" + user + R"(, "min_p": -0.5})", "min_p"},
      {"{" + user + R"(, "repeat_penalty": 0})", "repeat_penalty"},
      {"{" + user + R"(, "top_k": -2})", "top_k"},
      {"{" + user + R"(, "seed": "x"})", "seed"},
      {"{" + user + R"(, "seed": 1.5})", "seed"},
      {"{" + user + R"(, "stop": 7})", "stop"},
      {"{" + user + R"(, "stop": ["a", 1]})", "stop"},
      // A NUL would cut a stop string or a chat message short (C strings in les.h): refused (issue 36).
      {"{" + user + R"(, "stop": "a\u0000b"})", "stop"},
      {R"({"messages": [{"role": "user", "content": "a\u0000b"}]})", "messages"},
      {"{" + user + R"(, "stream": "yes"})", "stream"},
      {"{" + user + R"(, "n": 3})", "n"},
      // Asking for what the server cannot do is refused, not ignored.
      {"{" + user + R"(, "tools": [{"type": "function", "function": {"name": "f"}}]})", "tools"},
      {"{" + user + R"(, "tool_choice": "required"})", "tool_choice"},
      {"{" + user + R"(, "response_format": {"type": "json_object"}})", "response_format"},
      {"{" + user + R"(, "logprobs": true})", "logprobs"},
      {"{" + user + R"(, "top_logprobs": 3})", "top_logprobs"},
      {"{" + user + R"(, "logit_bias": {"42": 5}})", "logit_bias"},
  };
  for (const auto& [body, param] : chat_cases) {
    INFO(body);
    const Reply r = post(c, "/v1/chat/completions", body);
    CHECK(r.status == 400);
    CHECK(r.body["error"]["type"] == "invalid_request_error");
    CHECK_FALSE(r.body["error"]["message"].get<std::string>().empty());
    if (!param.empty()) {
      CHECK(r.body["error"]["param"] == param);
      // The message names the request's field (not a command-line flag).
      CHECK(r.body["error"]["message"].get<std::string>().find(param) != std::string::npos);
      CHECK(r.body["error"]["message"].get<std::string>().find("--") == std::string::npos);
    }
  }
  // Fields that ask for nothing unusual pass: empty tools, "none", text format, no logprobs.
  CHECK(post(c, "/v1/chat/completions",
             chat_body("hi", 2, false,
                       R"({"tools": [], "tool_choice": "none", "response_format": {"type": "text"}, "logprobs": false,
                           "n": 1, "user": "u", "logit_bias": {}})"))
            .status == 200);
  CHECK(post(c, "/v1/completions", R"({"prompt": "hi", "max_tokens": 2, "echo": true})").body["error"]["param"] ==
        "echo");
  CHECK(post(c, "/v1/completions", R"({"prompt": "hi", "max_tokens": 2, "best_of": 2})").body["error"]["param"] ==
        "best_of");
  CHECK(post(c, "/v1/completions", R"({"prompt": "hi", "max_tokens": 2, "logprobs": 2})").body["error"]["param"] ==
        "logprobs");
  CHECK(post(c, "/v1/completions", R"({"prompt": "hi", "max_tokens": 2, "suffix": "end"})").body["error"]["param"] ==
        "suffix");
  // max_tokens 0: the prompt is evaluated, nothing is generated.
  const Reply zero = post(c, "/v1/completions", R"({"prompt": "CHAPTER XII.", "max_tokens": 0})");
  REQUIRE(zero.status == 200);
  CHECK(zero.body["choices"][0]["text"] == "");
  CHECK(zero.body["choices"][0]["finish_reason"] == "length");
  CHECK(zero.body["usage"]["completion_tokens"] == 0);
  CHECK(zero.body["usage"]["prompt_tokens"].get<int>() > 0);
  // Completions: a missing or malformed prompt, token ids out of range, a prompt beyond n_ctx (256).
  for (const std::string body : {R"({})", R"({"prompt": 5})", R"({"prompt": ["a", "b"]})", R"({"prompt": [1, -2]})",
                                 R"({"prompt": [1, 99999999]})", R"({"prompt": []})"}) {
    INFO(body);
    CHECK(post(c, "/v1/completions", body).status == 400);
  }
  std::string long_prompt;
  for (int i = 0; i < 400; ++i) long_prompt += "the castle ";
  const Reply full = post(c, "/v1/completions", json({{"prompt", long_prompt}}).dump());
  CHECK(full.status == 400);
  CHECK(full.body["error"]["code"] == "context_length_exceeded");
  // A prompt that fits but leaves little room: generation ends at the full context, "length".
  std::string fits;
  for (int i = 0; i < 100; ++i) fits += "the castle ";
  const Reply room = post(c, "/v1/completions",
                          json({{"prompt", fits}, {"max_tokens", 1000}, {"ignore_eos", true}, {"temperature", 0}}).dump());
  REQUIRE(room.status == 200);
  CHECK(room.body["choices"][0]["finish_reason"] == "length");
  // The last token is sampled from the last position's logits and delivered,
  // though the KV cache has no room left to hold it.
  CHECK(room.body["usage"]["total_tokens"] == 257);
  // A body over the limit (far over: serve_limits tests the bound), an unknown route.
  const Reply big = post(c, "/v1/completions", std::string(9u << 20, 'a'));
  CHECK(big.status == 413);
  CHECK(big.body["error"]["type"] == "invalid_request_error");
  const Reply missing = get(c, "/v1/engines");
  CHECK(missing.status == 404);
  CHECK(missing.body["error"]["type"] == "not_found_error");
  // Still serving.
  CHECK(post(c, "/v1/chat/completions", chat_body("hi", 4, false)).status == 200);
  CHECK(server.stop() == 0);
}

TEST_CASE("les serve: SIGTERM, SIGINT or SIGHUP stops it cleanly, also mid-generation; a port in use is an error",
          "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  {
    Server server(model);
    server.child->signal(SIGINT);
    REQUIRE(server.child->wait(60));
    CHECK(server.child->exit_code() == 0);
    CHECK(server.child->err().find("les serve: stopped") != std::string::npos);
  }
  {
    // SIGHUP (the terminal closed) stops it the same way, saying so.
    Server server(model);
    CHECK(server.stop(SIGHUP) == 0);
    CHECK(server.child->err().find("les serve: Hangup: stopping") != std::string::npos);
    CHECK(server.child->err().find("les serve: stopped") != std::string::npos);
  }
  Server server(model, {"-c", "4096"});
  {
    // A second server on the same port cannot bind.
    const les::test::RunResult busy =
        les::test::run_les("serve -m " + les::test::sh_quote(model) + " --port " + std::to_string(server.port));
    CHECK(busy.exit_code == 1);
    CHECK(busy.err.find("cannot listen on 127.0.0.1:" + std::to_string(server.port)) != std::string::npos);
  }
  Stream s;
  std::atomic<bool> started{false};
  std::thread client([&] {
    httplib::Client c = server.client();
    s = post_stream(c, "/v1/completions",
                    R"({"prompt": "CHAPTER XII.", "temperature": 0, "max_tokens": 4000, "ignore_eos": true, "stream": true})",
                    0, &started);
  });
  for (int i = 0; i < 6000 && !started.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(started.load());
  CHECK(server.stop() == 0);
  client.join();
  const std::string& err = server.child->err();
  CHECK(err.find("stopping") != std::string::npos);
  CHECK(err.find("(stop: cancelled: the server is stopping)") != std::string::npos);
  CHECK(err.find("les serve: stopped") != std::string::npos);
  // The stream ends with an error event, then [DONE].
  REQUIRE_FALSE(s.events.empty());
  CHECK(s.events.back()["error"]["type"] == "unavailable_error");
  CHECK(s.done);
}
