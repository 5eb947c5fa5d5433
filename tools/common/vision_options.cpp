// See vision_options.h.
#include "common/vision_options.h"

#include <cstdio>

#include "common/model_options.h"

namespace les::tool {

void add_vision_options(CLI::App* cmd, VisionOptions& o, bool with_image) {
  cmd->add_option("--mmproj", o.mmproj,
                  "Vision encoder (mmproj GGUF, projector minicpmv4_6) for image input")
      ->type_name("FILE");
  if (with_image)
    cmd->add_option("--image", o.images,
                    "Image file (PNG, JPEG, PPM) put in front of the prompt, inside the user turn; repeatable")
        ->type_name("PATH");
  cmd->add_flag("--vision-release", o.release,
                "Unmap the vision encoder's weights after each image (mapped again for the next one)");
}

int validate_vision_options(const char* tool, const VisionOptions& o) {
  if (!o.enabled() && !o.images.empty()) {
    std::fprintf(stderr, "les %s: --image needs --mmproj FILE (the vision encoder that reads the image)\n", tool);
    return 2;
  }
  if (!o.enabled() && o.release) {
    std::fprintf(stderr, "les %s: --vision-release needs --mmproj FILE\n", tool);
    return 2;
  }
  return 0;
}

int load_vision(const char* tool, const VisionOptions& o, les_model* model, int n_threads, VisionHandle& vision) {
  les_vision_params vp = les_vision_default_params();
  vp.n_threads = n_threads;
  vp.release_after_encode = o.release;
  if (les_status st = les_vision_load(model, o.mmproj.c_str(), &vp, &vision.p); st != LES_OK)
    return fail_c(tool, "--mmproj", st, les_last_error());
  les_vision_stats s{};
  s.struct_size = sizeof s;
  if (les_vision_get_stats(vision.p, &s) == LES_OK)
    std::fprintf(stderr, "les %s: vision encoder %s: %.1f MiB of weights%s\n", tool, o.mmproj.c_str(),
                 static_cast<double>(s.weight_bytes) / (1024.0 * 1024.0),
                 o.release ? ", released after each image" : "");
  return 0;
}

int encode_image(const char* tool, les_vision* vision, const std::string& path, ImageHandle& out, const char* what) {
  les_image* img = nullptr;
  if (les_status st = les_vision_encode_file(vision, path.c_str(), &img); st != LES_OK)
    return fail_c(tool, what, st, les_last_error());
  out = ImageHandle(img);
  les_vision_stats s{};
  s.struct_size = sizeof s;
  const double ms = les_vision_get_stats(vision, &s) == LES_OK ? s.last_encode_ms : 0.0;
  std::fprintf(stderr, "les %s: image %s: %d positions (encoded in %.1f ms)\n", tool, path.c_str(),
               les_image_n_tokens(img), ms);
  return 0;
}

std::string media_markers(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += LES_MEDIA_MARKER;
  return s;
}

void print_vision_stats(const char* tool, const les_vision* vision) {
  les_vision_stats s{};
  s.struct_size = sizeof s;
  if (les_vision_get_stats(vision, &s) != LES_OK || s.n_images_encoded == 0) return;
  std::fprintf(stderr,
               "les %s: vision: %lld image%s (%lld chunk%s), %lld image tokens, encode %.1f ms (%.1f ms per image), "
               "weights resident %.1f of %.1f MiB\n",
               tool, static_cast<long long>(s.n_images_encoded), s.n_images_encoded == 1 ? "" : "s",
               static_cast<long long>(s.n_chunks_encoded), s.n_chunks_encoded == 1 ? "" : "s",
               static_cast<long long>(s.n_image_tokens), s.encode_ms_total,
               s.encode_ms_total / static_cast<double>(s.n_images_encoded),
               static_cast<double>(s.weight_bytes_resident) / (1024.0 * 1024.0),
               static_cast<double>(s.weight_bytes) / (1024.0 * 1024.0));
}

}  // namespace les::tool
