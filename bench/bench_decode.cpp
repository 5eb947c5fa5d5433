// Decode speed of a model (default: the trained fixture's Q4_K_M) with 1 and 2
// threads, next to the memory-bandwidth bound for the bytes each token touches.
//
//   bench_decode [--model PATH] [--tokens N] [--threads 1,2] [--json]
//
// Bound: a decode step reads every dense weight once (attention, norms,
// routers, output head; one row of token_embd) plus, per layer, the
// n_expert_used selected experts' gate/up/down slabs. bytes/token divided by
// the read bandwidth measured in this run (a plain load-and-sum over 1 GiB
// with the same thread count, best of 5) is the fastest any engine could
// decode without caching weights in CPU caches.
// It measures and prints; it asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/context.h"
#include "core/gguf_reader.h"
#include "core/model.h"

namespace {

using Clock = std::chrono::steady_clock;

// Best-of-5 read bandwidth in bytes/s over a 1 GiB buffer split across n threads.
double read_bandwidth(int n_threads) {
  const size_t n_words = (size_t{1} << 30) / sizeof(uint64_t);
  std::vector<uint64_t> buf(n_words);
  for (size_t i = 0; i < n_words; ++i) buf[i] = i;  // touch every page
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    std::vector<uint64_t> sums(static_cast<size_t>(n_threads), 0);
    auto t0 = Clock::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < n_threads; ++t) {
      ts.emplace_back([&, t] {
        const size_t begin = n_words * static_cast<size_t>(t) / static_cast<size_t>(n_threads);
        const size_t end = n_words * static_cast<size_t>(t + 1) / static_cast<size_t>(n_threads);
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        size_t i = begin;
        for (; i + 4 <= end; i += 4) {
          s0 += buf[i];
          s1 += buf[i + 1];
          s2 += buf[i + 2];
          s3 += buf[i + 3];
        }
        for (; i < end; ++i) s0 += buf[i];
        sums[static_cast<size_t>(t)] = s0 + s1 + s2 + s3;
      });
    }
    for (auto& th : ts) th.join();
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    uint64_t total = 0;
    for (uint64_t s : sums) total += s;
    if (total == 42) std::fputs("", stderr);  // keep the sums alive
    best = std::max(best, static_cast<double>(n_words * sizeof(uint64_t)) / secs);
  }
  return best;
}

struct TouchedBytes {
  uint64_t dense = 0;    // every non-expert tensor, token_embd counted as one row
  uint64_t experts = 0;  // n_layer * n_expert_used * one expert's gate+up+down
  uint64_t total() const { return dense + experts; }
};

TouchedBytes bytes_per_token(const les::gguf::GgufFile& f, int32_t n_expert_used) {
  TouchedBytes b;
  for (const auto& t : f.tensors()) {
    const std::string_view name = t.name;
    if (name.find("_exps.") != std::string_view::npos) {
      const uint64_t n_expert = static_cast<uint64_t>(std::max<int64_t>(1, t.ne[2]));
      b.experts += t.n_bytes / n_expert * static_cast<uint64_t>(n_expert_used);
    } else if (name == "token_embd.weight") {
      b.dense += t.row_bytes();
    } else {
      b.dense += t.n_bytes;
    }
  }
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_path;
  if (const char* fx = std::getenv("LES_FIXTURES_DIR")) model_path = std::string(fx) + "/trained/tiny-qwen3moe-Q4_K_M.gguf";
#ifdef LES_FIXTURES_DIR
  if (model_path.empty()) model_path = std::string(LES_FIXTURES_DIR) + "/trained/tiny-qwen3moe-Q4_K_M.gguf";
#endif
  int n_tokens = 64;
  bool json = false;
  std::vector<int> threads{1, 2};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") json = true;
    else if (a == "--model" && i + 1 < argc) model_path = argv[++i];
    else if (a == "--tokens" && i + 1 < argc) n_tokens = std::atoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) {
      threads.clear();
      for (const char* p = argv[++i]; *p;) {
        threads.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    } else {
      std::fprintf(stderr, "usage: bench_decode [--model PATH] [--tokens N] [--threads 1,2] [--json]\n");
      return 2;
    }
  }
  if (n_tokens < 1 || threads.empty() || *std::min_element(threads.begin(), threads.end()) < 1) {
    std::fprintf(stderr, "bench_decode: --tokens and --threads must be >= 1\n");
    return 2;
  }

  nlohmann::json out;
  out["model"] = model_path;
  out["decode_tokens"] = n_tokens;
  out["runs"] = nlohmann::json::array();
  for (int nt : threads) {
    les::ModelParams mp;
    mp.n_threads = nt;
    auto model = les::Model::load(model_path, mp);
    if (!model.ok()) {
      std::fprintf(stderr, "bench_decode: %s\n", model.status().to_string().c_str());
      return 1;
    }
    const auto& hp = (*model)->hparams();
    const TouchedBytes tb = bytes_per_token((*model)->file(), hp.n_expert_used);
    les::ContextParams cp;
    cp.n_threads = nt;
    cp.n_ctx = n_tokens + 16;
    auto ctx = les::Context::create(**model, cp);
    if (!ctx.ok()) {
      std::fprintf(stderr, "bench_decode: %s\n", ctx.status().to_string().c_str());
      return 1;
    }
    // One start token (id 1: BOS in SPM vocabularies), then greedy decode of n_tokens single tokens.
    auto& c = **ctx;
    const int32_t start[1] = {hp.n_vocab > 1 ? 1 : 0};
    if (auto s = c.decode(start); !s.ok()) {
      std::fprintf(stderr, "bench_decode: %s\n", s.to_string().c_str());
      return 1;
    }
    double secs = 0;
    for (int i = 0; i < n_tokens; ++i) {
      auto lg = c.logits();
      const int32_t next =
          static_cast<int32_t>(std::max_element(lg.begin(), lg.end()) - lg.begin());
      const int32_t one[1] = {next};
      auto t0 = Clock::now();
      if (auto s = c.decode(one); !s.ok()) {
        std::fprintf(stderr, "bench_decode: %s\n", s.to_string().c_str());
        return 1;
      }
      secs += std::chrono::duration<double>(Clock::now() - t0).count();
    }
    const double tok_s = n_tokens / secs;
    const double bw = read_bandwidth(nt);
    const double bound = bw / static_cast<double>(tb.total());
    nlohmann::json r;
    r["threads"] = nt;
    r["decode_tok_per_s"] = tok_s;
    r["read_bandwidth_gb_per_s"] = bw / 1e9;
    r["bytes_per_token"] = tb.total();
    r["dense_bytes_per_token"] = tb.dense;
    r["expert_bytes_per_token"] = tb.experts;
    r["bandwidth_bound_tok_per_s"] = bound;
    r["fraction_of_bound"] = tok_s / bound;
    out["runs"].push_back(r);
    if (!json)
      std::printf("threads %d: decode %.1f tok/s | read bandwidth %.2f GB/s, %.2f MB/token (dense %.2f + experts %.2f) "
                  "-> bound %.1f tok/s (%.0f%% of bound)\n",
                  nt, tok_s, bw / 1e9, tb.total() / 1e6, tb.dense / 1e6, tb.experts / 1e6, bound, 100 * tok_s / bound);
  }
  if (json) std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
