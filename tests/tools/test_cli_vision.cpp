// `les run --mmproj FILE --image PATH` and `les chat` with /image on the
// multimodal fixtures: the text llama-mtmd-cli printed for the 224x224 image
// (greedy, 16 tokens, chatml), the raw prompt with the image in front, the
// memory split naming the encoder, and every error (--image without --mmproj,
// a missing or corrupt image, a file that is no mmproj, another projector type,
// a text model without the marker tokens) a non-zero exit with a message, never
// a crash.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>

#include "support/cli_tool.h"
#include "support/fixtures.h"
#include "support/gguf_copy.h"

using les::test::RunResult;
using les::test::run_les;
using les::test::sh_quote;

namespace {

std::string fx(const char* rel) { return les::test::fixture_path(std::string("multimodal/") + rel); }

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = les::test::temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// llama-mtmd-cli's text for the 224x224 image (cli-224x224.out.txt holds it between newlines).
std::string reference_text() {
  std::string t = read_text(fx("cli-224x224.out.txt"));
  while (!t.empty() && t.front() == '\n') t.erase(0, 1);
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t;
}

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// Every decimal number in `s` written as before + digits + after, in order.
std::vector<int> numbers_after(const std::string& s, const std::string& before, const std::string& after) {
  std::vector<int> out;
  for (size_t at = s.find(before); at != std::string::npos; at = s.find(before, at + 1)) {
    size_t end = at + before.size();
    while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
    if (end > at + before.size() && s.compare(end, after.size(), after) == 0)
      out.push_back(std::stoi(s.substr(at + before.size(), end - at - before.size())));
  }
  return out;
}

}  // namespace

TEST_CASE("les run --mmproj --image: llama-mtmd-cli's text for the 224x224 image", "[cli][vision]") {
  LES_REQUIRE_FIXTURE(model, "multimodal/qwen35moe-mm-F16.gguf");
  const std::string base = "run -m " + sh_quote(model) + " --mmproj " +
                           sh_quote(fx("mmproj-minicpmv4_6-tiny-F16.gguf")) + " --image " + sh_quote(fx("test-224x224.ppm")) + " -n 16 --temp 0 -t 2 ";
  const RunResult r = run_les(base + "--chat --chat-template chatml -p 'Describe the image.'");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == reference_text());
  CHECK(has(r.err, "test-224x224.ppm: 18 positions"));
  CHECK(has(r.err, "prompt tokens 36, generated 16"));

  // Without --chat: the raw prompt with the image in front; two images; --stats; the memory split.
  const RunResult raw = run_les(base + "--image " + sh_quote(fx("test-448x224.ppm")) +
                                " -p 'Describe.' --stats --mem-limit-mb 512 --vision-release");
  INFO(raw.err);
  REQUIRE(raw.exit_code == 0);
  CHECK(has(raw.err, "prompt tokens 79"));  // 18 + 56 image positions + "Describe." (5 tokens)
  CHECK(has(raw.err, "+ vision encoder "));
  CHECK(has(raw.err, "vision: 2 images (4 chunks), 66 image tokens"));
  CHECK(has(raw.err, "weights resident 0.0 of 1.4 MiB"));
}

