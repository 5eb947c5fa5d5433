// Internal to bindings/c: the structs behind les_vision and les_image
// (les_vision.h) and the one way a prompt with images becomes a context's
// rows (shared by les_context_append_image and les_generate_with_images).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "capi_internal.h"
#include "vision/image_embedder.h"
#include "vision/prompt_layout.h"

namespace les::capi {

// A prompt with images as one decode: ids, with kEmbeddingToken (-1) where
// the next row of `embd` goes (Context::decode_mixed).
struct MixedPrompt {
  std::vector<int32_t> tokens;
  std::vector<float> embd;
};

// Flattens `chunks` (prompt_layout.h) with the embedding rows of `images`
// (chunk.image indexes it). Errors: internal (a chunk that does not match
// its image's rows).
Result<MixedPrompt> flatten_prompt(std::span<const vision::PromptChunk> chunks,
                                   std::span<const les_image* const> images);

// Checks that `image` may go into a context of `model`: invalid_argument
// naming `what` (NULL; encoded by a vision of another les_model).
Status check_image_for(const les_image* image, const std::shared_ptr<ModelState>& model, const std::string& what);

}  // namespace les::capi

struct les_vision {
  std::shared_ptr<les::capi::ModelState> model;  // the text model (kept alive, as a context does)
  std::unique_ptr<les::vision::ImageEmbedder> embedder;
  les::vision::ImageMarkerTokens markers;  // the text model's marker token ids
};

struct les_image {
  std::weak_ptr<les::capi::ModelState> model;  // the text model of the vision that encoded it (identity only)
  les::vision::ImageMarkerTokens markers;
  les::vision::EncodedImage encoded;
  int32_t n_positions = 0;  // embedding rows + marker tokens
};
