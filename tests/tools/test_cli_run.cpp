// `les run` end to end: the built tool on the trained fixture (greedy text
// equals llama.cpp's reference), the embedded default model, and error paths
// (missing file, garbage file, bad arguments) that must exit non-zero without
// crashing; and --budget-mb on every fixture model and through every --io
// backend (same text as resident).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_tool.h"
#include "support/fixtures.h"

using les::test::RunResult;
using les::test::read_file;
using les::test::run_les;
using les::test::sh_quote;

TEST_CASE("les run: missing model file is an error, not a crash", "[cli]") {
  auto r = run_les("run -m /nonexistent/model.gguf -n 4");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("/nonexistent/model.gguf") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("les run: a garbage file is an error, not a crash", "[cli]") {
  const std::string path = les::test::temp_dir() + "/garbage.gguf";
  {
    std::ofstream f(path, std::ios::binary);
    for (int i = 0; i < 4096; ++i) f.put(static_cast<char>((i * 131 + 7) & 0xFF));
  }
  auto r = run_les("run -m " + sh_quote(path) + " -n 4");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("garbage.gguf") != std::string::npos);
  // A truncated real header: GGUF magic, then nothing.
  const std::string trunc = les::test::temp_dir() + "/truncated.gguf";
  {
    std::ofstream f(trunc, std::ios::binary);
    f.write("GGUF\x03\x00\x00\x00", 8);
  }
  auto t = run_les("run -m " + sh_quote(trunc) + " -n 4");
  CHECK(t.exit_code == 1);
}

TEST_CASE("les run: bad arguments exit 2 with a message", "[cli]") {
  struct Case {
    const char* args;
    const char* mentions;
  };
  for (const Case& c : {Case{"run --temp -1", "temperature"}, Case{"run --top-p 1.5", "top_p"},
                        Case{"run --top-p 0", "top_p"}, Case{"run --min-p 2", "min_p"},
                        Case{"run --top-k -3", "top_k"}, Case{"run --repeat-penalty 0", "repeat_penalty"},
                        Case{"run --ctx -5", "ctx"}, Case{"run -n -7", "-n"}, Case{"run -t -1", "-t"},
                        Case{"run --budget-mb -1", "budget"}, Case{"run --io floppy", "--io"},
                        Case{"run --eviction random", "--eviction"}, Case{"run --no-such-flag", "no-such-flag"},
                        Case{"run --temp abc", "--temp"}, Case{"run --budget-mb inf", "budget"},
                        Case{"run --budget-mb nan", "budget"}, Case{"run --budget-mb 1e14", "budget"},
                        Case{"run --prefetch-c -7", "prefetch"}, Case{"run -t 100000", "maximum"},
                        Case{"run -t 2147483647", "maximum"}}) {
    auto r = run_les(std::string(c.args) + " -m /nonexistent.gguf");
    INFO(c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.mentions) != std::string::npos);
  }
  // A budget below the minimum is the caller's mistake too, and says the minimum.
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  for (const char* budget : {"0.1", "1e-300"}) {  // a tiny positive budget must not round to "resident"
    INFO(budget);
    auto small = run_les("run -m " + sh_quote(model) + " -n 4 --budget-mb " + budget);
    CHECK(small.exit_code == 2);
    CHECK(small.err.find("minimum") != std::string::npos);
    // A top-4 model's minimum is one expert slot (not "one layer's selected experts").
    CHECK(small.err.find(": 1 expert slot of ") != std::string::npos);
  }
}

