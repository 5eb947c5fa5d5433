// Tokenizer throughput: tokenize and detokenize MB/s (of UTF-8 text) and
// tokens/s for each vocabulary, on the validation text of the fixture corpus
// (corpus/validation.txt, 0.56 MB of English novels).
//
//   bench_tokenizer [--text PATH] [--vocab GGUF]... [--reps N] [--json]
//
// Defaults: the trained fixture model (SPM, 8192 pieces), the synthetic
// qwen3moe (BPE, qwen2 pre-tokenizer) and llama.cpp's GPT-2 and DeepSeek-LLM
// vocabularies. One warm-up pass, then the best of N (default 5) timed passes,
// single thread. It measures and prints; it asserts nothing.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gguf/gguf_reader.h"
#include "core/tokenizer/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string fixtures_dir() {
  const char* env = std::getenv("LES_FIXTURES_DIR");
  return env != nullptr ? env : LES_FIXTURES_DIR;
}

}  // namespace

int main(int argc, char** argv) {
  std::string text_path = fixtures_dir() + "/corpus/validation.txt";
  std::vector<std::string> vocabs;
  int reps = 5;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") json = true;
    else if (a == "--text" && i + 1 < argc) text_path = argv[++i];
    else if (a == "--vocab" && i + 1 < argc) vocabs.emplace_back(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: bench_tokenizer [--text PATH] [--vocab GGUF]... [--reps N] [--json]\n");
      return 2;
    }
  }
  if (vocabs.empty()) {
    for (const char* rel : {"trained/tiny-qwen3moe-F16.gguf", "synthetic/qwen3moe-F16.gguf",
                            "tokenizer/ggml-vocab-gpt-2.gguf", "tokenizer/ggml-vocab-deepseek-llm.gguf"}) {
      vocabs.push_back(fixtures_dir() + "/" + rel);
    }
  }
  std::ifstream f(text_path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", text_path.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  const double mb = static_cast<double>(text.size()) / 1e6;

  nlohmann::json results = nlohmann::json::array();
  if (!json) std::printf("text: %s (%.2f MB), best of %d, 1 thread\n", text_path.c_str(), mb, reps);
  for (const std::string& path : vocabs) {
    auto file = les::gguf::GgufFile::open(path, les::gguf::ReadOptions{.use_mmap = false});
    if (!file.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), file.status().to_string().c_str());
      continue;
    }
    auto tok = les::Tokenizer::from_gguf(**file);
    if (!tok.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), tok.status().to_string().c_str());
      continue;
    }
    std::vector<int32_t> ids;
    double best_enc = 1e30, best_dec = 1e30;
    for (int r = 0; r <= reps; ++r) {  // r == 0 is the warm-up
      auto t0 = Clock::now();
      auto out = (*tok)->tokenize(text, false, false);
      auto t1 = Clock::now();
      if (!out.ok()) break;
      ids = std::move(out).value();
      auto back = (*tok)->detokenize(ids);
      auto t2 = Clock::now();
      if (r > 0) {
        best_enc = std::min(best_enc, std::chrono::duration<double>(t1 - t0).count());
        best_dec = std::min(best_dec, std::chrono::duration<double>(t2 - t1).count());
      }
    }
    const auto& v = (*tok)->vocab();
    const double n_ids = static_cast<double>(ids.size());
    nlohmann::json r = {{"vocab", path},
                        {"model", v.model_name()},
                        {"pre", v.pre()},
                        {"n_vocab", v.n_tokens()},
                        {"n_tokens", ids.size()},
                        {"tokenize_mb_s", mb / best_enc},
                        {"tokenize_tok_s", n_ids / best_enc},
                        {"detokenize_mb_s", mb / best_dec}};
    results.push_back(r);
    if (!json) {
      std::printf("%-45s %-5s %-13s n_vocab %6d  tokens %7zu  tokenize %6.2f MB/s (%8.0f tok/s)  detokenize %7.1f MB/s\n",
                  path.substr(path.rfind('/') + 1).c_str(), v.model_name().c_str(), v.pre().c_str(), v.n_tokens(),
                  ids.size(), mb / best_enc, n_ids / best_enc, mb / best_dec);
    }
  }
  if (json) std::printf("%s\n", results.dump(1).c_str());
  return 0;
}
