// KV cache types: F16 (llama.cpp's default) and Q8_0. Creation errors name what
// was wrong; stored rows equal the reference conversions; and a Q8_0 cache on
// the trained F16 fixture still follows llama.cpp's reference (F16-cache run)
// at every clear step. The Q8_0 attention arithmetic itself is held to a
// derived bound in test_attention.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "golden_support.h"
#include "kernels/kernels.h"
#include "kernels/ref.h"

using namespace les;
using namespace les::test;

namespace {

KvCacheParams small_params(GgmlType type, int32_t head_dim) {
  KvCacheParams p;
  p.n_layer = 2;
  p.n_ctx = 8;
  p.head_dim = head_dim;
  p.head_dim_v = head_dim;
  p.n_embd_k = 2 * head_dim;
  p.n_embd_v = 2 * head_dim;
  p.type = type;
  return p;
}

}  // namespace

TEST_CASE("KV cache: unsupported types and Q8_0 head sizes are rejected with a message", "[kv]") {
  auto bad_type = KvCache::create(small_params(GgmlType::Q4_0, 64));
  REQUIRE_FALSE(bad_type.ok());
  CHECK(bad_type.status().code() == StatusCode::unsupported);
  CHECK(bad_type.status().message().find("Q4_0") != std::string::npos);

  auto bad_head = KvCache::create(small_params(GgmlType::Q8_0, 48));
  REQUIRE_FALSE(bad_head.ok());
  CHECK(bad_head.status().code() == StatusCode::unsupported);
  CHECK(bad_head.status().message().find("head_dim 48") != std::string::npos);

  KvCacheParams zero = small_params(GgmlType::F16, 64);
  zero.n_ctx = 0;
  auto bad_size = KvCache::create(zero);
  REQUIRE_FALSE(bad_size.ok());
  CHECK(bad_size.status().code() == StatusCode::invalid_argument);

  CHECK(KvCache::create(small_params(GgmlType::F16, 48)).ok());  // F16 takes any head size
  CHECK(KvCache::create(small_params(GgmlType::Q8_0, 64)).ok());
}

TEST_CASE("KV cache: stored rows are the reference F16 / Q8_0 conversions", "[kv]") {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  for (GgmlType type : {GgmlType::F16, GgmlType::Q8_0}) {
    INFO(ggml_type_name(type));
    auto kv = KvCache::create(small_params(type, 64));
    REQUIRE(kv.ok());
    const int64_t n = kv->params().n_embd_k;
    std::vector<float> k(static_cast<size_t>(n)), v(static_cast<size_t>(n));
    for (auto& x : k) x = nd(rng);
    for (auto& x : v) x = nd(rng);
    kv->store(1, 5, k.data(), v.data());
    REQUIRE(kv->k_row_bytes() == *ggml_row_bytes(type, n));
    std::vector<uint8_t> ek(kv->k_row_bytes()), ev(kv->v_row_bytes());
    if (type == GgmlType::F16) {
      kernels::quantize_row_f16_ref(k.data(), reinterpret_cast<fp16_t*>(ek.data()), n);
      kernels::quantize_row_f16_ref(v.data(), reinterpret_cast<fp16_t*>(ev.data()), n);
    } else {
      kernels::quantize_row_q8_0_ref(k.data(), reinterpret_cast<block_q8_0*>(ek.data()), n);
      kernels::quantize_row_q8_0_ref(v.data(), reinterpret_cast<block_q8_0*>(ev.data()), n);
    }
    CHECK(std::memcmp(kv->k_data(1) + 5 * kv->k_row_bytes(), ek.data(), ek.size()) == 0);
    CHECK(std::memcmp(kv->v_data(1) + 5 * kv->v_row_bytes(), ev.data(), ev.size()) == 0);
    // other positions and layers untouched (zero)
    const uint8_t* l0 = kv->k_data(0);
    CHECK(std::all_of(l0, l0 + 8 * kv->k_row_bytes(), [](uint8_t b) { return b == 0; }));
  }
}

