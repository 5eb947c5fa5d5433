// The router (core/model/router.h), the one top-k rule of LES: selection by
// gating probability plus the exp_probs_b bias (a bias changes the choice,
// never the weights), ties to the lower expert id, weights renormalised and
// scaled as the ArchConfig says (tests set the variants no supported
// architecture's file may select: test::ModelAccess); softmax and sigmoid gating.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "core/model/router.h"
#include "support/tiny_model.h"

using namespace les;
using test::build_tiny_model;
using test::TinyModel;
using test::TinySpec;

namespace {

// The k ids of largest score, best first, ties to the lower id (written out
// independently of Router).
std::vector<int32_t> top_k(const std::vector<double>& score, int32_t k) {
  std::vector<int32_t> ids(score.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return score[a] > score[b]; });
  ids.resize(static_cast<size_t>(k));
  return ids;
}

const float* bias_of(const Model& m) {
  const WeightView& b = m.weights().layers[0].exp_probs_b;
  return b.present() ? reinterpret_cast<const float*>(b.data) : nullptr;
}

}  // namespace

TEST_CASE("router: the selection bias changes the choice; weights are the unbiased probabilities", "[router]") {
  for (bool sigmoid : {false, true}) {
    DYNAMIC_SECTION((sigmoid ? "sigmoid" : "softmax") << " gating") {
      TinySpec s;
      s.n_expert = 8;
      s.n_expert_used = 2;
      s.exp_probs_b = true;
      if (sigmoid) s.gating = ExpertGating::sigmoid;
      TinyModel tm = build_tiny_model(s);
      INFO(tm.status.to_string());
      REQUIRE(tm.model);
      const Model& m = *tm.model;
      auto router = Router::of(m, 0);
      REQUIRE(router.ok());
      const int64_t n = 64, E = m.hparams().n_embd, ne = s.n_expert, k = s.n_expert_used;
      std::mt19937 rng(7);
      const std::vector<float> x = test::randn(static_cast<size_t>(n * E), 1.0f, rng);
      RouterOutput out;
      MatmulScratch ms;
      REQUIRE(router->route(x.data(), n, out, ms).ok());
      const float* bias = bias_of(m);
      REQUIRE(bias != nullptr);
      int changed = 0;
      for (int64_t t = 0; t < n; ++t) {
        const float* p = out.probs.data() + t * ne;
        std::vector<double> with_bias(static_cast<size_t>(ne)), without(static_cast<size_t>(ne));
        for (int64_t e = 0; e < ne; ++e) {
          with_bias[e] = static_cast<double>(p[e] + bias[e]);  // the float sum the router ranks by
          without[e] = p[e];
        }
        const std::vector<int32_t> want = top_k(with_bias, static_cast<int32_t>(k));
        const std::vector<int32_t> got(out.selected.begin() + t * k, out.selected.begin() + (t + 1) * k);
        CHECK(got == want);
        changed += top_k(without, static_cast<int32_t>(k)) != want;
        // Weights: the selected experts' probabilities (no bias), renormalised to sum 1 (qwen3moe default).
        double sum = 0;
        for (int64_t j = 0; j < k; ++j) sum += p[want[j]];
        for (int64_t j = 0; j < k; ++j) CHECK(out.weights[t * k + j] == Approx(p[want[j]] / sum).epsilon(1e-6));
      }
      INFO(changed << " of " << n << " tokens choose differently because of the bias");
      CHECK(changed > 0);  // else this test could not tell a router that ignores the bias
    }
  }
}

TEST_CASE("router: ties go to the lower expert id, the bias breaks them", "[router]") {
  TinySpec s;
  s.n_expert = 8;
  s.n_expert_used = 3;
  TinyModel plain = build_tiny_model(s);
  REQUIRE(plain.model);
  auto r = Router::of(*plain.model, 0);
  REQUIRE(r.ok());
  const std::vector<float> equal(8, 0.125f);
  RouterOutput scratch;
  int32_t ids[3] = {-1, -1, -1};
  r->top_k_experts(equal.data(), 3, ids, scratch);
  CHECK(std::vector<int32_t>(ids, ids + 3) == std::vector<int32_t>{0, 1, 2});

  s.exp_probs_b = true;
  TinyModel biased = build_tiny_model(s);
  REQUIRE(biased.model);
  auto rb = Router::of(*biased.model, 0);
  REQUIRE(rb.ok());
  const float* bias = bias_of(*biased.model);
  std::vector<double> score(bias, bias + 8);
  for (double& v : score) v = static_cast<double>(0.125f + static_cast<float>(v));
  rb->top_k_experts(equal.data(), 3, ids, scratch);
  CHECK(std::vector<int32_t>(ids, ids + 3) == top_k(score, 3));
}

TEST_CASE("router: weights renormalised or not, scaled, as the ArchConfig says", "[router]") {
  TinySpec s;
  s.n_expert = 4;
  s.n_expert_used = 2;
  s.renorm = false;
  s.weights_scale = 2.5f;
  TinyModel tm = build_tiny_model(s);
  REQUIRE(tm.model);
  auto r = Router::of(*tm.model, 0);
  REQUIRE(r.ok());
  const float probs[4] = {0.1f, 0.4f, 0.3f, 0.2f};
  const int32_t ids[2] = {1, 2};
  float w[2];
  r->expert_weights(probs, ids, 2, w);
  CHECK(w[0] == 0.4f * 2.5f);
  CHECK(w[1] == 0.3f * 2.5f);
}

TEST_CASE("router: a layer out of range is refused by name", "[router]") {
  TinyModel tm = build_tiny_model(TinySpec{});
  REQUIRE(tm.model);
  auto r = Router::of(*tm.model, 5);
  CHECK(r.status().code() == StatusCode::invalid_argument);
  CHECK_THAT(r.status().message(), Catch::Contains("layer 5"));
  CHECK(Router::of(*tm.model, -1).status().code() == StatusCode::invalid_argument);
}
