// See images.h.
#include "serve/images.h"

#include <algorithm>
#include <string_view>

#include "common/prompt_reuse.h"

namespace les::tool {

ImageRef ImageCache::find(const std::vector<uint8_t>& bytes) const {
  for (const auto& [b, image] : entries_)
    if (b == bytes) return image;
  return nullptr;
}

void ImageCache::keep_only(const std::vector<ImageRef>& keep) {
  std::erase_if(entries_, [&](const auto& e) {
    return std::find(keep.begin(), keep.end(), e.second) == keep.end();
  });
}

bool encode_request_images(les_vision* vision, const CompletionRequest& request, std::vector<ImageRef>* out,
                           RequestError* error, ImageCache* cache, size_t* n_encoded) {
  out->clear();
  if (n_encoded != nullptr) *n_encoded = 0;
  if (request.images.empty()) return true;
  if (vision == nullptr) {
    *error = {request.images[0].param +
                  ": this server takes no images (start les serve with --mmproj FILE, the model's vision encoder)",
              request.images[0].param};
    return false;
  }
  // The cached ones first, then drop the rest of the cache before encoding new ones.
  out->resize(request.images.size());
  if (cache != nullptr) {
    for (size_t i = 0; i < request.images.size(); ++i) (*out)[i] = cache->find(request.images[i].bytes);
    cache->keep_only(*out);
  }
  for (size_t i = 0; i < request.images.size(); ++i) {
    if ((*out)[i]) continue;
    const RequestImage& img = request.images[i];
    les_image* encoded = nullptr;
    const les_status st = les_vision_encode_memory(vision, img.bytes.data(), img.bytes.size(), &encoded);
    if (st != LES_OK) {
      *error = {img.param + ": the image cannot be used: " + les_last_error(), img.param};
      out->clear();
      return false;
    }
    (*out)[i] = ImageRef(encoded, [](const les_image* e) { les_image_free(const_cast<les_image*>(e)); });
    if (n_encoded != nullptr) ++*n_encoded;
  }
  if (cache != nullptr) {
    std::vector<std::pair<std::vector<uint8_t>, ImageRef>> entries;
    for (size_t i = 0; i < request.images.size(); ++i) entries.emplace_back(request.images[i].bytes, (*out)[i]);
    cache->replace(std::move(entries));
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
