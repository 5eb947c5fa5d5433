// Rejection sampling of drafts (speculative_sampling.h) on hand-made logits:
// greedy accepts exactly the argmax chain, deterministic accept/reject at
// p = 0 / q <= p, the residual after a rejection, and malformed input. The
// distribution test on a real model is test_speculative_distribution.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <vector>

#include "core/speculative/speculative_sampling.h"

using les::Draft;
using les::Sampler;
using les::SamplerParams;
using les::verify_draft;

namespace {

Sampler make(float temperature, uint64_t seed = 3) {
  SamplerParams p;
  p.temperature = temperature;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = seed;
  auto s = Sampler::create(p);
  REQUIRE(s.ok());
  return std::move(s).value();
}

// rows of n_vocab = 4 logits.
std::vector<float> rows(std::initializer_list<std::vector<float>> r) {
  std::vector<float> out;
  for (const auto& x : r) out.insert(out.end(), x.begin(), x.end());
  return out;
}

}  // namespace

TEST_CASE("greedy verification accepts drafts while they are the argmax, then the argmax", "[speculative]") {
  Sampler s = make(0.0f);
  const auto lg = rows({{0, 5, 1, 0}, {3, 0, 0, 1}, {0, 0, 0, 9}, {1, 2, 3, 4}});
  Draft d;
  d.tokens = {1, 0, 2};  // 1 ok, 0 ok, 2 wrong (argmax 3)
  auto v = verify_draft(s, lg, 4, d, 3);
  REQUIRE(v.ok());
  CHECK(v->n_accepted == 2);
  CHECK(v->tokens == std::vector<int32_t>{1, 0, 3});
  // All accepted: the bonus token is row d's argmax.
  d.tokens = {1, 0, 3};
  v = verify_draft(s, lg, 4, d, 3);
  REQUIRE(v.ok());
  CHECK(v->n_accepted == 3);
  CHECK(v->tokens == std::vector<int32_t>{1, 0, 3, 3});
  // d = 0: plain decoding (row 0 only).
  v = verify_draft(s, std::span<const float>(lg).first(4), 4, d, 0);
  REQUIRE(v.ok());
  CHECK(v->tokens == std::vector<int32_t>{1});
}

TEST_CASE("stochastic verification: p(x) = 0 always rejects, the residual excludes x", "[speculative]") {
  const float ninf = -INFINITY;
  const auto lg = rows({{ninf, 0.0f, 0.0f, ninf}, {0, 0, 0, 0}});
  std::map<int32_t, int> seen;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Sampler s = make(1.0f, seed);
    Draft d;
    d.tokens = {3};  // impossible for the target
    auto v = verify_draft(s, lg, 4, d, 1);
    REQUIRE(v.ok());
    CHECK(v->n_accepted == 0);
    REQUIRE(v->tokens.size() == 1);
    ++seen[v->tokens[0]];
  }
  CHECK(seen.size() == 2);  // 1 and 2 only
  CHECK(seen.count(1) == 1);
  CHECK(seen.count(2) == 1);
}

TEST_CASE("stochastic verification: q(x) <= p(x) always accepts; residual of a q-drafter", "[speculative]") {
  const auto lg = rows({{0.0f, std::log(3.0f), 0.0f, 0.0f}, {0, 0, 0, 0}});  // p = {1/6, 1/2, 1/6, 1/6}
  Sampler s = make(1.0f);
  Draft d;
  d.tokens = {1};
  d.q.resize(1);
  d.q[0].ids = {1, 0};
  d.q[0].p = {0.4f, 0.6f};  // q(1) = 0.4 <= p(1) = 0.5
  for (int i = 0; i < 50; ++i) {
    auto v = verify_draft(s, lg, 4, d, 1);
    REQUIRE(v.ok());
    CHECK(v->n_accepted == 1);
  }
  // Draft 0 with q(0) = 0.6 > p(0) = 1/6: accepted with probability 5/18; on
  // rejection the residual max(0, p - q) is {1: 0.1, 2: 1/6, 3: 1/6}: never 0.
  d.tokens = {0};
  int accepted = 0, zero_after_reject = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    auto v = verify_draft(s, lg, 4, d, 1);
    REQUIRE(v.ok());
    accepted += v->n_accepted;
    if (v->n_accepted == 0 && v->tokens[0] == 0) ++zero_after_reject;
  }
  CHECK(zero_after_reject == 0);
  // Binomial(4000, 5/18): 6 standard deviations = 0.042.
  CHECK(std::abs(accepted / double(n) - 5.0 / 18.0) < 0.042);
}

TEST_CASE("verification refuses malformed input", "[speculative]") {
  Sampler s = make(0.0f);
  const auto lg = rows({{0, 1, 0, 0}, {0, 0, 1, 0}});
  Draft d;
  d.tokens = {1};
  CHECK(!verify_draft(s, lg, 4, d, 2).ok());                                  // more than drafted
  CHECK(!verify_draft(s, std::span<const float>(lg).first(5), 4, d, 1).ok());  // short rows
  d.tokens = {7};
  auto v = verify_draft(s, lg, 4, d, 1);
  REQUIRE(!v.ok());
  CHECK(v.status().message().find("outside") != std::string::npos);
  d.tokens = {1};
  d.q.resize(2);
  CHECK(!verify_draft(s, lg, 4, d, 1).ok());
}
