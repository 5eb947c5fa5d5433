// `les serve`'s reading of image input without a server: base64 and data:
// URLs (serve/data_url.h) on known vectors (RFC 4648 section 10) and every
// malformed form, and chat content parts of type image_url
// (serve/request.h): the marker at the part's place, the bytes in order, and
// each bad part refused with a message naming it.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/data_url.h"
#include "serve/request.h"

using namespace les::tool;
using nlohmann::json;

namespace {

std::string as_text(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

std::string chat_with(const json& content) {
  return json{{"messages", json::array({json{{"role", "user"}, {"content", content}}})}}.dump();
}

json image_part(const std::string& url) { return json{{"type", "image_url"}, {"image_url", {{"url", url}}}}; }

// The error of a chat body that must be refused.
RequestError refused(const std::string& body, const ImageLimits& limits = {}) {
  RequestError e;
  auto r = parse_completion_request(body, Endpoint::kChat, &e, limits);
  INFO(body.substr(0, 200));
  CHECK_FALSE(r.has_value());
  return e;
}

}  // namespace

TEST_CASE("base64: RFC 4648 test vectors, whitespace, URL-safe digits, bad input", "[serve]") {
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", ""},         {"Zg==", "f"},       {"Zm8=", "fo"},          {"Zm9v", "foo"},
      {"Zm9vYg==", "foob"}, {"Zm9vYmE=", "fooba"}, {"Zm9vYmFy", "foobar"}, {"Zm9vYmE", "fooba"}};
  for (const auto& [in, out] : vectors) {
    std::string err;
    auto d = decode_base64(in, 1000, &err);
    INFO(in << ": " << err);
    REQUIRE(d.has_value());
    CHECK(as_text(*d) == out);
  }
  std::string err;
  auto wrapped = decode_base64("Zm9v\r\nYmFy\n", 1000, &err);
  REQUIRE(wrapped.has_value());
  CHECK(as_text(*wrapped) == "foobar");
  auto url_safe = decode_base64("-_-_", 1000, &err);
  REQUIRE(url_safe.has_value());
  CHECK(*url_safe == std::vector<uint8_t>{0xfb, 0xff, 0xbf});
  for (const char* bad : {"Zm9v!", "Zg==Zg==", "Z", "Zm9vY", "Zg==="}) {
    err.clear();
    CHECK_FALSE(decode_base64(bad, 1000, &err).has_value());
    INFO(bad);
    CHECK(err.find("invalid base64") != std::string::npos);
  }
  // The size bound is checked before decoding.
  CHECK_FALSE(decode_base64("Zm9vYmFy", 5, &err).has_value());
  CHECK(err.find("6 bytes; at most 5") != std::string::npos);
  CHECK(decode_base64("Zm9vYmFy", 6, &err).has_value());
}

TEST_CASE("data URLs: image types taken, everything else refused by name", "[serve]") {
  std::string err;
  auto png = image_from_data_url("data:image/png;base64,Zm9v", 100, &err);
  REQUIRE(png.has_value());
  CHECK(as_text(*png) == "foo");
  CHECK(image_from_data_url("DATA:Image/JPEG;base64,Zm9v", 100, &err).has_value());
  CHECK(image_from_data_url("data:image/x-portable-pixmap;base64,Zm9v", 100, &err).has_value());
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"https://example.com/cat.png", "not fetched"},
      {"http://example.com/cat.png", "not fetched"},
      {"file:///etc/passwd", "must be a data: URL"},
      {"data:image/png;base64", "no ','"},
      {"data:image/png,Zm9v", "must be base64"},
      {"data:text/plain;base64,Zm9v", "\"text/plain\""},
      {"data:;base64,Zm9v", "\"\""},
      {"data:image/png;base64,", "no data"},
      {"data:image/png;base64,Zm9v*", "invalid base64"},
      {"data:image/png;base64,Zm9vYmFy", "at most 4"},
  };
  for (const auto& [url, want] : bad) {
    err.clear();
    INFO(url);
    CHECK_FALSE(image_from_data_url(url, 4, &err).has_value());
    INFO(err);
    CHECK(err.find(want) != std::string::npos);
  }
}

TEST_CASE("chat content parts: image_url parts become markers in place, bytes in order", "[serve]") {
  const json content = json::array({image_part("data:image/png;base64,Zm9v"), json{{"type", "text"}, {"text", "A"}},
                                    json{{"type", "image_url"}, {"image_url", "data:image/jpeg;base64,YmFy"}},
                                    json{{"type", "text"}, {"text", "B"}}});
  RequestError e;
  auto r = parse_completion_request(chat_with(content), Endpoint::kChat, &e);
  INFO(e.message);
  REQUIRE(r.has_value());
  REQUIRE(r->messages.size() == 1);
  CHECK(r->messages[0].content == std::string(LES_MEDIA_MARKER) + "A" + LES_MEDIA_MARKER + "B");
  REQUIRE(r->images.size() == 2);
  CHECK(as_text(r->images[0].bytes) == "foo");
  CHECK(r->images[0].param == "messages[0].content[0]");
  CHECK(as_text(r->images[1].bytes) == "bar");
  CHECK(r->images[1].param == "messages[0].content[2]");
  // Text-only requests carry no images.
  auto t = parse_completion_request(chat_with("hello"), Endpoint::kChat, &e);
  REQUIRE(t.has_value());
  CHECK(t->images.empty());
}

TEST_CASE("chat content parts: bad image parts refused with 400 messages naming the part", "[serve]") {
  const std::string ok = "data:image/png;base64,Zm9v";
  const std::vector<std::pair<json, std::string>> bad = {
      {json::array({image_part("https://example.com/a.png")}), "messages[0].content[0]: http(s) image URLs are not fetched"},
      {json::array({image_part("data:image/png;base64,@@@@")}), "messages[0].content[0]: invalid base64"},
      {json::array({image_part("data:image/gif;base64,Zm9v")}), "\"image/gif\""},
      {json::array({json{{"type", "image_url"}}}), "messages[0].content[0].image_url is missing"},
      {json::array({json{{"type", "image_url"}, {"image_url", json::object()}}}), ".image_url.url is missing"},
      {json::array({json{{"type", "image_url"}, {"image_url", {{"url", 5}}}}}), ".image_url.url must be a string"},
      {json::array({json{{"type", "input_audio"}}}), "not supported (text and image_url are)"},
  };
  for (const auto& [content, want] : bad) {
    const RequestError e = refused(chat_with(content));
    INFO(e.message);
    CHECK(e.message.find(want) != std::string::npos);
    CHECK(e.param.rfind("messages[0].content[0]", 0) == 0);
  }
  // Too many images, too large an image.
  ImageLimits limits;
  limits.max_images = 2;
  limits.max_image_bytes = 3;
  const RequestError many = refused(chat_with(json::array({image_part(ok), image_part(ok), image_part(ok)})), limits);
  CHECK(many.message.find("messages[0].content[2]: more than 2 images") != std::string::npos);
  CHECK(many.param == "messages[0].content[2]");
  const RequestError big = refused(chat_with(json::array({image_part("data:image/png;base64,Zm9vYg==")})), limits);
  CHECK(big.message.find("4 bytes; at most 3") != std::string::npos);
}
