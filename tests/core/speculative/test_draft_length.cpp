// Draft-length policy (draft_length.h) on made-up measurements: it drafts
// when acceptance and costs make it pay, switches to plain decoding when the
// bytes of a longer pass cost more than the tokens it saves, explores, and
// respects draft_min / draft_max.
#include <catch2/catch.hpp>

#include <vector>

#include "core/speculative/draft_length.h"

using les::DraftLengthParams;
using les::DraftLengthPolicy;

namespace {

// Feeds the policy passes whose compute costs c1 * (1 + r * (n - 1)) and whose
// read wait is w seconds per byte read (= predicted).
void train(DraftLengthPolicy& p, double c1, double r, double w, uint64_t bytes_per_row, double accept, int passes) {
  for (int i = 0; i < passes; ++i) {
    for (int32_t n = 1; n <= 4; ++n) {
      const uint64_t b = bytes_per_row * static_cast<uint64_t>(n);
      const double wait = w * static_cast<double>(b);
      p.record_pass(n, c1 * (1 + r * (n - 1)) + wait, wait, b, b);
    }
    const int32_t acc = static_cast<int32_t>(accept * 4 + 0.5);
    p.record_acceptance(0, 4, acc);
  }
}

}  // namespace

TEST_CASE("draft length: high acceptance and cheap rows draft the maximum", "[speculative]") {
  DraftLengthParams dp;
  dp.draft_max = 4;
  DraftLengthPolicy p(dp);
  train(p, 1e-3, 0.2, 0.0, 0, 1.0, 50);
  CHECK(p.acceptance(0) > 0.9);
  const std::vector<uint64_t> zero(5, 0);
  CHECK(p.choose(0, zero) == 4);
  CHECK(p.plan(0, 0.0) == 4);
  CHECK(p.compute_seconds(3) == Approx(1e-3 * 1.4).epsilon(1e-6));
}

TEST_CASE("draft length: expensive bytes per extra row switch speculation off", "[speculative]") {
  DraftLengthParams dp;
  dp.draft_max = 4;
  DraftLengthPolicy p(dp);
  // 1 ms compute per pass, 10 ns of read wait per byte: a row of 100 KB adds 1 ms.
  train(p, 1e-3, 0.2, 1e-8, 100000, 0.5, 50);
  CHECK(p.wait_seconds_per_byte() == Approx(1e-8));
  // The pending token's own experts are cached (0 bytes); each draft adds 100 KB.
  const std::vector<uint64_t> bytes = {0, 100000, 200000, 300000, 400000};
  CHECK(p.choose(0, bytes) == 1);  // the first opportunity is a probe
  for (int i = 0; i < 10; ++i) CHECK(p.choose(0, bytes) == 0);
  // The same pass with every expert cached: speculation pays again.
  const std::vector<uint64_t> cached(5, 0);
  CHECK(p.choose(0, cached) > 0);
}

TEST_CASE("draft length: zero acceptance decodes plainly but probes now and then", "[speculative]") {
  DraftLengthParams dp;
  dp.draft_max = 4;
  DraftLengthPolicy p(dp);
  train(p, 1e-3, 0.5, 0.0, 0, 0.0, 60);
  CHECK(p.acceptance(0) < 0.05);
  const std::vector<uint64_t> zero(5, 0);
  int drafted = 0, passes = 0;
  for (int i = 0; i < 400; ++i, ++passes) drafted += p.choose(0, zero) > 0;
  // Probes at intervals 16, 32, 64, 128, 256: at most 5 in 400 steps, at least 2.
  CHECK(drafted >= 2);
  CHECK(drafted <= 5);
}

TEST_CASE("draft length: draft_min forces drafting, fewer available drafts cap it", "[speculative]") {
  DraftLengthParams dp;
  dp.draft_max = 6;
  dp.draft_min = 6;
  DraftLengthPolicy p(dp);
  train(p, 1e-3, 0.5, 0.0, 0, 0.0, 30);
  CHECK(p.choose(0, std::vector<uint64_t>(7, 0)) == 6);
  CHECK(p.choose(0, std::vector<uint64_t>(3, 0)) == 2);
  CHECK(p.choose(0, std::vector<uint64_t>(1, 0)) == 0);
}

TEST_CASE("draft length: a costly drafter plans fewer tokens than a free one", "[speculative]") {
  DraftLengthParams dp;
  dp.draft_max = 8;
  DraftLengthPolicy p(dp);
  train(p, 1e-3, 0.1, 0.0, 0, 0.75, 50);
  CHECK(p.plan(0, 0.0) == 8);
  const int32_t costly = p.plan(0, 2e-3);  // drafting a token costs 2 passes
  CHECK(costly < 8);
  // A token that costs 1000 passes never pays, and is not even probed: the
  // probe would cost far more than the exploration share of the time so far.
  CHECK(p.plan(0, 1.0) == 0);
}

TEST_CASE("draft length: a drafter's catch-up counts, and its probes stay within the exploration share",
          "[speculative]") {
  DraftLengthParams dp;
  dp.draft_max = 8;
  DraftLengthPolicy p(dp);
  train(p, 1e-3, 0.1, 0.0, 0, 0.75, 50);
  CHECK(p.plan(0, 1e-4, 0.0) > 0);
  CHECK(p.plan(0, 1e-4, 1.0) == 0);  // catching up costs 1000 passes: plain decoding

  // A drafter at 10 passes per token with zero acceptance, 1 ms plain passes:
  // each probe costs ~10.1 ms, so in 4 s of decoding at most
  // 4 s * kExploreShare / 10.1 ms (= 7.9) probes are made.
  DraftLengthPolicy q(dp);
  train(q, 1e-3, 0.1, 0.0, 0, 0.0, 5);
  int probes = 0;
  for (int i = 0; i < 4000; ++i) {
    if (q.plan(0, 1e-2) > 0) {
      ++probes;
      REQUIRE(q.choose(0, std::vector<uint64_t>(2, 0)) == 1);
      q.record_pass(2, 1.1e-3, 0.0, 0, 0);
      q.record_acceptance(0, 1, 0);
    } else {
      CHECK(q.choose(0, std::vector<uint64_t>(1, 0)) == 0);
      q.record_pass(1, 1e-3, 0.0, 0, 0);
    }
  }
  const double budget = 4.0 * DraftLengthPolicy::kExploreShare / (1e-2 + 1e-4);
  INFO("probes " << probes << ", at most " << budget);
  CHECK(probes >= 2);
  CHECK(probes <= static_cast<int>(budget) + 1);
}

TEST_CASE("draft length: compute of unmeasured sizes follows the fitted line", "[speculative]") {
  DraftLengthParams dp;
  dp.draft_max = 8;
  DraftLengthPolicy p(dp);
  for (int i = 0; i < 10; ++i) {
    p.record_pass(1, 1.0, 0.0, 0, 0);
    p.record_pass(3, 2.0, 0.0, 0, 0);
  }
  CHECK(p.compute_seconds(5) == Approx(3.0));
  CHECK(p.compute_seconds(2) == Approx(1.5));
  DraftLengthPolicy q(dp);
  q.record_pass(2, 3.0, 0.0, 0, 0);  // one size: the prior row cost 0.5
  CHECK(q.compute_seconds(1) == Approx(2.0));
  CHECK(q.compute_seconds(4) == Approx(5.0));
}
