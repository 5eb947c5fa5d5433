// ImageEmbedder: an mmproj file turned into a service that makes image
// embeddings: RGB8 image -> preprocessing (image_preprocess.h) -> the encoder
// per chunk (vision_encoder.h) -> an EncodedImage (every chunk's embedding
// rows and the image's shape for the prompt layout). What the C API's
// les_vision holds.
//
// Weights: the MmprojModel (a read-only mapping of the file) is loaded at
// create(), which validates the file. With release_after_encode it is
// dropped (unmapped) after create() and after every encode(), and loaded
// again from the same path by the next encode(); a file whose hyper-parameters
// changed meanwhile is refused (format error naming the path). The
// embeddings do not depend on whether the weights were reloaded.
//
// Memory: memory_bytes() is what an encode needs at its peak: the weights plus
// an upper bound of the encode's scratch for the largest image the slicing
// allows (an overview and kMaxSlices slices of image_size^2 pixels).
//
// Thread-safety: thread-safe. encode() calls take turns on an internal mutex
// (one encoder, one thread pool); stats() may be read at any time (it does not
// wait for a running encode).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "kernels/thread_pool.h"
#include "util/status.h"
#include "vision/mmproj_model.h"
#include "vision/prompt_layout.h"
#include "vision/rgb_image.h"

namespace les::vision {

struct ImageEmbedderParams {
  int n_threads = 1;                  // encoder threads incl. the caller (>= 1)
  bool release_after_encode = false;  // unmap the weights after each encode
  int64_t text_n_embd = 0;            // the text model's n_embd (checked against the mmproj; 0 = no check)
};

// One encoded image: every chunk's embedding rows, token-major, chunk after
// chunk (overview, then the slices row-major), n_embd floats per row.
struct EncodedImage {
  ImageShape shape;                // grid and per-chunk row counts (prompt_layout.h)
  int64_t n_embd = 0;              // floats per row (the mmproj's output width)
  std::vector<float> embd;         // sum(shape.chunk_tokens) x n_embd
  std::vector<int64_t> chunk_row;  // first row of each chunk in embd
  int32_t width = 0, height = 0;   // the source image's size (pixels)
  int64_t n_rows() const noexcept { return n_embd > 0 ? static_cast<int64_t>(embd.size()) / n_embd : 0; }
};

struct ImageEmbedderStats {
  int64_t n_images = 0;         // images encoded
  int64_t n_chunks = 0;         // encoder runs
  int64_t n_rows = 0;           // embedding rows produced
  double encode_ms_total = 0;   // wall time of encode() calls (incl. reloading weights), ms
  double last_encode_ms = 0;
  uint64_t weight_bytes = 0;    // tensor bytes of the encoder
  uint64_t weight_bytes_resident = 0;  // weight_bytes while the weights are mapped, else 0
  int64_t n_weight_loads = 0;   // times the file was mapped (create() counts 1)
  uint64_t memory_bytes = 0;    // memory_bytes()
};

class ImageEmbedder {
 public:
  // Loads and validates `path` (MmprojModel::load with p.text_n_embd).
  // Errors: those of MmprojModel::load; invalid_argument (n_threads < 1).
  static Result<std::unique_ptr<ImageEmbedder>> create(const std::string& path, const ImageEmbedderParams& p);
  ~ImageEmbedder();
  ImageEmbedder(const ImageEmbedder&) = delete;
  ImageEmbedder& operator=(const ImageEmbedder&) = delete;

  // Preprocesses and encodes `image`. Errors: those of preprocess_image and
  // VisionEncoder::encode; of MmprojModel::load when released weights are
  // loaded again (format, naming the path, when the file changed).
  Result<EncodedImage> encode(const RgbImage& image);
  // Decodes the image file at `path` (image_decode.h) and encodes it; the
  // decode counts in the encode time. Errors: those of decode_image_file and encode().
  Result<EncodedImage> encode_file(const std::string& path);
  // Decodes an encoded image in memory (decode_image) and encodes it, likewise.
  Result<EncodedImage> encode_bytes(std::span<const uint8_t> bytes);

  ImageEmbedderStats stats() const;
  const MmprojHparams& hparams() const noexcept { return hp_; }
  // Weights plus an upper bound of an encode's scratch (see the top), bytes.
  uint64_t memory_bytes() const noexcept { return weight_bytes_ + scratch_bytes_; }

 private:
  ImageEmbedder() = default;
  Status ensure_loaded();  // with mu_ held
  Result<EncodedImage> encode_since(const RgbImage& image, std::chrono::steady_clock::time_point t0);

  std::string path_;
  ImageEmbedderParams p_;
  MmprojHparams hp_;  // from the first load
  uint64_t weight_bytes_ = 0;
  uint64_t scratch_bytes_ = 0;
  std::mutex mu_;  // one encode at a time
  std::unique_ptr<MmprojModel> model_;  // null while released
  std::unique_ptr<kernels::ThreadPool> pool_;
  mutable std::mutex stats_mu_;  // stats_ (read while an encode runs)
  ImageEmbedderStats stats_;
};

// Tensor bytes of every weight of `m` (the mapped bytes an encode reads).
uint64_t mmproj_weight_bytes(const MmprojModel& m);

// Upper bound of the scratch one encode needs, bytes: the encoder's
// activations for an image_size^2 chunk (im2col, residual and attention rows,
// per-head scores, FFN rows, merger and projector rows) plus the normalised
// pixels and embeddings of an overview and kMaxSlices slices.
uint64_t encode_scratch_bytes(const MmprojHparams& hp);

}  // namespace les::vision
