// Prefill and decode speed of models (default: the three trained fixture files,
// F16, Q4_K_M and mixed Q3_K/Q4_K) with 1 and 2 threads, each next to the
// memory-bandwidth bound for the bytes that run touched per token.
//
//   bench_decode [--model PATH]... [--prompt N] [--tokens N] [--threads 1,2] [--json]
//
// Per model and thread count:
//  * prefill: one decode() of an N-token prompt (default 128; token ids spread
//    over the vocabulary, fixed), best of 3 after a warm-up; tok/s = N / time.
//  * decode: greedy, --tokens single-token decode() calls (default 64) after
//    that prompt; tok/s = tokens / summed decode time.
//  * bytes touched: every dense tensor once (attention, norms, routers,
//    output head; token_embd counted as the rows looked up), plus the slabs of
//    the (layer, expert) pairs the router actually selected, counted by the
//    router observer during the timed run: in prefill each selected expert is
//    read once for the whole batch, in decode once per token. bytes/token =
//    that total divided by the tokens processed.
//  * bound = read bandwidth / (bytes/token): the speed of an engine limited
//    only by streaming those bytes from RAM. The read bandwidth (load-and-sum
//    over 256 MiB with the same thread count, best of 3) is measured right
//    before each model's runs, so it sees the same machine load. The weights
//    of these tiny models fit in L2/L3, so the measured speeds can beat a RAM
//    bound: the bound is the reference line for large models.
// The 1-minute load average is printed (the machine may be shared).
// It measures and prints; it asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bench_support.h"
#include "core/model/context.h"
#include "core/gguf/gguf_reader.h"
#include "core/model/model.h"

namespace {

using les::bench::Clock;
using les::bench::load_average;
using les::bench::read_bandwidth;
using les::bench::seconds_since;

// Bytes of the model file's tensors, split into what every token reads and the
// per-(layer, expert) slabs.
struct ModelBytes {
  uint64_t dense = 0;         // non-expert tensors except token_embd
  uint64_t embd_row = 0;      // one row of token_embd
  std::map<int32_t, uint64_t> expert_slab;  // layer -> gate+up+down bytes of one expert
};

ModelBytes model_bytes(const les::gguf::GgufFile& f) {
  ModelBytes b;
  for (const auto& t : f.tensors()) {
    const std::string_view name = t.name;
    if (name.find("_exps") != std::string_view::npos && name.rfind("blk.", 0) == 0) {
      const int32_t layer = std::atoi(std::string(name.substr(4)).c_str());
      const uint64_t n_expert = static_cast<uint64_t>(std::max<int64_t>(1, t.ne[2]));
      b.expert_slab[layer] += t.n_bytes / n_expert;
    } else if (name == "token_embd.weight") {
      b.embd_row = t.row_bytes();
    } else {
      b.dense += t.n_bytes;
    }
  }
  return b;
}

// Counts the expert slabs the router selects: per call of decode(), the distinct
// (layer, expert) pairs (each read once for the batch).
struct ExpertCounter {
  std::set<std::pair<int32_t, int32_t>> call;
  uint64_t bytes = 0;  // accumulated over closed calls
  const ModelBytes* mb = nullptr;

