// Sampler: greedy ties, each filter on hand-made logits, penalties, seed
// determinism, distribution sanity, parameter validation.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "core/sampler.h"

using les::Sampler;
using les::SamplerParams;

namespace {

// Every filter off, temperature 1: a plain softmax draw.
SamplerParams plain(uint64_t seed = 1) {
  SamplerParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = seed;
  return p;
}

Sampler make(const SamplerParams& p) {
  auto r = Sampler::create(p);
  REQUIRE(r.ok());
  return std::move(r).value();
}

// The set of ids drawn over n samples.
std::set<int32_t> support(Sampler& s, const std::vector<float>& logits, int n = 2000) {
  std::set<int32_t> ids;
  for (int i = 0; i < n; ++i) {
    auto r = s.sample(logits);
    REQUIRE(r.ok());
    ids.insert(*r);
  }
  return ids;
}

}  // namespace

TEST_CASE("greedy picks the argmax, ties to the lowest id", "[sampler]") {
  SamplerParams p = plain();
  p.temperature = 0.0f;
  Sampler s = make(p);
  CHECK(*s.sample(std::vector<float>{0.1f, 2.0f, -1.0f, 1.9f}) == 1);
  CHECK(*s.sample(std::vector<float>{0.0f, 3.0f, 1.0f, 3.0f, 3.0f}) == 1);
  CHECK(*s.sample(std::vector<float>{5.0f, 5.0f}) == 0);
  const float ninf = -std::numeric_limits<float>::infinity();
  CHECK(*s.sample(std::vector<float>{ninf, ninf, -100.0f}) == 2);
}

TEST_CASE("greedy ignores top-k/top-p/min-p and the seed", "[sampler]") {
  SamplerParams p;  // llama.cpp defaults
  p.temperature = 0.0f;
  std::vector<float> logits{0.0f, 1.0f, 4.0f, 4.0f, 2.0f};
  for (uint64_t seed : {0ull, 7ull, 12345ull}) {
    p.seed = seed;
    Sampler s = make(p);
    for (int i = 0; i < 10; ++i) CHECK(*s.sample(logits) == 2);
  }
}

TEST_CASE("top-k keeps exactly the k largest logits", "[sampler]") {
  SamplerParams p = plain();
  p.top_k = 2;
  Sampler s = make(p);
  // Nearly flat: without top-k, all 5 would appear in 2000 draws.
  std::vector<float> logits{1.0f, 1.2f, 0.9f, 1.1f, 1.05f};
  CHECK(support(s, logits) == std::set<int32_t>{1, 3});
  SamplerParams p1 = plain();
  p1.top_k = 1;
  Sampler s1 = make(p1);
  CHECK(support(s1, logits, 200) == std::set<int32_t>{1});
  Sampler all = make(plain());
  CHECK(support(all, logits).size() == 5);
}

TEST_CASE("top-k ties at the boundary go to the lower id", "[sampler]") {
  SamplerParams p = plain();
  p.top_k = 2;
  Sampler s = make(p);
  CHECK(support(s, {1.0f, 2.0f, 1.0f, 1.0f}) == std::set<int32_t>{0, 1});
}

TEST_CASE("top-p keeps the smallest prefix reaching the mass", "[sampler]") {
  // probabilities 0.5, 0.25, 0.125, 0.125 (log2 spacing)
  std::vector<float> logits{std::log(0.5f), std::log(0.25f), std::log(0.125f), std::log(0.125f)};
  SamplerParams p = plain();
  p.top_p = 0.7f;  // 0.5 < 0.7 <= 0.75
  Sampler s = make(p);
  CHECK(support(s, logits) == std::set<int32_t>{0, 1});
  p.top_p = 0.5f;  // the first token alone reaches it
  Sampler s2 = make(p);
  CHECK(support(s2, logits, 200) == std::set<int32_t>{0});
  p.top_p = 0.8f;  // needs the third; the fourth (equal prob, higher id) is cut
  Sampler s3 = make(p);
  CHECK(support(s3, logits) == std::set<int32_t>{0, 1, 2});
}

