// `les run` under real signals, sent to a child process while it generates:
// the first SIGINT (Ctrl-C) or SIGTERM cancels the generation, and the text
// generated so far, "stop: cancelled" and the statistics are still printed,
// exit code 128 + signal; a second signal exits at once, without the summary.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "support/child_process.h"
#include "support/cli_tool.h"
#include "support/fixtures.h"

using les::test::ChildProcess;

namespace {

// A greedy run that takes seconds (8192 tokens of context, no stop at EOS), so
// a signal sent when its first text arrives finds it generating.
std::vector<std::string> long_run(const std::string& model) {
  return {les::test::les_binary(), "run", "-m", model, "--temp", "0", "-n", "-1", "--ignore-eos", "-c", "8192",
          "-t", "1", "-p", "CHAPTER XII."};
}

}  // namespace

TEST_CASE("les run: the first SIGINT or SIGTERM stops generation and still prints the summary", "[cli][signal]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  for (int sig : {SIGINT, SIGTERM}) {
    INFO("signal " << sig);
    ChildProcess child(long_run(model));
    REQUIRE(child.wait_for_stdout(1, 120));  // generating
    child.signal(sig);
    REQUIRE(child.wait(120));
    INFO("stderr: " << child.err());
    CHECK(child.term_signal() == 0);  // handled, not killed by it
    CHECK(child.exit_code() == 128 + sig);
    CHECK(child.err().find("interrupted") != std::string::npos);
    CHECK(child.err().find("(stop: cancelled)") != std::string::npos);
    CHECK(child.err().find("les run: prefill ") != std::string::npos);  // the statistics lines
    CHECK(child.err().find("les run: peak RSS") != std::string::npos);
    CHECK_FALSE(child.out().empty());  // the text generated before the signal
  }
}

TEST_CASE("les run: a second signal exits at once, without the summary", "[cli][signal]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  ChildProcess child(long_run(model));
  REQUIRE(child.wait_for_stdout(1, 120));
  // Both signals are pending when the child resumes, so the second is handled
  // before generation can observe the first (Linux delivers SIGINT, the lower
  // number, first: the exit code is then 128 + SIGTERM).
  child.signal(SIGSTOP);
  child.signal(SIGTERM);
  child.signal(SIGINT);
  child.signal(SIGCONT);
  REQUIRE(child.wait(120));
  INFO("stderr: " << child.err());
  CHECK(child.term_signal() == 0);
  CHECK((child.exit_code() == 128 + SIGINT || child.exit_code() == 128 + SIGTERM));
  CHECK(child.err().find("interrupted") != std::string::npos);
  CHECK(child.err().find("(stop: cancelled)") == std::string::npos);
  CHECK(child.err().find("les run: peak RSS") == std::string::npos);
}

TEST_CASE("les run: a signal during a long prefill stops it within one chunk, keeping nothing", "[cli][signal]") {
  // Issue 36, defect 3: the prompt was evaluated whole before the signal was
  // seen (a 245k-token prompt ran 13 minutes after SIGTERM), and then one
  // token was counted and never shown ("generated 1" with no text).
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  std::string text;
  while (text.size() < 120000) text += "It is a truth universally acknowledged, that a single man in possession ";
  const std::string prompt = les::test::temp_dir() + "/long-prompt.txt";
  FILE* f = std::fopen(prompt.c_str(), "wb");
  REQUIRE(f != nullptr);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  // The bound is measured, not assumed: a whole run of a prompt about one chunk long
  // (start, model load, one 512-token chunk, one token, exit) on this machine and
  // build. A stop within one chunk takes at most that (the chunk in progress, then
  // the exit); evaluating the rest of the prompt (~50 chunks) takes many times it.
  std::string one_chunk;
  while (one_chunk.size() < 2000) one_chunk += "It is a truth universally acknowledged, that a single man in possession ";
  const std::string short_prompt = les::test::temp_dir() + "/one-chunk-prompt.txt";
  f = std::fopen(short_prompt.c_str(), "wb");
  REQUIRE(f != nullptr);
  std::fwrite(one_chunk.data(), 1, one_chunk.size(), f);
  std::fclose(f);
  const auto s0 = std::chrono::steady_clock::now();
  ChildProcess reference({les::test::les_binary(), "run", "-m", model, "--temp", "0", "-n", "1", "-c", "32768", "-t",
                          "1", "-f", short_prompt});
  REQUIRE(reference.wait(300));
  REQUIRE(reference.exit_code() == 0);
  const double one_chunk_run = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
  for (int sig : {SIGINT, SIGTERM}) {
    INFO("signal " << sig);
    ChildProcess child({les::test::les_binary(), "run", "-m", model, "--temp", "0", "-n", "4", "-c", "32768", "-t",
                        "1", "-f", prompt});
    REQUIRE(child.wait_for_stderr(", n_ctx 32768, seed", 120));  // the banner: the prefill starts next
    const auto t0 = std::chrono::steady_clock::now();
    child.signal(sig);
    REQUIRE(child.wait(120));
    const double after_signal = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO("stderr: " << child.err() << "\nexited " << after_signal << " s after the signal");
    CHECK(child.term_signal() == 0);
    CHECK(child.exit_code() == 128 + sig);
    CHECK(child.err().find("prompt tokens 0, generated 0 (stop: cancelled)") != std::string::npos);
    CHECK(child.out().empty());  // nothing generated, nothing printed
    // At most one chunk-long run (measured above), with as much again for a busy
    // machine's noise; the whole prompt would take ~50 chunks.
    INFO("a run of one chunk took " << one_chunk_run << " s");
    CHECK(after_signal < 2.0 * one_chunk_run + 0.5);
  }
}