  void observe(const les::RouterObservation& o) {
    for (int32_t i = 0; i < o.n_tokens * o.n_expert_used; ++i) call.insert({o.layer, o.selected[i]});
  }
  void close_call() {
    for (const auto& [layer, e] : call) {
      (void)e;
      auto it = mb->expert_slab.find(layer);
      if (it != mb->expert_slab.end()) bytes += it->second;
    }
    call.clear();
  }
};

struct Run {
  double tok_per_s = 0, bytes_per_token = 0, bound = 0;
};

nlohmann::json run_json(const Run& r) {
  return {{"tok_per_s", r.tok_per_s},
          {"bytes_per_token", r.bytes_per_token},
          {"bandwidth_bound_tok_per_s", r.bound},
          {"fraction_of_bound", r.tok_per_s / r.bound}};
}

int fail(const les::Status& s) {
  std::fprintf(stderr, "bench_decode: %s\n", s.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string fixtures;
  if (const char* fx = std::getenv("LES_FIXTURES_DIR")) fixtures = fx;
#ifdef LES_FIXTURES_DIR
  if (fixtures.empty()) fixtures = LES_FIXTURES_DIR;
#endif
  std::vector<std::string> models;
  int n_prompt = 128, n_tokens = 64;
  bool json = false;
  std::vector<int> threads{1, 2};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--model" && i + 1 < argc) {
      models.push_back(argv[++i]);
    } else if (a == "--tokens" && i + 1 < argc) {
      n_tokens = std::atoi(argv[++i]);
    } else if (a == "--prompt" && i + 1 < argc) {
      n_prompt = std::atoi(argv[++i]);
    } else if (a == "--threads" && i + 1 < argc) {
      threads.clear();
      for (const char* p = argv[++i]; *p;) {
        threads.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    } else {
      std::fprintf(stderr,
                   "usage: bench_decode [--model PATH]... [--prompt N] [--tokens N] [--threads 1,2] [--json]\n");
      return 2;
    }
  }
  if (n_tokens < 1 || n_prompt < 1 || threads.empty() || *std::min_element(threads.begin(), threads.end()) < 1) {
    std::fprintf(stderr, "bench_decode: --prompt, --tokens and --threads must be >= 1\n");
    return 2;
  }
  if (models.empty()) {
    for (const char* f : {"tiny-qwen3moe-F16.gguf", "tiny-qwen3moe-Q4_K_M.gguf", "tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf"})
      models.push_back(fixtures + "/trained/" + f);
  }

  nlohmann::json out;
  out["prompt_tokens"] = n_prompt;
  out["decode_tokens"] = n_tokens;
  out["hardware_threads"] = std::thread::hardware_concurrency();
  out["load_average_1min_start"] = load_average();
  out["runs"] = nlohmann::json::array();
  if (!json)
    std::printf("load average (1 min) at start: %.2f on %u hardware threads\n", load_average(),
                std::thread::hardware_concurrency());
  for (const std::string& path : models) {
    for (int nt : threads) {
      les::ModelParams mp;
      mp.n_threads = nt;
      auto model = les::Model::load(path, mp);
      if (!model.ok()) return fail(model.status());
      const auto& hp = (*model)->hparams();
      const ModelBytes mb = model_bytes((*model)->file());
      les::ContextParams cp;
      cp.n_threads = nt;
      cp.n_ctx = n_prompt + n_tokens + 1;
      cp.n_batch = n_prompt;
      auto ctx = les::Context::create(**model, cp);
      if (!ctx.ok()) return fail(ctx.status());
      auto& c = **ctx;
      ExpertCounter counter;
      counter.mb = &mb;
      bool counting = false;
      c.set_router_observer([&](const les::RouterObservation& o) {
        if (counting) counter.observe(o);
      });
      std::vector<int32_t> prompt(static_cast<size_t>(n_prompt));
      prompt[0] = hp.n_vocab > 1 ? 1 : 0;  // BOS in SPM vocabularies
      for (int i = 1; i < n_prompt; ++i)
        prompt[static_cast<size_t>(i)] = static_cast<int32_t>((7919ull * static_cast<uint64_t>(i)) % static_cast<uint64_t>(hp.n_vocab));

      const double bw = read_bandwidth(nt);
      const double load = load_average();

      // Prefill: warm-up, then best of 3 (the expert count of the best run).
      if (auto s = c.decode(prompt); !s.ok()) return fail(s);
      double best = 1e30;
      uint64_t prefill_expert_bytes = 0;
      for (int rep = 0; rep < 3; ++rep) {
        c.reset();
        counter.bytes = 0;
        counting = true;
        auto t0 = Clock::now();
        if (auto s = c.decode(prompt); !s.ok()) return fail(s);
        const double secs = seconds_since(t0);
        counting = false;
        counter.close_call();
        if (secs < best) {
          best = secs;
          prefill_expert_bytes = counter.bytes;
        }
      }
      Run prefill;
      prefill.tok_per_s = n_prompt / best;
      prefill.bytes_per_token =
          static_cast<double>(mb.dense + prefill_expert_bytes) / n_prompt + static_cast<double>(mb.embd_row);
      prefill.bound = bw / prefill.bytes_per_token;

      // Decode: greedy single tokens after the prompt.
      double secs = 0;
      counter.bytes = 0;
      for (int i = 0; i < n_tokens; ++i) {
        auto lg = c.logits();
        const int32_t one[1] = {static_cast<int32_t>(std::max_element(lg.begin(), lg.end()) - lg.begin())};
        counting = true;
        auto t0 = Clock::now();
        if (auto s = c.decode(one); !s.ok()) return fail(s);
        secs += seconds_since(t0);
        counting = false;
        counter.close_call();
      }
      Run decode;
      decode.tok_per_s = n_tokens / secs;
      decode.bytes_per_token =
          static_cast<double>(mb.dense + mb.embd_row) + static_cast<double>(counter.bytes) / n_tokens;
      decode.bound = bw / decode.bytes_per_token;

      const std::string name = path.substr(path.find_last_of('/') + 1);
      nlohmann::json r;
      r["model"] = name;
      r["threads"] = nt;
      r["read_bandwidth_gb_per_s"] = bw / 1e9;
      r["load_average_1min"] = load;
      r["prefill"] = run_json(prefill);
      r["decode"] = run_json(decode);
      out["runs"].push_back(r);
      if (!json)
        std::printf("%-42s thr %d | prefill %7.1f tok/s (bound %8.1f, %.2f MB/tok) | decode %6.1f tok/s (bound %6.1f, "
                    "%.2f MB/tok) | read bw %.2f GB/s, load %.2f\n",
                    name.c_str(), nt, prefill.tok_per_s, prefill.bound, prefill.bytes_per_token / 1e6,
                    decode.tok_per_s, decode.bound, decode.bytes_per_token / 1e6, bw / 1e9, load);
    }
  }
  out["load_average_1min_end"] = load_average();
  if (json) std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
