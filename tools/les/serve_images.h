// `les serve`: a chat request's images (serve_request.h: the encoded bytes of
// its image_url parts) encoded for the model (les_vision.h), and the number
// of context positions a prompt with images takes.
//
// Thread-safety: encode_request_images() is thread-safe (les_vision is;
// encodes take turns on its lock); prompt_positions() is (les_tokenize).
#pragma once

#include <les/les.h>

#include <memory>
#include <string>
#include <vector>

#include "les/serve_request.h"

namespace les::tool {

// An encoded image (les_image_free when the last holder goes).
using ImageRef = std::shared_ptr<const les_image>;

// Encodes every image of `request` with `vision` (borrowed; nullptr: the
// server has no --mmproj) into *out, in order. Returns false with *error
// set for a 400 reply: images without --mmproj, an image that cannot be
// decoded or encoded (the library's message, prefixed with its content
// part, e.g. "messages[0].content[1]: ...").
bool encode_request_images(les_vision* vision, const CompletionRequest& request, std::vector<ImageRef>* out,
                           RequestError* error);

// Positions `text` (with one LES_MEDIA_MARKER per image of `images`) takes in
// a context: the tokens of the text between the markers (BOS as the
// vocabulary asks, counted for every piece: at most one per image too many),
// control-token texts parsed, plus les_image_n_tokens() of
// each image. -1 with *error set when the marker count differs from the
// number of images (the text holds the marker itself) or tokenizing fails.
int64_t prompt_positions(const les_model* model, const std::string& text, const std::vector<ImageRef>& images,
                         RequestError* error);

}  // namespace les::tool
