// `les serve --mmproj` against a real server process on a loopback port, on
// ../shared/fixtures/multimodal (the qwen35moe text model with the image
// marker tokens and the tiny MiniCPM-V 4.6 mmproj): the 224x224 test image
// sent as a data: URL in an image_url content part gives llama.cpp's greedy
// text for it (the fixture's `generation`, which LES reproduces 16/16 for
// this image: tests/vision) and the same prompt size; every bad image input
// gets 400 with a message naming the part and the problem (the text also
// equals `les run --mmproj --image --chat`'s); a server without
// --mmproj refuses image parts; image requests from several clients at once
// all get the same text, and the server stays up.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/fixtures.h"
#include "tools/serve_client.h"

using namespace les::test::serve;

namespace {

constexpr const char* kTextModel = "multimodal/qwen35moe-mm-F16.gguf";
constexpr const char* kMmproj = "multimodal/mmproj-minicpmv4_6-tiny-F16.gguf";

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// RFC 4648 base64 with padding (the client's side of the wire).
std::string base64(const std::string& bytes) {
  static const char* kDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(bytes[i]) << 16) | (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kDigits[(v >> s) & 63];
  }
  if (const size_t rest = bytes.size() - i; rest > 0) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += rest == 2 ? kDigits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

json image_part(const std::string& url) { return json{{"type", "image_url"}, {"image_url", {{"url", url}}}}; }
json text_part(const std::string& text) { return json{{"type", "text"}, {"text", text}}; }

std::string image_chat(const json& content, int max_tokens = 16) {
  return json{{"messages", json::array({json{{"role", "user"}, {"content", content}}})},
              {"temperature", 0},
              {"max_tokens", max_tokens}}
      .dump();
}

// The fixture's greedy text for `name` (its bytes, from text_hex).
std::string reference_text(const std::string& name) {
  std::ifstream jf(les::test::fixture_path("multimodal/ref-" + name + "-fa_off.json"));
  const json ref = json::parse(jf);
  const std::string hex = ref["generation"]["text_hex"].get<std::string>();
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

}  // namespace

TEST_CASE("les serve --mmproj: an image_url data URL gives llama.cpp's greedy text; bad image input gets 400",
          "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kTextModel);
  LES_REQUIRE_FIXTURE(mmproj, kMmproj);
  Server server(model, {"--mmproj", mmproj, "--chat-template", "chatml", "-c", "1024", "--max-images", "2"});
  httplib::Client c = server.client();
  CHECK(server.child->err().find("les serve: images: ") != std::string::npos);
  const std::string ppm = read_file(les::test::fixture_path("multimodal/test-224x224.ppm"));
  const std::string url = "data:image/x-portable-pixmap;base64," + base64(ppm);

  // llama-mtmd-cli's prompt: the image in front of the text in the user turn.
  const Reply r = post(c, "/v1/chat/completions", image_chat(json::array({image_part(url), text_part("Describe the image.")})));
  REQUIRE(r.status == 200);
  CHECK(r.body["choices"][0]["message"]["content"] == reference_text("224x224"));
  // The same as `les run --mmproj --image --chat` from the file.
  const les::test::RunResult run = les::test::run_les(
      "run -m " + les::test::sh_quote(model) + " --mmproj " + les::test::sh_quote(mmproj) + " --image " +
      les::test::sh_quote(les::test::fixture_path("multimodal/test-224x224.ppm")) +
      " --chat --chat-template chatml -p 'Describe the image.' --temp 0 -n 16 -t 1");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(r.body["choices"][0]["message"]["content"] == run.out);
  CHECK(r.body["choices"][0]["finish_reason"] == "length");
  CHECK(r.body["usage"]["prompt_tokens"] == 36);  // the fixture's n_past after the prompt
  CHECK(r.body["usage"]["completion_tokens"] == 16);
  // A second turn sends the image and the answer back: the image is not
  // encoded again. This 16-token answer's sampled tokens are not how its text
  // tokenizes (random weights), so the conversation is evaluated from the
  // start and the answer is a fresh context's.
  const std::string answer = r.body["choices"][0]["message"]["content"].get<std::string>();
  const json turn1 = json{{"role", "user"}, {"content", json::array({image_part(url), text_part("Describe the image.")})}};
  const json two_turns = json{{"messages", json::array({turn1, json{{"role", "assistant"}, {"content", answer}},
                                                        json{{"role", "user"}, {"content", "And now?"}}})},
                              {"temperature", 0},
                              {"max_tokens", 8}};
  const Reply r2 = post(c, "/v1/chat/completions", two_turns.dump());
  REQUIRE(r2.status == 200);
  CHECK(r2.body["choices"][0]["message"]["content"].get<std::string>().size() > 0);
  // (The log line comes after the reply: wait for it.)
  CHECK(server.child->wait_for_stderr("#2 chat: prompt ", 30));
  INFO(server.child->err());
  CHECK(server.child->err().find("(0 reused, 1 image, 0 encoded)") != std::string::npos);
  // A one-token answer tokenizes back to itself: its second turn continues
  // the context, reusing all 37 positions of the first request.
  const Reply one = post(c, "/v1/chat/completions",
                         image_chat(json::array({image_part(url), text_part("Describe the image.")}), 1));
  REQUIRE(one.status == 200);
  const json two_short =
      json{{"messages", json::array({turn1,
                                     json{{"role", "assistant"}, {"content", one.body["choices"][0]["message"]["content"]}},
                                     json{{"role", "user"}, {"content", "And now?"}}})},
           {"temperature", 0},
           {"max_tokens", 8}};
  const Reply r2_short = post(c, "/v1/chat/completions", two_short.dump());
  REQUIRE(r2_short.status == 200);
  CHECK(server.child->wait_for_stderr("#4 chat: prompt ", 30));
  CHECK(server.child->err().find("(37 reused, 1 image, 0 encoded)") != std::string::npos);
  // The same two requests again after another conversation: that starts over,
  // and both answers are the same as before (continuing gives a fresh context's).
  REQUIRE(post(c, "/v1/chat/completions", image_chat(json::array({image_part(url), text_part("Other.")}), 2)).status ==
          200);
  const Reply r2_fresh = post(c, "/v1/chat/completions", two_short.dump());
  CHECK(r2_fresh.body["choices"][0]["message"]["content"] == r2_short.body["choices"][0]["message"]["content"]);
  const Reply first_again = post(c, "/v1/chat/completions",
                                 image_chat(json::array({image_part(url), text_part("Describe the image.")})));
  CHECK(first_again.body["choices"][0]["message"]["content"] == reference_text("224x224"));
  // A text turn whose answer does not tokenize back to its sampled tokens (it
  // holds bytes the server sent as U+FFFD), then an image turn: the server
  // starts over instead of continuing, so the answer is a fresh context's
  // (asked again below after another conversation, which also starts over).
  const json hello = json{{"role", "user"}, {"content", "Hello there."}};
  const Reply h = post(c, "/v1/chat/completions",
                       json{{"messages", json::array({hello})}, {"temperature", 0}, {"max_tokens", 8}}.dump());
  REQUIRE(h.status == 200);
  const std::string hello_answer = h.body["choices"][0]["message"]["content"].get<std::string>();
  CHECK(hello_answer.find("\xEF\xBF\xBD") != std::string::npos);  // U+FFFD: the case this covers
  const std::string after_hello =
      json{{"messages", json::array({hello, json{{"role", "assistant"}, {"content", hello_answer}}, turn1})},
           {"temperature", 0},
           {"max_tokens", 8}}
          .dump();
  const Reply warm = post(c, "/v1/chat/completions", after_hello);
  REQUIRE(warm.status == 200);
  REQUIRE(post(c, "/v1/chat/completions", image_chat(json::array({image_part(url), text_part("Other.")}), 2)).status ==
          200);
  const Reply fresh = post(c, "/v1/chat/completions", after_hello);
  CHECK(warm.body["choices"][0]["message"]["content"] == fresh.body["choices"][0]["message"]["content"]);
  // A text request after it still works (no image positions reused).
  const Reply t = post(c, "/v1/chat/completions", chat_body("Describe the image.", 4, false));
  CHECK(t.status == 200);

  // Bad input: 400, the message names the part and the problem.
  const std::vector<std::pair<json, std::string>> bad = {
      {json::array({image_part("https://example.com/cat.png")}), "messages[0].content[0]: http(s) image URLs are not fetched"},
      {json::array({image_part("data:image/png;base64,%%%")}), "messages[0].content[0]: invalid base64"},
      {json::array({image_part("data:image/png," + base64(ppm))}), "must be base64"},
      {json::array({image_part("data:image/png;base64," + base64("this is not an image"))}),
       "messages[0].content[0]: the image cannot be used"},
      {json::array({image_part(url), image_part(url), image_part(url)}), "messages[0].content[2]: more than 2 images"},
      {json::array({image_part(url), text_part("what is <__media__>?")}), "the media marker"},
  };
  for (const auto& [content, want] : bad) {
    const Reply e = post(c, "/v1/chat/completions", image_chat(content));
    CHECK(e.status == 400);
    const std::string msg = e.body["error"]["message"].get<std::string>();
    INFO(msg);
    CHECK(msg.find(want) != std::string::npos);
  }
  // The server is still up and answers the image again.
  const Reply again = post(c, "/v1/chat/completions", image_chat(json::array({image_part(url), text_part("Describe the image.")})));
  CHECK(again.status == 200);
  CHECK(again.body["choices"][0]["message"]["content"] == reference_text("224x224"));
  CHECK(server.stop() == 0);
}

TEST_CASE("les serve: image parts without --mmproj, and images over --max-image-mb, get 400", "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kTextModel);
  LES_REQUIRE_FIXTURE(mmproj, kMmproj);
  const std::string url =
      "data:image/x-portable-pixmap;base64," + base64(read_file(les::test::fixture_path("multimodal/test-224x224.ppm")));
  {
    Server server(model, {"--chat-template", "chatml", "-c", "4096"});
    httplib::Client c = server.client();
    const Reply e = post(c, "/v1/chat/completions", image_chat(json::array({image_part(url)})));
    CHECK(e.status == 400);
    CHECK(e.body["error"]["message"].get<std::string>().find("--mmproj") != std::string::npos);
    CHECK(server.stop() == 0);
  }
  Server server(model, {"--mmproj", mmproj, "--chat-template", "chatml", "--max-image-mb", "0.1"});
  httplib::Client c = server.client();
  const Reply e = post(c, "/v1/chat/completions", image_chat(json::array({image_part(url)})));
  CHECK(e.status == 400);
  CHECK(e.body["error"]["message"].get<std::string>().find("150543 bytes; at most 104857") != std::string::npos);
  CHECK(server.stop() == 0);
}

TEST_CASE("les serve --mmproj: image requests from several clients at once all get the same text", "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kTextModel);
  LES_REQUIRE_FIXTURE(mmproj, kMmproj);
  Server server(model, {"--mmproj", mmproj, "--chat-template", "chatml"});
  const std::string url =
      "data:image/x-portable-pixmap;base64," + base64(read_file(les::test::fixture_path("multimodal/test-224x224.ppm")));
  const std::string body = image_chat(json::array({image_part(url), text_part("Describe the image.")}), 8);
  constexpr int kClients = 4;
  std::vector<int> status(kClients, -1);
  std::vector<std::string> text(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i)
    clients.emplace_back([&, i] {  // no Catch assertions off the test's thread
      httplib::Client cl("127.0.0.1", server.port);
      cl.set_read_timeout(120, 0);
      if (auto r = cl.Post("/v1/chat/completions", body, "application/json")) {
        status[i] = r->status;
        const json j = json::parse(r->body, nullptr, false);
        if (!j.is_discarded() && j.contains("choices")) text[i] = j["choices"][0]["message"]["content"].get<std::string>();
      }
    });
  for (auto& t : clients) t.join();
  const std::string want = reference_text("224x224").substr(0, text[0].size());
  for (int i = 0; i < kClients; ++i) {
    INFO("client " << i);
    CHECK(status[i] == 200);
    CHECK(text[i] == text[0]);
  }
  CHECK_FALSE(text[0].empty());
  CHECK(text[0] == want);  // 8 of the reference's 16 tokens: its prefix
  httplib::Client c = server.client();
  CHECK(get(c, "/health").status == 200);
  CHECK(server.stop() == 0);
}

namespace {

// The server's resident set (VmRSS of /proc/PID/status), KiB; -1 when unknown.
long rss_kib(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// A w x h binary PPM of pseudo-random pixels (a fixed xorshift sequence).
std::string noise_ppm(int w, int h, uint32_t seed) {
  std::string out = "P6\n" + std::to_string(w) + " " + std::to_string(h) + "\n255\n";
  out.reserve(out.size() + static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < static_cast<size_t>(w) * h * 3; ++i) {
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    out += static_cast<char>(seed & 0xff);
  }
  return out;
}

}  // namespace

TEST_CASE("les serve --mmproj: requests with large images do not grow the resident set request after request",
          "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kTextModel);
  LES_REQUIRE_FIXTURE(mmproj, kMmproj);
  Server server(model, {"--mmproj", mmproj, "--chat-template", "chatml", "-c", "2048", "--max-image-mb", "8"});
  // Four different 5.5 MiB images per request (a 31 MB body): with glibc's
  // default (rising) mmap threshold each such request left ~54 MiB more
  // resident than the one before.
  json parts = json::array();
  for (uint32_t i = 0; i < 4; ++i)
    parts.push_back(image_part("data:image/x-portable-pixmap;base64," + base64(noise_ppm(1600, 1200, 0x9e3779b9u + i))));
  parts.push_back(text_part("hi"));
  const std::string body = image_chat(parts, 2);
  httplib::Client c = server.client();
  std::vector<long> rss;
  for (int k = 0; k < 5; ++k) {
    const Reply r = post(c, "/v1/chat/completions", body);
    REQUIRE(r.status == 200);
    rss.push_back(rss_kib(server.child->pid()));
  }
  INFO("VmRSS after each request, KiB: " << rss[0] << " " << rss[1] << " " << rss[2] << " " << rss[3] << " " << rss[4]);
  REQUIRE(rss[1] > 0);
  // From the second request on, nothing new is kept: allow 16 MiB of slack
  // for allocator and thread noise, a third of one request's retention.
  CHECK(rss[4] - rss[1] < 16 * 1024);
  CHECK(server.stop() == 0);
}
