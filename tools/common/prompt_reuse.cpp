// See prompt_reuse.h.
#include "common/prompt_reuse.h"

#include <string_view>

namespace les::tool {

std::vector<les_token> tokenize_prompt(const les_model* model, const std::string_view text, bool parse_special,
                                       les_status* status, bool add_bos) {
  int32_t n = 0;
  std::vector<les_token> ids(text.size() + 16);
  les_status st = les_tokenize(model, text.data(), text.size(), add_bos, parse_special, ids.data(),
                               static_cast<int32_t>(ids.size()), &n);
  if (st != LES_OK && n > static_cast<int32_t>(ids.size())) {
    ids.resize(static_cast<size_t>(n));
    st = les_tokenize(model, text.data(), text.size(), add_bos, parse_special, ids.data(), n, &n);
  }
  if (status != nullptr) *status = st;
  if (st != LES_OK) return {};
  ids.resize(static_cast<size_t>(n));
  return ids;
}

std::vector<les_token> held_tokens(const les_context* ctx) {
  int32_t n = 0;
  les_context_tokens(ctx, nullptr, 0, &n);
  std::vector<les_token> ids(static_cast<size_t>(n));
  if (n > 0 && les_context_tokens(ctx, ids.data(), n, &n) != LES_OK) ids.clear();
  return ids;
}

int32_t reuse_prefix(les_context* ctx, const std::vector<les_token>& ids) {
  const std::vector<les_token> held = held_tokens(ctx);
  size_t keep = 0;
  while (keep < held.size() && keep < ids.size() && held[keep] == ids[keep]) ++keep;
  if (keep == ids.size() && keep > 0) --keep;  // at least one token to evaluate
  if (les_context_trim(ctx, static_cast<int32_t>(keep)) != LES_OK) {
    // A recurrent (linear-attention) state cannot go back to an arbitrary
    // position: evaluate the whole prompt again.
    les_context_reset(ctx);
    keep = 0;
  }
  return static_cast<int32_t>(keep);
}

}  // namespace les::tool
