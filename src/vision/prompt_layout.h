// The token/chunk layout of a MiniCPM-V (minicpmv4_6) prompt with images, as
// llama.cpp's mtmd_tokenize builds it (tools/mtmd/mtmd.cpp at 81ff7abe, the
// MINICPMV_2_6 slice template; docs/model-graphs.md section 6,
// "Prompt layout and decoder positions"):
//
//   text before the media marker, then per image
//   <image> overview </image>  then for each grid row
//   (<slice> slice </slice>) x cols, with "\n" between rows (none after the last),
//   then the text after the marker.
//
// Text chunks hold token ids; consecutive text (prompt text and marker
// tokens) is one chunk. Image chunks stand for a chunk's embedding rows, one
// decoder position each (README, "Decoder positions": plain sequential
// positions for qwen35moe).
//
// Thread-safety: pure functions over a const Tokenizer (thread-safe).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/tokenizer/tokenizer.h"
#include "util/status.h"
#include "vision/image_preprocess.h"

namespace les::vision {

// The text tokens around image chunks. llama.cpp's lookup_token finds each
// as the first id whose piece (special tokens rendered) is exactly the text.
struct ImageMarkerTokens {
  int32_t image_start = -1;  // "<image>": before the overview
  int32_t image_end = -1;    // "</image>": after the overview
  int32_t slice_start = -1;  // "<slice>": before each slice
  int32_t slice_end = -1;    // "</slice>": after each slice
  int32_t row_end = -1;      // "\n": between rows of slices
};

// Looks the markers up in `tok`'s vocabulary (a scan of every id: O(n_vocab)).
// Errors: unsupported, naming every missing marker, when the vocabulary
// lacks one (llama.cpp would put token -1 into the prompt and fail to decode;
// the plain synthetic qwen35moe fixture has none of the four bracket tokens).
Result<ImageMarkerTokens> find_image_markers(const Tokenizer& tok);

// One image's chunk shape: what the layout needs of a PreprocessedImage.
struct ImageShape {
  int32_t grid_cols = 0, grid_rows = 0;  // 0 x 0: overview only
  std::vector<int32_t> chunk_tokens;     // per chunk: the overview, then the slices row-major
};

// The shape of a preprocessed image.
ImageShape image_shape(const PreprocessedImage& img);

// One piece of a multimodal prompt, decoded in order at consecutive positions:
// text (Context::decode) or one image chunk's embeddings (Context::decode_embeddings).
struct PromptChunk {
  enum class Kind { text, image };
  Kind kind = Kind::text;
  std::vector<int32_t> tokens;  // text: the token ids
  int32_t image = -1;           // image: which image (index into the images given)
  int32_t chunk = -1;           // image: which of its chunks (0 = overview, then the slices row-major)
  int32_t n_embd_rows = 0;      // image: its embedding rows (= decoder positions)
  // Decoder positions this chunk takes: tokens.size() or n_embd_rows.
  int32_t n_positions() const noexcept {
    return kind == Kind::text ? static_cast<int32_t>(tokens.size()) : n_embd_rows;
  }
};

// Appends one image's chunks and marker tokens to `out` (marker tokens join
// a text chunk at the end of `out`). Errors: invalid_argument (chunk_tokens
// empty or not 1 + cols * rows long, a grid with one side 0, a chunk of <= 0
// tokens).
Status append_image_chunks(const ImageMarkerTokens& markers, const ImageShape& shape, int32_t image_index,
                           std::vector<PromptChunk>& out);

// How build_prompt reads the prompt text.
struct PromptOptions {
  std::string_view media_marker = "<__media__>";  // where each image goes (mtmd's default marker)
  bool add_special = false;  // BOS / EOS as the vocabulary's add_bos / add_eos say (mtmd_input_text.add_special)
  bool parse_special = true;  // control-token texts in the prompt become their ids
};

// The whole prompt: `prompt` is split at each media marker, the text parts
// are tokenised without BOS/EOS (as mtmd does), images[i] goes at the i-th
// marker; with add_special, BOS leads (its own chunk when the prompt starts
// with an image) and EOS ends it, if the vocabulary asks for them. Errors:
// invalid_argument (marker count != images.size(); an empty marker; a bad
// ImageShape), those of tokenize().
Result<std::vector<PromptChunk>> build_prompt(const Tokenizer& tok, const ImageMarkerTokens& markers,
                                              std::string_view prompt, std::span<const ImageShape> images,
                                              const PromptOptions& options = {});

}  // namespace les::vision
