// Small route traces written in the test (route_trace v1 text).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>
#include <algorithm>

namespace les::test {

// A trace of n_layer layers, n_expert experts, top-k uniformly random
// routing (fixed seed), every expert `bytes` bytes: one prefill token, then
// n_decode decode tokens.
inline std::string uniform_route_trace(int n_layer, int n_expert, int k, int n_decode, size_t bytes, uint64_t seed) {
  std::string s = "# route_trace v1\n# model=synthetic arch=test n_layer=" + std::to_string(n_layer) +
                  " n_expert=" + std::to_string(n_expert) + " n_expert_used=" + std::to_string(k) + "\n";
  for (int l = 0; l < n_layer; ++l)
    s += "# layer=" + std::to_string(l) + " expert_bytes=" + std::to_string(bytes) + " dense_bytes=1\n";
  s += "turn,phase,step,layer,slot,expert,weight,residency,expert_bytes\n";
  std::mt19937_64 rng(seed);
  for (int step = 0; step <= n_decode; ++step) {
    const int phase = step == 0 ? 0 : 1;
    for (int l = 0; l < n_layer; ++l) {
      std::vector<int> pool(static_cast<size_t>(n_expert));
      for (int e = 0; e < n_expert; ++e) pool[static_cast<size_t>(e)] = e;
      std::shuffle(pool.begin(), pool.end(), rng);
      for (int slot = 0; slot < k; ++slot)
        s += "0," + std::to_string(phase) + "," + std::to_string(step) + "," + std::to_string(l) + "," +
             std::to_string(slot) + "," + std::to_string(pool[static_cast<size_t>(slot)]) + ",0.1,0,0\n";
    }
  }
  return s;
}

// A shifting hot set: each layer's k experts come from a hot set of `hot`
// experts (random, fixed seed) that is replaced by a fresh random one every
// `period` tokens. One prefill token, then n_decode decode tokens.
inline std::string shifting_route_trace(int n_layer, int n_expert, int k, int hot, int period, int n_decode,
                                        size_t bytes, uint64_t seed) {
  std::string s = "# route_trace v1\n# model=synthetic arch=test n_layer=" + std::to_string(n_layer) +
                  " n_expert=" + std::to_string(n_expert) + " n_expert_used=" + std::to_string(k) + "\n";
  for (int l = 0; l < n_layer; ++l)
    s += "# layer=" + std::to_string(l) + " expert_bytes=" + std::to_string(bytes) + "\n";
  s += "turn,phase,step,layer,slot,expert,weight,residency,expert_bytes\n";
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int>> hot_set(static_cast<size_t>(n_layer));
  for (int step = 0; step <= n_decode; ++step) {
    if (step % period == 0)
      for (auto& h : hot_set) {
        std::vector<int> pool(static_cast<size_t>(n_expert));
        for (int e = 0; e < n_expert; ++e) pool[static_cast<size_t>(e)] = e;
        std::shuffle(pool.begin(), pool.end(), rng);
        h.assign(pool.begin(), pool.begin() + hot);
      }
    for (int l = 0; l < n_layer; ++l) {
      std::vector<int> h = hot_set[static_cast<size_t>(l)];
      std::shuffle(h.begin(), h.end(), rng);
      for (int slot = 0; slot < k; ++slot)
        s += "0," + std::to_string(step == 0 ? 0 : 1) + "," + std::to_string(step) + "," + std::to_string(l) + "," +
             std::to_string(slot) + "," + std::to_string(h[static_cast<size_t>(slot)]) + ",0.1,0,0\n";
    }
  }
  return s;
}

}  // namespace les::test