TEST_CASE("les run: greedy text on the trained fixture equals llama.cpp's", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(ref_path, "trained/reference/tiny-qwen3moe-F16.json");
  const auto ref = nlohmann::json::parse(read_file(ref_path));
  const auto& p0 = ref["prompts"][0];
  REQUIRE(p0["index"] == 0);
  const std::string prompt = p0["text"];
  const std::string expected = p0["greedy"]["text"];
  auto r = run_les("run -m " + sh_quote(model) + " -p " + sh_quote(prompt) + " --temp 0 -n 32 -t 2");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == expected);
  CHECK(r.err.find("prompt tokens " + std::to_string(p0["tokens_model"].size())) != std::string::npos);
  CHECK(r.err.find("decode") != std::string::npos);
  CHECK(r.err.find("peak RSS") != std::string::npos);

  // A stop string cuts the same text just before it.
  const std::string stop = ", is";
  const size_t at = expected.find(stop);
  REQUIRE(at != std::string::npos);
  auto s = run_les("run -m " + sh_quote(model) + " -p " + sh_quote(prompt) + " --temp 0 -n 32 --stop " +
                   sh_quote(stop));
  REQUIRE(s.exit_code == 0);
  CHECK(s.out == expected.substr(0, at));
  CHECK(s.err.find("stop: stop_string") != std::string::npos);

  // Several --stop options: the earliest match in the text wins.
  const std::string late = expected.substr(expected.size() - 4), early = expected.substr(at + 2, 5);
  auto two = run_les("run -m " + sh_quote(model) + " -p " + sh_quote(prompt) + " --temp 0 -n 32 --stop " +
                     sh_quote(late) + " --stop " + sh_quote(early));
  REQUIRE(two.exit_code == 0);
  CHECK(two.out == expected.substr(0, expected.find(early)));
}

TEST_CASE("les run: without -m it generates and uses the embedded default", "[cli]") {
  const std::string cache = les::test::temp_dir() + "/xdg-cache";
  const std::string env = "XDG_CACHE_HOME=" + sh_quote(cache);
  auto r = run_les("run -n 16 --seed 5 -p 'The river'", env);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("no -m given: using the embedded default") != std::string::npos);
  CHECK(r.err.find("its output is not meaningful text") != std::string::npos);
  CHECK(r.err.find("(generated now)") != std::string::npos);
  CHECK(read_file(cache + "/les/default-tiny-qwen3moe.gguf").size() > 1000000);
  // The second run reuses the cached file and, with the same seed, prints the same text.
  auto again = run_les("run -n 16 --seed 5 -p 'The river'", env);
  REQUIRE(again.exit_code == 0);
  CHECK(again.err.find("(generated now)") == std::string::npos);
  CHECK(again.out == r.out);
  CHECK_FALSE(r.out.empty());
}

TEST_CASE("les synth writes a preset; bad presets exit 2", "[cli]") {
  const std::string out = les::test::temp_dir() + "/synth-tiny.gguf";
  auto r = run_les("synth --preset tiny -o " + sh_quote(out));
  REQUIRE(r.exit_code == 0);
  CHECK(read_file(out).substr(0, 4) == "GGUF");
  auto bad = run_les("synth --preset nope -o " + sh_quote(out));
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("tiny") != std::string::npos);
}

TEST_CASE("les run warns when the budget is below one token's worth of experts", "[cli]") {
  // synthetic/qwen3moe-Q4_K_M: the warning names the budget and one token's worth.
  LES_REQUIRE_FIXTURE(model, "synthetic/qwen3moe-Q4_K_M.gguf");
  const std::string args = "run -m " + sh_quote(model) + " -p 'Hello world' -n 2 --temp 0 --ignore-eos --budget-mb ";
  const RunResult small = run_les(args + "1");
  REQUIRE(small.exit_code == 0);
  CHECK(small.err.find("warning: --budget-mb 1.0 is below one token's worth of experts") != std::string::npos);
  const RunResult large = run_les(args + "4096");
  REQUIRE(large.exit_code == 0);
  CHECK(large.err.find("below one token's worth") == std::string::npos);
  const RunResult bad = run_les(args + "4096 --eviction mru");
  CHECK(bad.exit_code == 2);
  for (const char* p : {"adaptive", "next_use", "lfu_aged", "lru"}) {
    INFO(p);
    CHECK(run_les(args + "4096 --eviction " + p).exit_code == 0);
  }
}

