// Image input for `les run` and `les chat` (les_vision.h): --mmproj FILE,
// --image PATH (repeatable; les run), --vision-release, the handles that own
// the encoder and the images, and the lines the tool prints about them.
//
// Errors: --image without --mmproj is a usage error (exit 2); an mmproj that
// cannot be loaded (missing, another projector type, another output width, a
// text model without the image marker tokens) and an image that cannot be
// read or decoded are runtime errors (exit 1), each printed as
// "les TOOL: WHAT: STATUS: the library's message naming the problem".
#pragma once

#include <les/les.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace les::tool {

struct VisionOptions {
  std::string mmproj;               // --mmproj: the vision encoder's GGUF ("" = no images)
  std::vector<std::string> images;  // --image (les run)
  bool release = false;             // --vision-release: unmap the encoder's weights after each image
  bool enabled() const noexcept { return !mmproj.empty(); }
};

struct VisionHandle {
  les_vision* p = nullptr;
  VisionHandle() = default;
  VisionHandle(const VisionHandle&) = delete;
  VisionHandle& operator=(const VisionHandle&) = delete;
  ~VisionHandle() { les_vision_free(p); }
};

// An owned les_image (movable, so a vector can hold them).
struct ImageHandle {
  les_image* p = nullptr;
  ImageHandle() = default;
  explicit ImageHandle(les_image* img) : p(img) {}
  ImageHandle(ImageHandle&& o) noexcept : p(o.p) { o.p = nullptr; }
  ImageHandle& operator=(ImageHandle&& o) noexcept {
    std::swap(p, o.p);
    return *this;
  }
  ImageHandle(const ImageHandle&) = delete;
  ImageHandle& operator=(const ImageHandle&) = delete;
  ~ImageHandle() { les_image_free(p); }
};

// Adds --mmproj and --vision-release (and --image when `with_image`).
void add_vision_options(CLI::App* cmd, VisionOptions& o, bool with_image);

// Usage errors (exit 2): --image or --vision-release without --mmproj.
int validate_vision_options(const char* tool, const VisionOptions& o);

// Loads --mmproj for `model` with n_threads (0 = the model's); prints
// "les TOOL: vision encoder FILE: W MiB of weights[, released after each image]".
// 0, or 1 after printing the library's message.
int load_vision(const char* tool, const VisionOptions& o, les_model* model, int n_threads, VisionHandle& vision);

// Encodes the image file at `path`; prints "les TOOL: image PATH: N positions
// (encoded in X ms)". 0, or 1 after printing "les TOOL: WHAT: " and the
// library's message naming the problem (`what`: the flag or command).
int encode_image(const char* tool, les_vision* vision, const std::string& path, ImageHandle& out,
                 const char* what = "--image");

// The text in front of a prompt for n images: n media markers (LES_MEDIA_MARKER),
// where llama-mtmd-cli puts them.
std::string media_markers(size_t n);

// "les TOOL: vision: N images, M image tokens, encode X ms (Y ms per image), weights resident R MiB".
void print_vision_stats(const char* tool, const les_vision* vision);

}  // namespace les::tool
