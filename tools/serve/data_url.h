// `les serve`: the image of an OpenAI `image_url` content part, given as a
// `data:` URL (RFC 2397) with base64 data:
//   data:image/png;base64,iVBORw0...
// Accepted media types: image/png, image/jpeg (image/jpg), and the PNM
// types image/x-portable-pixmap, image/x-portable-graymap,
// image/x-portable-anymap; media type parameters (";charset=...") before
// ";base64" are ignored. The base64 alphabet is RFC 4648's standard one
// ('+', '/'; the URL-safe '-', '_' accepted too), '=' padding optional,
// whitespace (which JSON clients may wrap lines with) skipped. http(s) and
// other URLs are refused: the server fetches nothing.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace les::tool {

// Decodes RFC 4648 base64 `text` (whitespace skipped, padding optional).
// Returns nullopt with *error naming the problem (a character outside the
// alphabet and its offset, padding in the middle, a length that leaves a
// lone 6-bit group) or when the decoded size would exceed `max_bytes`
// (*error says so; the text is not decoded then).
std::optional<std::vector<uint8_t>> decode_base64(std::string_view text, size_t max_bytes, std::string* error);

// The encoded image bytes of `url` (PNG, JPEG or PNM file contents, not yet
// decoded to pixels; at most `max_bytes` of them). Returns nullopt with
// *error set to a message for the client: an http(s) or other non-data URL
// ("not fetched"), a data URL without ";base64" or ',', a media type other
// than the images above, bad base64, no data, or more than `max_bytes`.
std::optional<std::vector<uint8_t>> image_from_data_url(std::string_view url, size_t max_bytes, std::string* error);

}  // namespace les::tool