TEST_CASE("min-p drops tokens below min_p * p_max", "[sampler]") {
  // probabilities 0.5, 0.3, 0.15, 0.05
  std::vector<float> logits{std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  SamplerParams p = plain();
  p.min_p = 0.2f;  // threshold 0.1: drops 0.05 only
  Sampler s = make(p);
  CHECK(support(s, logits) == std::set<int32_t>{0, 1, 2});
  p.min_p = 0.5f;  // threshold 0.25
  Sampler s2 = make(p);
  CHECK(support(s2, logits) == std::set<int32_t>{0, 1});
  p.min_p = 1.0f;  // only the argmax
  Sampler s3 = make(p);
  CHECK(support(s3, logits, 200) == std::set<int32_t>{0});
}

TEST_CASE("filters run before temperature (llama.cpp order)", "[sampler]") {
  // With top_p = 0.6 on the untempered probs {0.5, 0.3, 0.2} only ids 0,1 survive,
  // even though a high temperature would flatten the distribution afterwards.
  std::vector<float> logits{std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  SamplerParams p = plain();
  p.top_p = 0.6f;
  p.temperature = 50.0f;
  Sampler s = make(p);
  CHECK(support(s, logits) == std::set<int32_t>{0, 1});
}

TEST_CASE("low temperature concentrates, high temperature flattens", "[sampler]") {
  std::vector<float> logits{2.0f, 1.0f, 0.0f};
  auto freq0 = [&](float temp) {
    SamplerParams p = plain(3);
    p.temperature = temp;
    Sampler s = make(p);
    int n0 = 0;
    for (int i = 0; i < 4000; ++i) n0 += (*s.sample(logits) == 0);
    return n0 / 4000.0;
  };
  // Exact p0: T=0.25 -> 0.98, T=1 -> 0.665, T=10 -> ~0.367
  CHECK(freq0(0.25f) > 0.95);
  CHECK(std::abs(freq0(1.0f) - 0.665) < 0.04);
  CHECK(std::abs(freq0(10.0f) - 0.367) < 0.04);
}

TEST_CASE("repetition penalty divides positive and multiplies negative logits", "[sampler]") {
  SamplerParams p = plain();
  p.temperature = 0.0f;
  p.repeat_penalty = 2.0f;
  Sampler s = make(p);
  std::vector<float> logits{3.0f, 2.0f, -1.0f, -1.5f};
  CHECK(*s.sample(logits) == 0);
  s.accept(0);  // 3 -> 1.5 < 2
  CHECK(*s.sample(logits) == 1);
  s.accept(1);  // 2 -> 1.0 > 1.5? no: 1.5 (id 0) wins again
  CHECK(*s.sample(logits) == 0);

  // Negative logits get more negative: -1 * 2 = -2 < -1.5.
  Sampler n = make(p);
  std::vector<float> neg{-1.0f, -1.5f};
  CHECK(*n.sample(neg) == 0);
  n.accept(0);
  CHECK(*n.sample(neg) == 1);
}

TEST_CASE("presence and frequency penalties subtract per token / per occurrence", "[sampler]") {
  std::vector<float> logits{1.0f, 0.5f};
  SamplerParams p = plain();
  p.temperature = 0.0f;
  p.frequency_penalty = 0.2f;
  Sampler f = make(p);
  f.accept(0);
  f.accept(0);  // 1.0 - 0.4 = 0.6 > 0.5
  CHECK(*f.sample(logits) == 0);
  f.accept(0);  // 1.0 - 0.6 = 0.4 < 0.5
  CHECK(*f.sample(logits) == 1);

  SamplerParams q = plain();
  q.temperature = 0.0f;
  q.presence_penalty = 0.3f;
  Sampler pr = make(q);
  for (int i = 0; i < 5; ++i) pr.accept(0);  // once: 1.0 - 0.3 = 0.7 > 0.5
  CHECK(*pr.sample(logits) == 0);
  q.presence_penalty = 0.6f;
  Sampler pr2 = make(q);
  pr2.accept(0);  // 0.4 < 0.5
  CHECK(*pr2.sample(logits) == 1);
}

TEST_CASE("penalty window holds only the last N tokens", "[sampler]") {
  SamplerParams p = plain();
  p.temperature = 0.0f;
  p.repeat_penalty = 4.0f;
  p.penalty_last_n = 2;
  Sampler s = make(p);
  std::vector<float> logits{2.0f, 1.0f, 0.0f, 0.0f};
  s.accept(0);
  CHECK(*s.sample(logits) == 1);  // 0 penalised to 0.5
  s.accept(2);
  s.accept(3);  // 0 fell out of the window
  CHECK(*s.sample(logits) == 0);
  s.reset();
  s.accept(0);
  CHECK(*s.sample(logits) == 1);
  s.reset();
  CHECK(*s.sample(logits) == 0);
}

TEST_CASE("same seed gives the same sequence; another seed differs", "[sampler]") {
  std::vector<float> logits(64);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(static_cast<float>(i)) * 2.0f;
  SamplerParams p;  // defaults: top-k 40, top-p 0.95, min-p 0.05, temp 0.8
  p.seed = 42;
  auto run = [&](uint64_t seed) {
    p.seed = seed;
    Sampler s = make(p);
    std::vector<int32_t> out;
    for (int i = 0; i < 200; ++i) {
      int32_t t = *s.sample(logits);
      s.accept(t);
      out.push_back(t);
    }
    return out;
  };
  CHECK(run(42) == run(42));
  CHECK(run(42) != run(43));

  // reset() rewinds the RNG.
  p.seed = 9;
  Sampler s = make(p);
  std::vector<int32_t> a, b;
  for (int i = 0; i < 50; ++i) a.push_back(*s.sample(logits));
  s.reset();
  for (int i = 0; i < 50; ++i) b.push_back(*s.sample(logits));
  CHECK(a == b);
}

TEST_CASE("draws follow the softmax distribution (chi-square)", "[sampler]") {
  const std::vector<double> probs{0.4, 0.3, 0.2, 0.1};
  std::vector<float> logits;
  for (double q : probs) logits.push_back(static_cast<float>(std::log(q) + 1.7));  // shift-invariant
  Sampler s = make(plain(2024));
  const int n = 100000;
  std::vector<int> counts(probs.size(), 0);
  for (int i = 0; i < n; ++i) ++counts[static_cast<size_t>(*s.sample(logits))];
  double chi2 = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    const double e = probs[i] * n;
    chi2 += (counts[i] - e) * (counts[i] - e) / e;
  }
  // 3 degrees of freedom: P(chi2 > 16.27) = 0.001 for a correct sampler.
  INFO("chi2 = " << chi2);
  CHECK(chi2 < 16.27);
}

TEST_CASE("bad parameters are rejected with a message naming the field", "[sampler]") {
  auto bad = [](auto mutate, const char* field) {
    SamplerParams p;
    mutate(p);
    auto r = Sampler::create(p);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == les::StatusCode::invalid_argument);
    CHECK(r.status().message().find(field) != std::string::npos);
  };
  bad([](SamplerParams& p) { p.temperature = -0.1f; }, "temperature");
  bad([](SamplerParams& p) { p.temperature = std::nanf(""); }, "temperature");
  bad([](SamplerParams& p) { p.top_p = 0.0f; }, "top_p");
  bad([](SamplerParams& p) { p.top_p = 1.01f; }, "top_p");
  bad([](SamplerParams& p) { p.min_p = -0.5f; }, "min_p");
  bad([](SamplerParams& p) { p.min_p = 1.5f; }, "min_p");
  bad([](SamplerParams& p) { p.top_k = -1; }, "top_k");
  bad([](SamplerParams& p) { p.repeat_penalty = 0.0f; }, "repeat_penalty");
  bad([](SamplerParams& p) { p.penalty_last_n = -2; }, "penalty_last_n");
  bad([](SamplerParams& p) { p.frequency_penalty = std::numeric_limits<float>::infinity(); }, "frequency_penalty");
  CHECK(Sampler::create(SamplerParams{}).ok());
}

