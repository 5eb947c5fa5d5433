// Prompt lookup drafting; see prompt_lookup.h.
#include "core/speculative/prompt_lookup.h"

#include <algorithm>
#include <memory>
#include <string>

namespace les {

Result<std::unique_ptr<PromptLookupDrafter>> PromptLookupDrafter::create(const PromptLookupParams& p) {
  if (p.ngram_min < 1 || p.ngram_max < p.ngram_min || p.ngram_max > kPromptLookupMaxNgram)
    return invalid_argument_error("prompt lookup: n-gram sizes must satisfy 1 <= ngram_min <= ngram_max <= " +
                                  std::to_string(kPromptLookupMaxNgram) + ", got " + std::to_string(p.ngram_min) +
                                  ".." + std::to_string(p.ngram_max));
  return std::unique_ptr<PromptLookupDrafter>(new PromptLookupDrafter(p));
}

Result<Draft> PromptLookupDrafter::propose(const DraftRequest& r) {
  Draft d;
  const auto& h = r.history;
  const int64_t len = static_cast<int64_t>(h.size());
  if (r.max_tokens <= 0 || len < 2) return d;
  for (int64_t n = std::min<int64_t>(p_.ngram_max, len - 1); n >= p_.ngram_min; --n) {
    const int32_t* suffix = h.data() + (len - n);
    // The most recent earlier occurrence: start j with j + n < len (the
    // suffix itself is excluded), searched from the end.
    for (int64_t j = len - n - 1; j >= 0; --j) {
      if (!std::equal(suffix, suffix + n, h.data() + j)) continue;
      // Copy what followed, LZ77-style: past the end of the sequence the
      // copy continues from the draft itself, so a loop of period p drafts
      // max_tokens tokens, not only p.
      const int64_t from = j + n;
      d.tokens.reserve(static_cast<size_t>(r.max_tokens));
      for (int64_t i = 0; i < r.max_tokens; ++i) {
        const int64_t src = from + i;
        const int32_t t = src < len ? h[static_cast<size_t>(src)] : d.tokens[static_cast<size_t>(src - len)];
        if (t < 0) break;  // a position filled from an embedding row (an image) has no token to draft
        d.tokens.push_back(t);
      }
      d.bucket = static_cast<int32_t>(n);
      return d;
    }
  }
  return d;
}

}  // namespace les