TEST_CASE("les run --image: errors exit non-zero with a message", "[cli][vision]") {
  LES_REQUIRE_FIXTURE(model, "multimodal/qwen35moe-mm-F16.gguf");
  const std::string mmproj = fx("mmproj-minicpmv4_6-tiny-F16.gguf");
  const std::string m = "run -m " + sh_quote(model) + " -n 2 ";
  struct Case {
    std::string args;
    int code;
    const char* mentions;
  };
  const std::string dir = les::test::temp_dir();
  const std::string corrupt = write_temp("corrupt.jpg", "\xff\xd8\xff\xe0 not really a jpeg");
  const std::string resampler = dir + "/mmproj-resampler.gguf";
  les::test::copy_gguf_with_strings(mmproj, resampler, {{"clip.projector_type", "resampler"}});
  std::string plain_model = les::test::fixture_path("synthetic/qwen35moe-F16.gguf");
  const Case cases[] = {
      {m + "--image " + sh_quote(fx("test-224x224.ppm")), 2, "--image needs --mmproj"},
      {m + "--vision-release", 2, "--vision-release needs --mmproj"},
      {m + "--mtp --mmproj " + sh_quote(mmproj) + " --image " + sh_quote(fx("test-224x224.ppm")), 2,
       "--mtp cannot be combined with --image"},
      {m + "--mmproj " + sh_quote(mmproj) + " --image " + sh_quote(dir), 1, "is a directory"},
      {m + "--mmproj " + sh_quote(mmproj) + " --image " + sh_quote(dir + "/none.png"), 1, "none.png"},
      {m + "--mmproj " + sh_quote(mmproj) + " --image " + sh_quote(corrupt), 1, "corrupt.jpg"},
      {m + "--mmproj " + sh_quote(model) + " --image " + sh_quote(fx("test-224x224.ppm")), 1, "not an mmproj"},
      {m + "--mmproj " + sh_quote(resampler) + " --image " + sh_quote(fx("test-224x224.ppm")), 1, "'resampler'"},
      {m + "--mmproj " + sh_quote(dir + "/missing.gguf"), 1, "missing.gguf"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const RunResult r = run_les(c.args);
    INFO(r.err);
    CHECK(r.exit_code == c.code);
    CHECK(has(r.err, c.mentions));
    CHECK(r.out.empty());
  }
  if (!plain_model.empty()) {
    const RunResult r = run_les("run -m " + sh_quote(plain_model) + " -n 2 --mmproj " + sh_quote(mmproj) + " --image " +
                                sh_quote(fx("test-224x224.ppm")));
    CHECK(r.exit_code == 1);
    CHECK(has(r.err, "<image>"));
  }
}

TEST_CASE("les chat: /image attaches an image to the next message", "[cli][chat][vision]") {
  LES_REQUIRE_FIXTURE(model, "multimodal/qwen35moe-mm-F16.gguf");
  const std::string input = write_temp(
      "chat-image.txt", "/image " + fx("test-224x224.ppm") + "\n/image " + les::test::temp_dir() +
                            "/nope.png\nDescribe the image.\nAnd now?\n/reset\n/image\nhello\n");
  const RunResult r = run_les("chat -m " + sh_quote(model) + " --mmproj " +
                              sh_quote(fx("mmproj-minicpmv4_6-tiny-F16.gguf")) +
                              " --chat-template chatml --temp 0 -n 16 -t 2 --ignore-eos --stats < " +
                              sh_quote(input));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind(reference_text() + "\n", 0) == 0);  // the first answer is llama-mtmd-cli's
  // This 16-token answer's sampled tokens are not how its text tokenizes (a
  // random-weight model): the second turn is evaluated from the start.
  const std::vector<int> reused = numbers_after(r.err, "(", " reused by the last turn)");
  REQUIRE(reused.size() >= 2);
  CHECK(reused[0] == 0);
  CHECK(reused[1] == 0);
  // A one-token answer tokenizes back to itself: the second turn continues
  // the context (the image's rows are not evaluated again), reusing every
  // position of the first turn, prompt and answer.
  const std::string in_short = write_temp("chat-image-short.txt", "/image " + fx("test-224x224.ppm") +
                                                                    "\nDescribe the image.\nAnd now?\n");
  const RunResult s = run_les("chat -m " + sh_quote(model) + " --mmproj " +
                              sh_quote(fx("mmproj-minicpmv4_6-tiny-F16.gguf")) +
                              " --chat-template chatml --temp 0 -n 1 -t 2 --ignore-eos --stats < " + sh_quote(in_short));
  INFO(s.err);
  REQUIRE(s.exit_code == 0);
  const std::vector<int> s_reused = numbers_after(s.err, "(", " reused by the last turn)");
  const std::vector<int> s_context = numbers_after(s.err, "les chat: context ", " of ");
  REQUIRE(s_reused.size() == 2);
  REQUIRE(s_context.size() == 2);
  CHECK(s_reused[1] == s_context[0]);
  CHECK(has(r.err, "1 image attached to the next message"));
  CHECK(has(r.err, "/image: I/O error"));
  CHECK(has(r.err, "/image PATH: the path is missing"));
  // A message typing the image placeholder itself is refused and the chat goes on
  // (it used to end the chat with the C API's marker-count error).
  const std::string in3 = write_temp("chat-marker.txt", "/image " + fx("test-224x224.ppm") +
                                                            "\n<__media__> hi\nDescribe the image.\n");
  const RunResult m = run_les("chat -m " + sh_quote(model) + " --mmproj " +
                              sh_quote(fx("mmproj-minicpmv4_6-tiny-F16.gguf")) +
                              " --chat-template chatml --temp 0 -n 16 -t 2 --ignore-eos < " + sh_quote(in3));
  INFO(m.err);
  CHECK(m.exit_code == 0);
  CHECK(has(m.err, "the image placeholder"));
  CHECK(m.out.rfind(reference_text() + "\n", 0) == 0);  // the image stayed attached to the next message
  // Without --mmproj, /image is refused and the chat goes on.
  const std::string in2 = write_temp("chat-noimage.txt", "/image x.png\nhello\n");
  const RunResult n = run_les("chat -m " + sh_quote(model) + " --temp 0 -n 2 -t 2 < " + sh_quote(in2));
  CHECK(n.exit_code == 0);
  CHECK(has(n.err, "/image needs --mmproj"));
}