TEST_CASE("bad logits are rejected, not crashed on", "[sampler]") {
  Sampler s = make(SamplerParams{});
  CHECK_FALSE(s.sample(std::vector<float>{}).ok());
  CHECK_FALSE(s.sample(std::vector<float>{1.0f, std::nanf("")}).ok());
  const float ninf = -std::numeric_limits<float>::infinity();
  CHECK_FALSE(s.sample(std::vector<float>{ninf, ninf}).ok());
  // +inf (an overflowed model) is refused naming the token, at any temperature, not sampled as garbage.
  const float pinf = std::numeric_limits<float>::infinity();
  for (float temp : {0.0f, 0.8f}) {
    SamplerParams p;
    p.temperature = temp;
    Sampler t = make(p);
    auto r = t.sample(std::vector<float>{0.0f, 0.0f, 0.0f, pinf, 0.0f});
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("token 3 is +inf") != std::string::npos);
    CHECK_FALSE(t.sample(std::vector<float>{pinf, pinf}).ok());
    CHECK(t.sample(std::vector<float>{0.0f, 1.0f}).ok());  // still usable
  }
  // A token id outside the vocabulary in the history is ignored.
  s.accept(-5);
  s.accept(1000000);
  CHECK(s.sample(std::vector<float>{1.0f, 2.0f}).ok());
}

TEST_CASE("distribution() is what sample() draws from; draw() uses the same RNG stream", "[sampler]") {
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 1.5f, 0.0f, 3.0f, -0.5f, 1.0f};
  SamplerParams p;  // llama.cpp defaults: top-k 40, top-p 0.95, min-p 0.05, temperature 0.8
  p.seed = 7;
  p.repeat_penalty = 1.3f;
  Sampler a = make(p), b = make(p);
  a.accept(5);
  b.accept(5);
  auto d = b.distribution(logits);
  REQUIRE(d.ok());
  double sum = 0;
  for (float x : d->p) sum += x;
  CHECK(sum == Approx(1.0).epsilon(1e-6));
  CHECK(d->prob(2) == 0.0f);  // below min-p
  for (int i = 0; i < 500; ++i) {
    auto s = a.sample(logits);
    REQUIRE(s.ok());
    CHECK(*s == b.draw(*d));
  }
}

TEST_CASE("greedy distribution is the argmax with probability 1 and uses no randomness", "[sampler]") {
  SamplerParams p = plain();
  p.temperature = 0.0f;
  Sampler s = make(p);
  auto d = s.distribution(std::vector<float>{0.1f, 2.0f, -1.0f, 2.0f});
  REQUIRE(d.ok());
  REQUIRE(d->size() == 1);
  CHECK(d->ids[0] == 1);
  CHECK(d->p[0] == 1.0f);
  CHECK(d->prob(3) == 0.0f);
  CHECK(!s.distribution(std::vector<float>{}).ok());
  CHECK(!s.distribution(std::vector<float>{std::nanf("")}).ok());
}
