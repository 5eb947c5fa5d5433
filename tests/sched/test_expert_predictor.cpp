// The lookahead predictor ranks by the router's own rule (core/model/router.h):
// given a layer's real router input and c = k it names exactly the experts
// the router selects, with softmax and sigmoid gating, also when the
// exp_probs_b bias changes the choice (the predictor used to ignore the bias
// under softmax gating); by_votes orders the candidates of several tokens.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "core/model/router.h"
#include "sched/expert_predictor.h"
#include "support/tiny_model.h"

using namespace les;
using namespace les::sched;

TEST_CASE("predictor with c = k on the router's input is the router's choice, bias included", "[sched]") {
  for (bool sigmoid : {false, true}) {
    DYNAMIC_SECTION((sigmoid ? "sigmoid" : "softmax") << " gating") {
      test::TinySpec s;
      s.n_layer = 2;
      s.n_expert = 8;
      s.n_expert_used = 2;
      s.exp_probs_b = true;
      if (sigmoid) s.gating = ExpertGating::sigmoid;
      test::TinyModel tm = test::build_tiny_model(s);
      INFO(tm.status.to_string());
      REQUIRE(tm.model);
      const Model& m = *tm.model;
      const int64_t n = 64, E = m.hparams().n_embd, ne = s.n_expert, k = s.n_expert_used;
      std::mt19937 rng(11);
      const std::vector<float> u = test::randn(static_cast<size_t>(n * E), 1.0f, rng);
      for (int32_t layer : {0, 1}) {
        auto router = Router::of(m, layer);
        REQUIRE(router.ok());
        RouterOutput routed;
        MatmulScratch ms;
        REQUIRE(router->route(u.data(), n, routed, ms).ok());
        ExpertPredictor predictor(m, static_cast<int32_t>(k));
        std::vector<int32_t> predicted;
        REQUIRE(predictor.predict(layer, u.data(), n, predicted).ok());
        CHECK(predicted == routed.selected);
        // The test can tell: ranking without the bias would choose differently for some token.
        int differ = 0;
        for (int64_t t = 0; t < n; ++t) {
          const float* p = routed.probs.data() + t * ne;
          std::vector<int32_t> ids(static_cast<size_t>(ne));
          for (int32_t e = 0; e < ne; ++e) ids[e] = e;
          std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return p[a] > p[b]; });
          std::vector<int32_t> no_bias(ids.begin(), ids.begin() + k);
          std::vector<int32_t> real(routed.selected.begin() + t * k, routed.selected.begin() + (t + 1) * k);
          differ += no_bias != real;
        }
        INFO("layer " << layer << ": the bias changes " << differ << " of " << n << " choices");
        CHECK(differ > 0);
      }
    }
  }
}

TEST_CASE("predictor: c > k extends the router's ranking; layers without a router are refused", "[sched]") {
  test::TinySpec s;
  s.n_expert = 8;
  s.n_expert_used = 2;
  s.exp_probs_b = true;
  test::TinyModel tm = test::build_tiny_model(s);
  REQUIRE(tm.model);
  const Model& m = *tm.model;
  const int64_t n = 16, E = m.hparams().n_embd;
  std::mt19937 rng(3);
  const std::vector<float> u = test::randn(static_cast<size_t>(n * E), 1.0f, rng);
  ExpertPredictor two(m, 2), four(m, 4);
  std::vector<int32_t> p2, p4;
  REQUIRE(two.predict(0, u.data(), n, p2).ok());
  REQUIRE(four.predict(0, u.data(), n, p4).ok());
  for (int64_t t = 0; t < n; ++t)  // the top-4 starts with the top-2
    CHECK(std::equal(p2.begin() + t * 2, p2.begin() + t * 2 + 2, p4.begin() + t * 4));
  CHECK(two.predict(3, u.data(), n, p2).code() == StatusCode::invalid_argument);
}

TEST_CASE("by_votes orders candidates by votes, then best rank, then id", "[sched]") {
  // Three tokens, c = 2: expert 5 named twice, 1 and 7 once each at rank 0, 2 once at rank 1.
  const std::vector<int32_t> rows = {5, 2, 1, 5, 7, 3};
  CHECK(ExpertPredictor::by_votes(rows, 2, 8) == std::vector<int32_t>{5, 1, 7, 2, 3});
  CHECK(ExpertPredictor::by_votes(rows, 2, 8, 2) == std::vector<int32_t>{7, 3});  // from row 2 on
}