TEST_CASE("les run --budget-mb: every fixture model prints the resident run's greedy text", "[cli]") {
  // Streaming experts through a 4 MiB cache must not change a single token;
  // a dense model has nothing to stream and runs resident with a note.
  LES_REQUIRE_FIXTURE(trained, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const std::string dir = trained.substr(0, trained.rfind("/trained/"));
  for (const char* f : {"trained/tiny-qwen3moe-F16.gguf", "trained/tiny-qwen3moe-Q4_K_M.gguf",
                        "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf", "synthetic/qwen3moe-F16.gguf",
                        "synthetic/qwen3moe-Q8_0.gguf", "synthetic/qwen3moe-Q4_K_M.gguf",
                        "synthetic/qwen3moe-Q3_K_M.gguf", "synthetic/qwen3moe-MIXED.gguf",
                        "synthetic/mixtral-Q4_K_M.gguf", "synthetic/qwen2moe-Q4_K_M.gguf",
                        "synthetic/llama-dense-Q4_K_M.gguf"}) {
    INFO(f);
    const std::string args = "run -m " + sh_quote(dir + "/" + f) + " -p 'Hello world' -n 8 --temp 0 --ignore-eos";
    const RunResult resident = run_les(args);
    REQUIRE(resident.exit_code == 0);
    const RunResult streamed = run_les(args + " --budget-mb 4 --stats");
    REQUIRE(streamed.exit_code == 0);
    CHECK(streamed.out == resident.out);
    CHECK(!streamed.out.empty());
    if (std::string(f).find("dense") != std::string::npos) {
      CHECK(streamed.err.find("no routed experts") != std::string::npos);
    } else {
      CHECK(streamed.err.find("hit rate") != std::string::npos);
      // The backend in effect and whether O_DIRECT is (issue 36): --io auto says which it chose.
      CHECK_THAT(streamed.err, Catch::Contains("(--io auto: io_uring reads, O_DIRECT ") ||
                                   Catch::Contains("(--io auto: pread reads, O_DIRECT "));
    }
  }
}

TEST_CASE("les run: a prompt longer than the context is an error naming the sizes", "[cli]") {
  LES_REQUIRE_FIXTURE(q4, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  std::string prompt;
  for (int i = 0; i < 40; ++i) prompt += "the quick brown fox jumps ";
  const RunResult r = run_les("run -m " + sh_quote(q4) + " -c 32 -n 4 -p " + sh_quote(prompt));
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("CONTEXT_FULL") || Catch::Contains("context full") ||
                        Catch::Contains("the prompt has"));
  // A prompt that fits and then fills the context ends as context_full, exit 0.
  const RunResult full = run_les("run -m " + sh_quote(q4) + " -c 32 -n 100 --ignore-eos -p hello");
  CHECK(full.exit_code == 0);
  CHECK_THAT(full.err, Catch::Contains("(stop: context_full)"));
}

TEST_CASE("les run --io: each backend streams the resident run's text; one not built is refused by name", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-F16.gguf");
  const std::string args = "run -m " + sh_quote(model) + " -p 'Hello world' -n 8 --temp 0 --ignore-eos -t 2";
  const RunResult resident = run_les(args);
  REQUIRE(resident.exit_code == 0);
  REQUIRE(!resident.out.empty());
  const RunResult version = run_les("--version");
  REQUIRE(version.exit_code == 0);
  for (const char* io : {"auto", "pread", "io_uring", "dispatch"}) {
    INFO("--io " << io);
    const RunResult streamed = run_les(args + " --budget-mb 4 --stats --io " + io);
    if (std::string(io) == "dispatch") {
#if defined(LES_HAVE_DISPATCH_IO)
      CHECK(version.out.find("dispatch") != std::string::npos);
#else
      CHECK(version.out.find("dispatch") == std::string::npos);
      CHECK(streamed.exit_code != 0);
      CHECK(streamed.err.find("dispatch_io backend: not in this build") != std::string::npos);
      continue;
#endif
    }
    if (std::string(io) == "io_uring" && streamed.exit_code != 0 &&
        streamed.err.find("io_uring") != std::string::npos) {
      WARN("io_uring unavailable here: " << streamed.err);
      continue;
    }
    REQUIRE(streamed.exit_code == 0);
    CHECK(streamed.out == resident.out);
    CHECK(streamed.err.find("hit rate") != std::string::npos);
  }
}
