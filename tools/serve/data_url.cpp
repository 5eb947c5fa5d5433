// See data_url.h.
#include "serve/data_url.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace les::tool {
namespace {

// 0..63 for a base64 digit, -1 otherwise.
int digit_value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && is_space(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && is_space(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

constexpr std::array<const char*, 6> kImageTypes = {"image/png",
                                                     "image/jpeg",
                                                     "image/jpg",
                                                     "image/x-portable-pixmap",
                                                     "image/x-portable-graymap",
                                                     "image/x-portable-anymap"};

}  // namespace

std::optional<std::vector<uint8_t>> decode_base64(std::string_view text, size_t max_bytes, std::string* error) {
  // Count the digits first, so an oversized image is refused before any
  // memory is taken for it.
  size_t n_digits = 0, n_pad = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (is_space(c)) continue;
    if (c == '=') {
      ++n_pad;
      continue;
    }
    if (digit_value(c) < 0) {
      *error = "invalid base64: character " + (std::isprint(c) ? "'" + std::string(1, static_cast<char>(c)) + "'"
                                                               : "byte " + std::to_string(c)) +
               " at offset " + std::to_string(i);
      return std::nullopt;
    }
    if (n_pad > 0) {
      *error = "invalid base64: '=' padding before the end, at offset " + std::to_string(i);
      return std::nullopt;
    }
    ++n_digits;
  }
  if (n_digits % 4 == 1 || n_pad > 2) {
    *error = "invalid base64: its length (" + std::to_string(n_digits) + " digits, " + std::to_string(n_pad) +
             " '=') is not that of whole bytes";
    return std::nullopt;
  }
  const size_t n_bytes = n_digits / 4 * 3 + (n_digits % 4 == 0 ? 0 : n_digits % 4 - 1);
  if (n_bytes > max_bytes) {
    *error = "the image is " + std::to_string(n_bytes) + " bytes; at most " + std::to_string(max_bytes) +
             " are taken per image";
    return std::nullopt;
  }
  std::vector<uint8_t> out;
  out.reserve(n_bytes);
  uint32_t acc = 0;
  int bits = 0;
  for (const char ch : text) {
    const int v = digit_value(static_cast<unsigned char>(ch));
    if (v < 0) continue;  // whitespace and padding, checked above
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
      acc &= (1u << bits) - 1;
    }
  }
  return out;
}

std::optional<std::vector<uint8_t>> image_from_data_url(std::string_view url, size_t max_bytes, std::string* error) {
  const std::string head = lower(url.substr(0, std::min<size_t>(url.size(), 16)));
  if (head.rfind("http://", 0) == 0 || head.rfind("https://", 0) == 0) {
    *error = "http(s) image URLs are not fetched by this server; send the image as a data: URL "
             "(data:image/png;base64,...)";
    return std::nullopt;
  }
  if (head.rfind("data:", 0) != 0) {
    *error = "the image URL must be a data: URL (data:image/png;base64,...); got one starting with \"" +
             std::string(url.substr(0, std::min<size_t>(url.size(), 16))) + "\"";
    return std::nullopt;
  }
  const size_t comma = url.find(',');
  if (comma == std::string_view::npos) {
    *error = "malformed data URL: no ',' before the data";
    return std::nullopt;
  }
  const std::string meta = lower(url.substr(5, comma - 5));
  const size_t semi = meta.find(';');
  const std::string type = trimmed(std::string_view(meta).substr(0, semi));
  if (meta.size() < 7 || meta.compare(meta.size() - 7, 7, ";base64") != 0) {
    *error = "malformed data URL: the data must be base64 (data:" + (type.empty() ? "image/png" : type) + ";base64,...)";
    return std::nullopt;
  }
  if (std::find(kImageTypes.begin(), kImageTypes.end(), type) == kImageTypes.end()) {
    *error = "data URL of type \"" + type + "\": images are taken as image/png, image/jpeg or image/x-portable-pixmap";
    return std::nullopt;
  }
  auto bytes = decode_base64(url.substr(comma + 1), max_bytes, error);
  if (!bytes) return std::nullopt;
  if (bytes->empty()) {
    *error = "the data URL holds no data";
    return std::nullopt;
  }
  return bytes;
}

}  // namespace les::tool
