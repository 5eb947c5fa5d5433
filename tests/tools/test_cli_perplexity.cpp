// `les perplexity` end to end on the trained fixture: the first chunks agree
// with llama-perplexity's running estimate, the reference log-probabilities
// round trip (a model against its own file: KLD ~0, top-1 100 %; a quantised
// model: KLD > 0), and every refusal exits with a message.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <regex>
#include <string>

#include "support/cli_tool.h"
#include "support/fixtures.h"

using les::test::RunResult;
using les::test::run_les;
using les::test::sh_quote;

using les::test::number_after;

TEST_CASE("les perplexity: llama-perplexity's figures on the trained model", "[cli]") {
  LES_REQUIRE_FIXTURE(f16, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(q4, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  LES_REQUIRE_FIXTURE(text, "corpus/validation.txt");
  const std::string base = les::test::temp_dir() + "/f16.kld";
  std::remove(base.c_str());
  // -b 100: chunks of 256 in three batches must give the one-batch figures.
  const RunResult r = run_les("perplexity -m " + sh_quote(f16) + " -f " + sh_quote(text) +
                              " -b 100 --chunks 4 -t 2 --kl-divergence-base " + sh_quote(base));
  REQUIRE(r.exit_code == 0);
  // llama-perplexity -c 256 -b 256 --chunks 4 (llama.cpp 81ff7abe): [4]62.0847, +/- the 0.1 % target.
  const double ppl = number_after(r.out, "Final estimate: PPL = ");
  CHECK(ppl == Approx(62.0847).epsilon(0.001));
  CHECK_THAT(r.out, Catch::StartsWith("[1]") && Catch::Contains("[4]"));
  CHECK(r.out.find('\n', r.out.rfind("Final estimate: PPL = ")) == r.out.size() - 1);  // the last line
  CHECK(std::ifstream(base).good());
  CHECK_FALSE(std::ifstream(base + ".tmp").good());

  {  // the model against its own reference
    const RunResult k = run_les("perplexity -m " + sh_quote(f16) + " --kl-divergence --kl-divergence-base " +
                                sh_quote(base) + " -t 2");
    REQUIRE(k.exit_code == 0);
    CHECK(number_after(k.out, "Mean    KLD: ") < 1e-5);  // only the uint16 coding of the reference
    CHECK(number_after(k.out, "Same top p: ") == 100.0);
    CHECK(number_after(k.out, "Mean PPL(Q)/PPL(base)         : ") == Approx(1.0).epsilon(1e-4));
    CHECK(number_after(k.out, "Final estimate: PPL = ") == Approx(ppl).epsilon(1e-6));
  }
  {  // a quantised model against the F16 reference
    const RunResult k = run_les("perplexity -m " + sh_quote(q4) + " --kl-divergence --kl-divergence-base " +
                                sh_quote(base) + " -t 2");
    REQUIRE(k.exit_code == 0);
    const double kld = number_after(k.out, "Mean    KLD: ");
    CHECK(kld > 1e-4);
    CHECK(kld < 0.05);
    CHECK(number_after(k.out, "99.0%   KLD: ") > kld);
    const double top1 = number_after(k.out, "Same top p: ");
    CHECK(top1 > 80.0);
    CHECK(top1 < 100.0);
  }
  {  // refusals
    const RunResult no_ref = run_les("perplexity -m " + sh_quote(f16) + " --kl-divergence -t 2");
    CHECK(no_ref.exit_code == 2);
    CHECK_THAT(no_ref.err, Catch::Contains("--kl-divergence-base"));
    const RunResult wrong_c = run_les("perplexity -m " + sh_quote(f16) + " -c 128 --kl-divergence --kl-divergence-base " +
                                      sh_quote(base));
    CHECK(wrong_c.exit_code == 2);
    CHECK_THAT(wrong_c.err, Catch::Contains("reference's context 256"));
    // A truncated reference file.
    const std::string bytes = les::test::read_file(base);
    const std::string cut = les::test::temp_dir() + "/cut.kld";
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 10);
    const RunResult trunc = run_les("perplexity -m " + sh_quote(f16) + " --kl-divergence --kl-divergence-base " +
                                    sh_quote(cut));
    CHECK(trunc.exit_code == 1);
    CHECK_THAT(trunc.err, Catch::Contains("truncated or not this format"));
    const RunResult text_as_ref = run_les("perplexity -m " + sh_quote(f16) + " --kl-divergence --kl-divergence-base " +
                                          sh_quote(text));
    CHECK(text_as_ref.exit_code == 1);
    CHECK_THAT(text_as_ref.err, Catch::Contains("no _logits_ magic"));
    // A reference made with another vocabulary.
    LES_REQUIRE_FIXTURE(synth, "synthetic/qwen3moe-F16.gguf");
    const RunResult vocab = run_les("perplexity -m " + sh_quote(synth) + " --kl-divergence --kl-divergence-base " +
                                    sh_quote(base));
    CHECK(vocab.exit_code == 1);
    CHECK_THAT(vocab.err, Catch::Contains("vocabulary"));
  }
}

TEST_CASE("les perplexity: usage errors and a text too short", "[cli]") {
  LES_REQUIRE_FIXTURE(f16, "trained/tiny-qwen3moe-F16.gguf");
  const std::string shortf = les::test::temp_dir() + "/short.txt";
  std::ofstream(shortf) << "It is a truth universally acknowledged.\n";
  const RunResult r = run_les("perplexity -m " + sh_quote(f16) + " -f " + sh_quote(shortf));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("needs at least 512"));
  CHECK(run_les("perplexity -m " + sh_quote(f16)).exit_code == 2);
  CHECK(run_les("perplexity -m " + sh_quote(f16) + " -f " + sh_quote(shortf) + " -b 0").exit_code == 2);
  for (const char* c : {"1", "2"}) {  // a context that scores no position: no 1.0000 figures
    LES_REQUIRE_FIXTURE(text, "corpus/validation.txt");
    const RunResult tiny = run_les("perplexity -m " + sh_quote(f16) + " -f " + sh_quote(text) + " -c " + c);
    CHECK(tiny.exit_code == 2);
    CHECK_THAT(tiny.err, Catch::Contains("scores no token") && Catch::Contains("-c 3"));
    CHECK(tiny.out.empty());
  }
  const RunResult missing = run_les("perplexity -m " + sh_quote(f16) + " -f /nonexistent.txt");
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.err, Catch::Contains("/nonexistent.txt"));
}
