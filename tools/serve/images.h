// `les serve`: a chat request's images (request.h: the encoded bytes of
// its image_url parts) encoded for the model (les_vision.h), and the number
// of context positions a prompt with images takes.
//
// Thread-safety: encode_request_images() is thread-safe for a null cache
// (les_vision is; encodes take turns on its lock), and with a cache as
// ImageCache says; prompt_positions() is (les_tokenize).
#pragma once

#include <les/les.h>

#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "serve/request.h"

namespace les::tool {

// An encoded image (les_image_free when the last holder goes).
using ImageRef = std::shared_ptr<const les_image>;

// The encoded images of the last request, keyed by their bytes as sent: a
// multi-turn chat sends its images again with every request, and a request
// whose image bytes equal one of these gets the same ImageRef without
// encoding it again (and the engine can then see the image is the one its
// context holds). Holds at most one request's images: before a request's
// new images are encoded, the entries it does not use are dropped, so the
// server never holds more than one request's worth (plus what a running
// generation still references).
//
// Thread-safety: not thread-safe; its owner serialises calls (ServeEngine::prepare
// holds its lock).
class ImageCache {
 public:
  // The cached image whose bytes equal `bytes`, or null.
  ImageRef find(const std::vector<uint8_t>& bytes) const;
  // Keeps exactly these (bytes, image) pairs.
  void replace(std::vector<std::pair<std::vector<uint8_t>, ImageRef>> entries) { entries_ = std::move(entries); }
  // Drops the entries whose images are not in `keep`.
  void keep_only(const std::vector<ImageRef>& keep);

 private:
  std::vector<std::pair<std::vector<uint8_t>, ImageRef>> entries_;
};

// Encodes every image of `request` with `vision` (borrowed; nullptr: the
// server has no --mmproj) into *out, in order; an image whose bytes are in
// `cache` (may be null) is taken from it, and the cache then holds this
// request's images. *n_encoded (may be null) counts the images encoded.
// Returns false with *error set for a 400 reply: images without --mmproj, an
// image that cannot be decoded or encoded (the library's message, prefixed
// with its content part, e.g. "messages[0].content[1]: ...").
bool encode_request_images(les_vision* vision, const CompletionRequest& request, std::vector<ImageRef>* out,
                           RequestError* error, ImageCache* cache = nullptr, size_t* n_encoded = nullptr);

// Positions `text` (with one LES_MEDIA_MARKER per image of `images`) takes in
// a context: the tokens of the text between the markers (BOS as the
// vocabulary asks, counted for every piece: at most one per image too many),
// control-token texts parsed, plus les_image_n_tokens() of
// each image. -1 with *error set when the marker count differs from the
// number of images (the text holds the marker itself) or tokenizing fails.
int64_t prompt_positions(const les_model* model, const std::string& text, const std::vector<ImageRef>& images,
                         RequestError* error);

}  // namespace les::tool
