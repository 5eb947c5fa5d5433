// Prompt lookup ("n-gram") drafting: no extra model. The last n tokens of the
// sequence are searched in the sequence itself (the prompt and the text
// generated so far); the tokens that followed their most recent earlier
// occurrence are the draft (copied on past the end of the sequence from the
// draft itself, so a loop of period p drafts max_tokens tokens). n is tried
// from ngram_max down to ngram_min, so the longest matching context wins. A
// draft stops before a position filled from an embedding row (an image's,
// id kEmbeddingToken = -1): such a position has no token to propose, and the
// n-gram search never matches it (the history's last token is a real one). This pays off where the output repeats
// its input: quoting, summarising, editing code, or a model that loops.
//
// Cost: O(len * ngram_max) token comparisons per proposal (len = sequence
// length), no allocation beyond the draft.
//
// Thread-safety: thread-compatible.
#pragma once

#include <cstdint>
#include <memory>

#include "core/speculative/drafter.h"

namespace les {

// The longest n-gram prompt lookup searches (les_generate_params.lookup_ngram's bound).
inline constexpr int32_t kPromptLookupMaxNgram = 16;

struct PromptLookupParams {
  int32_t ngram_max = 3;  // longest suffix searched (1..kPromptLookupMaxNgram)
  int32_t ngram_min = 1;  // shortest (1..ngram_max)
};

class PromptLookupDrafter final : public Drafter {
 public:
  // Errors: invalid_argument (ngram_min < 1, ngram_max < ngram_min, ngram_max > kPromptLookupMaxNgram).
  static Result<std::unique_ptr<PromptLookupDrafter>> create(const PromptLookupParams& p);

  const char* name() const noexcept override { return "lookup"; }
  // Draft::bucket = the matched n-gram length (0: no match, empty draft).
  Result<Draft> propose(const DraftRequest& r) override;
  int32_t n_buckets() const noexcept override { return p_.ngram_max + 1; }

 private:
  explicit PromptLookupDrafter(const PromptLookupParams& p) : p_(p) {}
  PromptLookupParams p_;
};

}  // namespace les
