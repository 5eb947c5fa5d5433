#include "vision/prompt_layout.h"

#include <string>

namespace les::vision {
namespace {

// Appends `ids` to the text chunk at the end of `out`, or starts one.
void add_text(std::vector<PromptChunk>& out, std::span<const int32_t> ids) {
  if (ids.empty()) return;
  if (out.empty() || out.back().kind != PromptChunk::Kind::text) out.push_back(PromptChunk{});
  out.back().tokens.insert(out.back().tokens.end(), ids.begin(), ids.end());
}

void add_token(std::vector<PromptChunk>& out, int32_t id) { add_text(out, std::span<const int32_t>(&id, 1)); }

void add_image(std::vector<PromptChunk>& out, int32_t image, int32_t chunk, int32_t n_rows) {
  PromptChunk c;
  c.kind = PromptChunk::Kind::image;
  c.image = image;
  c.chunk = chunk;
  c.n_embd_rows = n_rows;
  out.push_back(std::move(c));
}

}  // namespace

Result<ImageMarkerTokens> find_image_markers(const Tokenizer& tok) {
  struct Want {
    const char* text;
    int32_t ImageMarkerTokens::*field;
  };
  static constexpr Want kWant[] = {{"<image>", &ImageMarkerTokens::image_start},
                                   {"</image>", &ImageMarkerTokens::image_end},
                                   {"<slice>", &ImageMarkerTokens::slice_start},
                                   {"</slice>", &ImageMarkerTokens::slice_end},
                                   {"\n", &ImageMarkerTokens::row_end}};
  ImageMarkerTokens m;
  const int32_t n = tok.vocab().n_tokens();
  int found = 0;
  for (int32_t id = 0; id < n && found < 5; ++id) {
    Result<std::string> piece = tok.token_to_piece(id, /*render_special=*/true);
    if (!piece.ok()) continue;
    for (const Want& w : kWant)
      if (m.*w.field < 0 && *piece == w.text) {
        m.*w.field = id;
        ++found;
      }
  }
  if (found == 5) return m;
  std::string missing;
  for (const Want& w : kWant)
    if (m.*w.field < 0) missing += std::string(missing.empty() ? "" : ", ") + (w.text[0] == '\n' ? "\"\\n\"" : w.text);
  return unsupported_error("vision: the text model's vocabulary has no token for " + missing +
                           " (MiniCPM-V image markers); this text model cannot take images");
}

ImageShape image_shape(const PreprocessedImage& img) {
  ImageShape s;
  s.grid_cols = img.grid_cols;
  s.grid_rows = img.grid_rows;
  for (const ImageChunk& c : img.chunks) s.chunk_tokens.push_back(c.n_tokens);
  return s;
}

Status append_image_chunks(const ImageMarkerTokens& m, const ImageShape& shape, int32_t image_index,
                           std::vector<PromptChunk>& out) {
  const int64_t cols = shape.grid_cols, rows = shape.grid_rows;
  if (cols < 0 || rows < 0 || (cols == 0) != (rows == 0) || cols > kMaxSlices || rows > kMaxSlices ||
      static_cast<int64_t>(shape.chunk_tokens.size()) != 1 + cols * rows)
    return invalid_argument_error("vision: image " + std::to_string(image_index) + " has a " + std::to_string(cols) +
                                  " x " + std::to_string(rows) + " grid and " +
                                  std::to_string(shape.chunk_tokens.size()) +
                                  " chunks; expected 1 + cols * rows (the overview and the slices)");
  for (size_t i = 0; i < shape.chunk_tokens.size(); ++i)
    if (shape.chunk_tokens[i] <= 0)
      return invalid_argument_error("vision: image " + std::to_string(image_index) + " chunk " + std::to_string(i) +
                                    " has " + std::to_string(shape.chunk_tokens[i]) + " tokens");
  add_token(out, m.image_start);
  add_image(out, image_index, 0, shape.chunk_tokens[0]);
  add_token(out, m.image_end);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const auto chunk = static_cast<int32_t>(1 + r * cols + c);
      add_token(out, m.slice_start);
      add_image(out, image_index, chunk, shape.chunk_tokens[static_cast<size_t>(chunk)]);
      add_token(out, m.slice_end);
    }
    if (r != rows - 1) add_token(out, m.row_end);
  }
  return Status();
}

Result<std::vector<PromptChunk>> build_prompt(const Tokenizer& tok, const ImageMarkerTokens& markers,
                                              std::string_view prompt, std::span<const ImageShape> images,
                                              const PromptOptions& o) {
  if (o.media_marker.empty()) return invalid_argument_error("vision: the media marker is empty");
  std::vector<std::string_view> parts;  // text around the markers: images.size() + 1 parts when they match
  for (size_t at = 0;;) {
    const size_t hit = prompt.find(o.media_marker, at);
    parts.push_back(prompt.substr(at, hit == std::string_view::npos ? std::string_view::npos : hit - at));
    if (hit == std::string_view::npos) break;
    at = hit + o.media_marker.size();
  }
  if (parts.size() - 1 != images.size())
    return invalid_argument_error("vision: the prompt has " + std::to_string(parts.size() - 1) + " media markers (\"" +
                                  std::string(o.media_marker) + "\") for " + std::to_string(images.size()) +
                                  (images.size() == 1 ? " image" : " images"));
  std::vector<PromptChunk> out;
  for (size_t i = 0; i < parts.size(); ++i) {
    LES_ASSIGN_OR_RETURN(const std::vector<int32_t> ids, tok.tokenize(parts[i], /*add_special=*/false,
                                                                      o.parse_special));
    add_text(out, ids);
    if (i < images.size())
      LES_RETURN_IF_ERROR(append_image_chunks(markers, images[i], static_cast<int32_t>(i), out));
  }
  const Vocab& v = tok.vocab();
  if (o.add_special && v.add_bos() && v.bos() >= 0) {
    if (!out.empty() && out.front().kind == PromptChunk::Kind::text)
      out.front().tokens.insert(out.front().tokens.begin(), v.bos());
    else
      out.insert(out.begin(), PromptChunk{PromptChunk::Kind::text, {v.bos()}, -1, -1, 0});
  }
  if (o.add_special && v.add_eos() && v.eos() >= 0) add_token(out, v.eos());
  return out;
}

}  // namespace les::vision
