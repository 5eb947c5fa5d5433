// C ABI: les_vision.h in a build without image input (-DLES_WITH_VISION=OFF;
// src/vision is not compiled). Every entry point exists, so the ABI is the
// same: les_vision_load() and every call that takes an image or a vision
// encoder returns LES_ERR_UNSUPPORTED saying the build has no image input;
// no les_vision or les_image can exist, so the free functions have nothing
// to free and les_image_n_tokens() returns 0, as for NULL.
#include <cstring>
#include <string>

#include "capi_internal.h"

using les::capi::fail;
using les::capi::guarded;

namespace {

les_status no_vision(const char* fn, les::capi::HandleError* handle_error = nullptr) {
  return fail(les::unsupported_error(std::string(fn) +
                                     ": this build of LES has no image input (configured with LES_WITH_VISION=OFF)"),
              handle_error);
}

}  // namespace

namespace les::capi {

// No les_vision can exist without image input: a context's memory plan counts none.
uint64_t vision_memory_bytes(const les_vision& v) {
  (void)v;
  return 0;
}

}  // namespace les::capi

extern "C" {

les_vision_params les_vision_default_params(void) {
  les_vision_params p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = sizeof(les_vision_params);
  p.n_threads = 0;
  p.release_after_encode = false;
  return p;
}

les_status les_vision_load(les_model* model, const char* mmproj_path, const les_vision_params* params,
                           les_vision** out) {
  (void)model;
  (void)mmproj_path;
  (void)params;
  return guarded("les_vision_load", [&]() -> les_status {
    if (out != nullptr) *out = nullptr;
    return no_vision("les_vision_load");
  });
}

void les_vision_free(les_vision* vision) { (void)vision; }

les_status les_vision_encode_rgb(les_vision* vision, const uint8_t* rgb, int32_t width, int32_t height,
                                 les_image** out) {
  (void)vision;
  (void)rgb;
  (void)width;
  (void)height;
  return guarded("les_vision_encode_rgb", [&]() -> les_status {
    if (out != nullptr) *out = nullptr;
    return no_vision("les_vision_encode_rgb");
  });
}

les_status les_vision_encode_file(les_vision* vision, const char* path, les_image** out) {
  (void)vision;
  (void)path;
  return guarded("les_vision_encode_file", [&]() -> les_status {
    if (out != nullptr) *out = nullptr;
    return no_vision("les_vision_encode_file");
  });
}

les_status les_vision_encode_memory(les_vision* vision, const uint8_t* data, size_t n_bytes, les_image** out) {
  (void)vision;
  (void)data;
  (void)n_bytes;
  return guarded("les_vision_encode_memory", [&]() -> les_status {
    if (out != nullptr) *out = nullptr;
    return no_vision("les_vision_encode_memory");
  });
}

int32_t les_image_n_tokens(const les_image* image) {
  (void)image;
  return 0;
}

void les_image_free(les_image* image) { (void)image; }

les_status les_context_append_image(les_context* ctx, const les_image* image) {
  (void)image;
  return guarded(
      "les_context_append_image", [&]() -> les_status {
        return no_vision("les_context_append_image", ctx != nullptr ? &ctx->last_error : nullptr);
      },
      ctx != nullptr ? &ctx->last_error : nullptr);
}

les_status les_generate_with_images(les_context* ctx, const char* prompt, const les_image* const* images,
                                    int32_t n_images, const les_generate_params* params, les_token_callback callback,
                                    void* user_data) {
  (void)prompt;
  (void)images;
  (void)n_images;
  (void)params;
  (void)callback;
  (void)user_data;
  return guarded(
      "les_generate_with_images", [&]() -> les_status {
        return no_vision("les_generate_with_images", ctx != nullptr ? &ctx->last_error : nullptr);
      },
      ctx != nullptr ? &ctx->last_error : nullptr);
}

les_status les_vision_get_stats(const les_vision* vision, les_vision_stats* out) {
  (void)vision;
  (void)out;
  return guarded("les_vision_get_stats", [&]() -> les_status { return no_vision("les_vision_get_stats"); });
}

}  // extern "C"
