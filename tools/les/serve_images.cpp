// See serve_images.h.
#include "les/serve_images.h"

#include <string_view>

#include "les/prompt_reuse.h"

namespace les::tool {

bool encode_request_images(les_vision* vision, const CompletionRequest& request, std::vector<ImageRef>* out,
                           RequestError* error) {
  out->clear();
  if (request.images.empty()) return true;
  if (vision == nullptr) {
    *error = {request.images[0].param +
                  ": this server takes no images (start les serve with --mmproj FILE, the model's vision encoder)",
              request.images[0].param};
    return false;
  }
  for (const RequestImage& img : request.images) {
    les_image* encoded = nullptr;
    const les_status st = les_vision_encode_memory(vision, img.bytes.data(), img.bytes.size(), &encoded);
    if (st != LES_OK) {
      *error = {img.param + ": the image cannot be used: " + les_last_error(), img.param};
      return false;
    }
    out->emplace_back(encoded, [](const les_image* i) { les_image_free(const_cast<les_image*>(i)); });
  }
  return true;
}

int64_t prompt_positions(const les_model* model, const std::string& text, const std::vector<ImageRef>& images,
                         RequestError* error) {
  const std::string_view marker = LES_MEDIA_MARKER;
  std::vector<std::string_view> pieces;
  size_t from = 0;
  for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, from)) {
    pieces.push_back(std::string_view(text).substr(from, at - from));
    from = at + marker.size();
  }
  pieces.push_back(std::string_view(text).substr(from));
  if (pieces.size() - 1 != images.size()) {
    *error = {"messages: the text holds the media marker " + std::string(marker) + " " +
                  std::to_string(pieces.size() - 1) + " times for " + std::to_string(images.size()) +
                  " image(s); the marker stands for an image_url part and cannot be sent as text",
              "messages"};
    return -1;
  }
  int64_t n = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) n += les_image_n_tokens(images[i - 1].get());
    if (pieces[i].empty()) continue;
    les_status st = LES_OK;
    // Each piece as tokenize_prompt gives it: with a BOS for a vocabulary
    // that adds one, so later pieces count one too many (an upper bound).
    std::vector<les_token> ids = tokenize_prompt(model, pieces[i], true, &st);
    if (st != LES_OK) {
      *error = {std::string("tokenizing the conversation: ") + les_last_error(), "messages"};
      return -1;
    }
    n += static_cast<int64_t>(ids.size());
  }
  return n;
}

}  // namespace les::tool
