// Prompt lookup drafting: longest n-gram first, most recent match, copy past
// the end for loops, limits, bad parameters.
#include <catch2/catch.hpp>

#include <vector>

#include "core/speculative/prompt_lookup.h"

using les::DraftRequest;
using les::PromptLookupDrafter;
using les::PromptLookupParams;

namespace {

std::unique_ptr<PromptLookupDrafter> make(int32_t nmin, int32_t nmax) {
  PromptLookupParams p;
  p.ngram_min = nmin;
  p.ngram_max = nmax;
  auto d = PromptLookupDrafter::create(p);
  REQUIRE(d.ok());
  return std::move(d).value();
}

les::Draft propose(PromptLookupDrafter& d, const std::vector<int32_t>& h, int32_t max) {
  DraftRequest r;
  r.history = h;
  r.max_tokens = max;
  auto out = d.propose(r);
  REQUIRE(out.ok());
  CHECK(out->q.empty());  // deterministic
  return std::move(out).value();
}

}  // namespace

TEST_CASE("prompt lookup copies what followed the most recent match of the longest suffix", "[speculative]") {
  auto d = make(1, 3);
  // ... 1 2 3 [4 5 6] ... 9 2 3 [7 8] ... then suffix "2 3": most recent match is the 2nd.
  const std::vector<int32_t> h = {1, 2, 3, 4, 5, 6, 9, 2, 3, 7, 8, 0, 2, 3};
  auto dr = propose(*d, h, 4);
  CHECK(dr.bucket == 2);
  CHECK(dr.tokens == std::vector<int32_t>{7, 8, 0, 2});
  // The 3-gram "1 2 3" wins over the more recent 2-gram matches.
  const std::vector<int32_t> h2 = {1, 2, 3, 4, 5, 2, 3, 6, 1, 2, 3};
  auto d2 = propose(*d, h2, 3);
  CHECK(d2.bucket == 3);
  CHECK(d2.tokens == std::vector<int32_t>{4, 5, 2});
}

TEST_CASE("prompt lookup: a loop drafts max_tokens by copying from the draft itself", "[speculative]") {
  auto d = make(1, 3);
  auto dr = propose(*d, {5, 7, 7, 7, 7}, 6);
  CHECK(dr.tokens == std::vector<int32_t>(6, 7));
  auto d2 = propose(*d, {1, 2, 3, 1, 2, 3, 1, 2}, 5);
  CHECK(d2.bucket == 3);
  CHECK(d2.tokens == std::vector<int32_t>{3, 1, 2, 3, 1});
}

TEST_CASE("prompt lookup: no match, short history, zero budget, n-gram bounds", "[speculative]") {
  auto d = make(2, 3);
  CHECK(propose(*d, {1, 2, 3, 4, 5}, 4).tokens.empty());  // every 2-gram is new
  CHECK(propose(*d, {1}, 4).tokens.empty());
  CHECK(propose(*d, {1, 2, 1, 2}, 0).tokens.empty());
  auto dr = propose(*d, {1, 2, 9, 1, 2}, 8);
  CHECK(dr.bucket == 2);
  CHECK(dr.tokens.size() == 8);
  CHECK(dr.tokens[0] == 9);
  CHECK(d->n_buckets() == 4);
  PromptLookupParams bad;
  bad.ngram_min = 0;
  CHECK(!PromptLookupDrafter::create(bad).ok());
  bad.ngram_min = 3;
  bad.ngram_max = 2;
  CHECK(!PromptLookupDrafter::create(bad).ok());
  bad.ngram_min = 1;
  bad.ngram_max = 17;
  auto e = PromptLookupDrafter::create(bad);
  REQUIRE(!e.ok());
  CHECK(e.status().message().find("ngram_max") != std::string::npos);
}

TEST_CASE("prompt lookup: a draft stops before a position filled from an embedding row (-1)", "[speculative]") {
  auto d = make(1, 3);
  // "<image> rows </image> ... <image>": what followed the earlier <image> (9) is an image's rows.
  auto dr = propose(*d, {4, 9, -1, -1, 8, 5, 9}, 4);
  CHECK(dr.tokens.empty());
  // A match whose continuation reaches the rows drafts up to them.
  auto d2 = propose(*d, {3, 4, 5, -1, -1, 6, 3, 4}, 4);
  CHECK(d2.tokens == std::vector<int32_t>{5});
}
