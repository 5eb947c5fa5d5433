// Synthetic SPM vocabulary: layout, learned merges, determinism, errors.
#include <catch2/catch.hpp>

#include <set>

#include "synth/synth_vocab.h"

namespace tt = les::synth_token_type;

TEST_CASE("synthetic vocab has the Llama SPM layout", "[synth_vocab]") {
  auto r = les::learn_spm_vocab(les::default_vocab_text(), 600);
  REQUIRE(r.ok());
  const auto& v = *r;
  REQUIRE(v.tokens.size() <= 600);
  REQUIRE(v.tokens.size() == v.scores.size());
  REQUIRE(v.tokens.size() == v.types.size());
  CHECK(v.tokens[0] == "<unk>");
  CHECK(v.types[0] == tt::unknown);
  CHECK(v.tokens[1] == "<s>");
  CHECK(v.tokens[2] == "</s>");
  CHECK(v.types[1] == tt::control);
  CHECK(v.tokens[3] == "<0x00>");
  CHECK(v.tokens[3 + 0x41] == "<0x41>");
  CHECK(v.tokens[258] == "<0xFF>");
  for (int i = 3; i < 259; ++i) CHECK(v.types[static_cast<size_t>(i)] == tt::byte);
  // Pieces are unique, and the common words of the text became single pieces.
  std::set<std::string> uniq(v.tokens.begin(), v.tokens.end());
  CHECK(uniq.size() == v.tokens.size());
  CHECK(uniq.count("\xE2\x96\x81" "the"));
  CHECK(uniq.count("\xE2\x96\x81" "and"));
  CHECK(uniq.count("e"));
  CHECK(uniq.count("\xE2\x96\x81"));
  // Merge scores strictly decrease with rank; characters come after every merge.
  for (size_t i = 260; i < v.tokens.size(); ++i) CHECK(v.scores[i] < v.scores[i - 1]);
}

TEST_CASE("synthetic vocab stops at n_vocab and is deterministic", "[synth_vocab]") {
  auto a = les::learn_spm_vocab(les::default_vocab_text(), 400);
  auto b = les::learn_spm_vocab(les::default_vocab_text(), 400);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->tokens.size() == 400);
  CHECK(a->tokens == b->tokens);
  CHECK(a->scores == b->scores);
}

TEST_CASE("synthetic vocab rejects bad input", "[synth_vocab]") {
  CHECK_FALSE(les::learn_spm_vocab("", 1000).ok());
  CHECK_FALSE(les::learn_spm_vocab("   \n ", 1000).ok());
  CHECK_FALSE(les::learn_spm_vocab("abc", 100).ok());  // below 259 + chars
  auto bad = les::learn_spm_vocab(std::string_view("ab\xC3(cd", 6), 1000);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("UTF-8") != std::string::npos);
}
