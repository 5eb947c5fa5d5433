// See chat_continuation.h.
#include "common/chat_continuation.h"

#include <algorithm>
#include <cstddef>
#include <string_view>

#include "common/prompt_reuse.h"

namespace les::tool {
namespace {

// `text` as les_generate_with_images tokenizes a piece after the first: no
// BOS, control-token texts parsed. nullopt on failure.
std::optional<std::vector<les_token>> tokenize_piece(const les_model* model, std::string_view text) {
  les_status st = LES_OK;
  std::vector<les_token> ids = tokenize_prompt(model, text, /*parse_special=*/true, &st, /*add_bos=*/false);
  if (st != LES_OK) return std::nullopt;
  return ids;
}

// What follows the last media marker of `text` (all of it without one).
std::string_view last_piece(std::string_view text) {
  const size_t at = text.rfind(LES_MEDIA_MARKER);
  return at == std::string_view::npos ? text : text.substr(at + std::string_view(LES_MEDIA_MARKER).size());
}

}  // namespace

HeldChat held_after_turn(const les_model* model, const les_context* ctx, const std::string& prompt,
                         const std::string& answer, const std::vector<les_token>& sampled) {
  HeldChat held;
  std::optional<std::vector<les_token>> tail = tokenize_piece(model, last_piece(prompt));
  if (!tail) return held;
  tail->insert(tail->end(), sampled.begin(), sampled.end());
  const std::vector<les_token> in_context = held_tokens(ctx);
  if (in_context.size() < tail->size() ||
      !std::equal(tail->begin(), tail->end(), in_context.end() - static_cast<std::ptrdiff_t>(tail->size())))
    return held;
  held.text = prompt + answer;
  held.tail = std::move(*tail);
  return held;
}

std::optional<std::string> continuation_rest(const les_model* model, const HeldChat& held, const std::string& text) {
  if (held.empty() || !text.starts_with(held.text)) return std::nullopt;
  const std::string_view rest = std::string_view(text).substr(held.text.size());
  const std::string_view first = rest.substr(0, rest.find(LES_MEDIA_MARKER));
  // A fresh evaluation tokenizes the joining piece at once.
  const std::string joined = std::string(last_piece(held.text)) + std::string(first);
  const std::optional<std::vector<les_token>> whole = tokenize_piece(model, joined);
  const std::optional<std::vector<les_token>> added = tokenize_piece(model, first);
  if (!whole || !added) return std::nullopt;
  std::vector<les_token> continued = held.tail;
  continued.insert(continued.end(), added->begin(), added->end());
  if (continued != *whole) return std::nullopt;
  return std::string(rest);
}

}  // namespace les::tool