// What a Q8_0 cache must preserve is the model's decisions: at every
// teacher-forced step where llama.cpp's top-1/top-2 margin is >= 0.05 the
// argmax is llama.cpp's, and free-running greedy follows it up to the first
// near-tie. The logit difference to our F16-cache run is reported, not bounded:
// it is set by router near-ties. The Q8_0 cache moves each router logit a
// little; where two experts are within that distance the top-k set differs from
// the F16-cache run (8 to 10 of the 128 steps of this fixture), and one
// different expert moves that step's logits by up to ~0.4. Which near-ties flip
// also depends on 1-ulp differences between kernel tiers (measured on one CPU:
// max |diff| 0.12 with the scalar tier, 0.37 with AVX2, from two extra flips),
// so a bound on it would be a bound tuned to one CPU. The report splits the
// steps into those before any routing difference and the rest.
TEST_CASE("Context with a Q8_0 KV cache follows llama.cpp on the trained F16 model", "[kv][golden]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(ref_path, "trained/reference/tiny-qwen3moe-F16.json");
  auto model = load_model(path);
  const auto ref = load_json(ref_path);
  ContextParams cp;
  cp.n_ctx = 256;
  cp.n_threads = 2;
  auto c16 = Context::create(*model, cp);
  cp.kv_type = GgmlType::Q8_0;
  auto c8 = Context::create(*model, cp);
  REQUIRE(c16.ok());
  REQUIRE(c8.ok());
  Context& f16 = **c16;
  Context& q8 = **c8;

  int checked = 0, agree = 0, all = 0, all_agree = 0, free_fail = 0;
  double min_checked_margin = 1e9;
  // Logit differences to the F16-cache run, [0]: steps before any routing
  // difference in this prompt, [1]: the rest.
  double max_diff[2] = {0, 0}, sum_sq[2] = {0, 0};
  size_t n_diff[2] = {0, 0};
  int n_steps[2] = {0, 0};
  // Each router call's selected expert sets, per run; compared after every decode.
  std::vector<int32_t> routes[2];
  auto record = [](std::vector<int32_t>& r) {
    return [&r](const RouterObservation& o) {
      r.push_back(o.layer);
      for (int32_t t = 0; t < o.n_tokens; ++t) {  // the set of experts per token (order within top-k aside)
        const size_t at = r.size();
        r.insert(r.end(), o.selected + t * o.n_expert_used, o.selected + (t + 1) * o.n_expert_used);
        std::sort(r.begin() + static_cast<std::ptrdiff_t>(at), r.end());
      }
    };
  };
  f16.set_router_observer(record(routes[0]));
  q8.set_router_observer(record(routes[1]));
  bool routing_differs = false;
  auto compare_logits = [&]() {
    routing_differs = routing_differs || routes[0] != routes[1];
    const int g = routing_differs ? 1 : 0;
    const auto a = f16.logits(), b = q8.logits();
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
      max_diff[g] = std::max(max_diff[g], d);
      sum_sq[g] += d * d;
    }
    n_diff[g] += a.size();
    ++n_steps[g];
  };
  auto decode_both = [&](std::span<const int32_t> toks) {
    routes[0].clear();
    routes[1].clear();
    REQUIRE(f16.decode(toks).ok());
    REQUIRE(q8.decode(toks).ok());
  };
  for (const auto& p : ref["prompts"]) {
    const auto toks = p["tokens_model"].get<std::vector<int32_t>>();
    const auto gids = p["greedy"]["ids"].get<std::vector<int32_t>>();
    const auto margins = p["greedy"]["margin_top1_top2"].get<std::vector<double>>();
    // teacher forcing along the reference greedy ids, both caches side by side
    f16.reset();
    q8.reset();
    routing_differs = false;
    decode_both(toks);
    // Free-running greedy with the Q8_0 cache feeds the same tokens as this pass
    // until our argmax first differs from the reference (golden_support.h), so
    // its prefix check (up to the first reference near-tie) is read off here.
    bool prefix_open = true;
    for (size_t i = 0; i < gids.size(); ++i) {
      compare_logits();
      const int32_t am = argmax(q8.logits());
      ++all;
      all_agree += am == gids[i];
      if (margins[i] >= 0.05) {
        ++checked;
        agree += am == gids[i];
        min_checked_margin = std::min(min_checked_margin, margins[i]);
      }
      if (prefix_open && margins[i] < 0.05) prefix_open = false;
      if (prefix_open && am != gids[i]) {
        ++free_fail;
        prefix_open = false;
      }
      if (i + 1 < gids.size()) decode_both(std::span<const int32_t>(&gids[i], 1));
    }
  }
  auto rms = [&](int g) { return n_diff[g] ? std::sqrt(sum_sq[g] / static_cast<double>(n_diff[g])) : 0.0; };
  std::printf(
      "Q8_0 KV on trained F16 (tier %s): teacher-forced %d/%d agree (margin>=0.05, smallest such margin %.3f), %d/%d "
      "all steps; free-run prefix failures %d; logits vs F16-KV run: %d steps with identical routing so far: max "
      "|diff| %.4f, rms %.4f; %d steps after a routing difference: max |diff| %.4f, rms %.4f\n",
      kernels::kernel_tier_name(kernels::best_kernel_tier()), agree, checked, min_checked_margin, all_agree, all,
      free_fail, n_steps[0], max_diff[0], rms(0), n_steps[1], max_diff[1], rms(1));
  REQUIRE(checked > 0);
  CHECK(agree == checked);
  CHECK(free_fail == 0);
}
