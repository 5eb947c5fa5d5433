// C ABI: vision encoders and images (les_vision.h).
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>

#include "core/model/forward.h"
#include "core/model/thread_count.h"
#include "vision/image_decode.h"
#include "vision/rgb_image.h"
#include "vision_internal.h"

using les::capi::fail;
using les::capi::guarded;

namespace les::capi {

constexpr size_t kVisionParamsV1 = sizeof(les_vision_params);
constexpr size_t kVisionStatsV1 = sizeof(les_vision_stats);

namespace {

// A new les_image from an encode's result.
Result<les_image*> make_image(const les_vision& v, Result<vision::EncodedImage> enc) {
  if (!enc.ok()) return enc.status();
  auto img = std::make_unique<les_image>();
  img->model = v.model;
  img->markers = v.markers;
  img->encoded = std::move(enc).value();
  std::vector<vision::PromptChunk> chunks;
  LES_RETURN_IF_ERROR(vision::append_image_chunks(v.markers, img->encoded.shape, 0, chunks));
  int64_t n = 0;
  for (const vision::PromptChunk& c : chunks) n += c.n_positions();
  img->n_positions = static_cast<int32_t>(n);
  return img.release();
}

}  // namespace

Result<MixedPrompt> flatten_prompt(std::span<const vision::PromptChunk> chunks,
                                   std::span<const les_image* const> images) {
  MixedPrompt out;
  for (const vision::PromptChunk& c : chunks) {
    if (c.kind == vision::PromptChunk::Kind::text) {
      out.tokens.insert(out.tokens.end(), c.tokens.begin(), c.tokens.end());
      continue;
    }
    if (c.image < 0 || static_cast<size_t>(c.image) >= images.size())
      return internal_error("vision prompt: chunk of image " + std::to_string(c.image) + " of " +
                            std::to_string(images.size()));
    const vision::EncodedImage& e = images[static_cast<size_t>(c.image)]->encoded;
    if (c.chunk < 0 || static_cast<size_t>(c.chunk) >= e.chunk_row.size())
      return internal_error("vision prompt: image " + std::to_string(c.image) + " has no chunk " +
                            std::to_string(c.chunk));
    const int64_t row0 = e.chunk_row[static_cast<size_t>(c.chunk)];
    if (row0 + c.n_embd_rows > e.n_rows())
      return internal_error("vision prompt: image " + std::to_string(c.image) + " chunk " + std::to_string(c.chunk) +
                            " runs past its rows");
    out.tokens.insert(out.tokens.end(), static_cast<size_t>(c.n_embd_rows), kEmbeddingToken);
    const auto first = e.embd.begin() + static_cast<std::ptrdiff_t>(row0 * e.n_embd);
    out.embd.insert(out.embd.end(), first, first + static_cast<std::ptrdiff_t>(c.n_embd_rows * e.n_embd));
  }
  return out;
}

uint64_t vision_memory_bytes(const les_vision& v) { return v.embedder->memory_bytes(); }

Status check_image_for(const les_image* image, const std::shared_ptr<ModelState>& model, const std::string& what) {
  if (image == nullptr) return invalid_argument_error(what + " is NULL");
  // Same owner: the very les_model the context was made from (a model freed
  // and another loaded at the same address is not mistaken for it).
  if (image->model.owner_before(model) || model.owner_before(image->model))
    return invalid_argument_error(what + " was encoded by a les_vision of another les_model (its embeddings and "
                                  "marker tokens belong to that model); encode it with a vision loaded for this "
                                  "context's model");
  return Status();
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
  return guarded("les_vision_load", [&]() -> les_status {
    if (out == nullptr) return fail(les::invalid_argument_error("les_vision_load: out is NULL"));
    *out = nullptr;
    if (model == nullptr || !model->state) return fail(les::invalid_argument_error("les_vision_load: model is NULL"));
    if (mmproj_path == nullptr) return fail(les::invalid_argument_error("les_vision_load: mmproj_path is NULL"));
    les_vision_params p = les_vision_default_params();
    les::Status s = les::capi::copy_versioned_in(params, p, les::capi::kVisionParamsV1, "les_vision_params");
    if (!s.ok()) return fail(s);
    s = les::check_thread_count(p.n_threads, "les_vision_params.n_threads", "the model's n_threads");
    if (!s.ok()) return fail(s);
    const les::capi::ModelState& ms = *model->state;
    les::vision::ImageEmbedderParams ep;
    ep.n_threads = p.n_threads > 0 ? p.n_threads : ms.params.n_threads;
    if (ep.n_threads <= 0) ep.n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    ep.release_after_encode = p.release_after_encode;
    ep.text_n_embd = ms.model->hparams().n_embd;
    auto emb = les::vision::ImageEmbedder::create(mmproj_path, ep);
    if (!emb.ok()) return fail(emb.status());
    // After the file's own checks (its width against n_embd first), the text side.
    auto markers = les::vision::find_image_markers(*ms.tokenizer);
    if (!markers.ok()) return fail(markers.status());
    auto v = std::make_unique<les_vision>();
    v->model = model->state;
    v->embedder = std::move(emb).value();
    v->markers = *markers;
    ms.logger->info("vision encoder '{}' loaded: {} threads, weights {:.1f} MiB{}", mmproj_path, ep.n_threads,
                    static_cast<double>(v->embedder->stats().weight_bytes) / (1024.0 * 1024.0),
                    ep.release_after_encode ? " (released after each encode)" : "");
    *out = v.release();
    return LES_OK;
  });
}

void les_vision_free(les_vision* vision) { delete vision; }

les_status les_vision_encode_rgb(les_vision* vision, const uint8_t* rgb, int32_t width, int32_t height,
                                 les_image** out) {
  return guarded("les_vision_encode_rgb", [&]() -> les_status {
    if (out == nullptr) return fail(les::invalid_argument_error("les_vision_encode_rgb: out is NULL"));
    *out = nullptr;
    if (vision == nullptr) return fail(les::invalid_argument_error("les_vision_encode_rgb: vision is NULL"));
    if (rgb == nullptr) return fail(les::invalid_argument_error("les_vision_encode_rgb: rgb is NULL"));
    les::Status s = les::vision::check_image_size(width, height, les::vision::kDefaultMaxImagePixels,
                                                  "les_vision_encode_rgb: the image");
    if (!s.ok()) return fail(s);
    const size_t n = static_cast<size_t>(width) * static_cast<size_t>(height) * 3;
    auto img = les::vision::rgb_image_from_pixels(std::span<const uint8_t>(rgb, n), width, height);
    if (!img.ok()) return fail(img.status());
    auto r = les::capi::make_image(*vision, vision->embedder->encode(*img));
    if (!r.ok()) return fail(r.status().with_context("les_vision_encode_rgb"));
    *out = *r;
    return LES_OK;
  });
}

les_status les_vision_encode_file(les_vision* vision, const char* path, les_image** out) {
  return guarded("les_vision_encode_file", [&]() -> les_status {
    if (out == nullptr) return fail(les::invalid_argument_error("les_vision_encode_file: out is NULL"));
    *out = nullptr;
    if (vision == nullptr) return fail(les::invalid_argument_error("les_vision_encode_file: vision is NULL"));
    if (path == nullptr) return fail(les::invalid_argument_error("les_vision_encode_file: path is NULL"));
    auto r = les::capi::make_image(*vision, vision->embedder->encode_file(path));
    if (!r.ok()) return fail(r.status());
    *out = *r;
    return LES_OK;
  });
}

les_status les_vision_encode_memory(les_vision* vision, const uint8_t* data, size_t n_bytes, les_image** out) {
  return guarded("les_vision_encode_memory", [&]() -> les_status {
    if (out == nullptr) return fail(les::invalid_argument_error("les_vision_encode_memory: out is NULL"));
    *out = nullptr;
    if (vision == nullptr) return fail(les::invalid_argument_error("les_vision_encode_memory: vision is NULL"));
    if (data == nullptr) return fail(les::invalid_argument_error("les_vision_encode_memory: data is NULL"));
    if (n_bytes == 0)
      return fail(les::invalid_argument_error("les_vision_encode_memory: n_bytes is 0 (no image data)"));
    auto r = les::capi::make_image(*vision, vision->embedder->encode_bytes(std::span<const uint8_t>(data, n_bytes)));
    if (!r.ok()) return fail(r.status().with_context("les_vision_encode_memory"));
    *out = *r;
    return LES_OK;
  });
}

int32_t les_image_n_tokens(const les_image* image) { return image != nullptr ? image->n_positions : 0; }

void les_image_free(les_image* image) { delete image; }

les_status les_context_append_image(les_context* ctx, const les_image* image) {
  if (ctx == nullptr)
    return guarded("les_context_append_image",
                   [] { return fail(les::invalid_argument_error("les_context_append_image: ctx is NULL")); });
  return guarded(
      "les_context_append_image",
      [&]() -> les_status {
        les::capi::ContextUse use(ctx->in_use, "les_context_append_image", les::capi::Access::write);
        if (!use.ok()) return fail(use.status());
        ctx->last_error.clear();
        auto err = [&](const les::Status& s) {
          return fail(s.with_context("les_context_append_image"), &ctx->last_error);
        };
        les::Status s = les::capi::check_image_for(image, ctx->model, "the image");
        if (!s.ok()) return err(s);
        std::vector<les::vision::PromptChunk> chunks;
        s = les::vision::append_image_chunks(image->markers, image->encoded.shape, 0, chunks);
        if (!s.ok()) return err(s);
        const les_image* const one[1] = {image};
        auto mixed = les::capi::flatten_prompt(chunks, one);
        if (!mixed.ok()) return err(mixed.status());
        les::Context& c = *ctx->ctx;
        const int64_t need = static_cast<int64_t>(mixed->tokens.size()) + (c.pending() >= 0 ? 1 : 0);
        if (c.n_past() + need > c.n_ctx())
          return err(les::context_full_error("the image takes " + std::to_string(mixed->tokens.size()) +
                                             " positions but the context has room for " +
                                             std::to_string(c.n_ctx() - c.n_tokens()) + " (n_ctx " +
                                             std::to_string(c.n_ctx()) + ")"));
        if (ctx->poll_interrupt())  // a cancel pending since before this call (les_context_cancel)
          return err(les::cancelled_error("cancelled by les_context_cancel() before it started"));
        s = c.decode_mixed(mixed->tokens, mixed->embd);
        if (s.code() == les::StatusCode::cancelled)
          return err(les::cancelled_error("cancelled by les_context_cancel() (" + s.message() + ")"));
        if (!s.ok()) return err(s);
        return LES_OK;
      },
      &ctx->last_error);
}

les_status les_vision_get_stats(const les_vision* vision, les_vision_stats* out) {
  return guarded("les_vision_get_stats", [&]() -> les_status {
    if (vision == nullptr) return fail(les::invalid_argument_error("les_vision_get_stats: vision is NULL"));
    const les::vision::ImageEmbedderStats s = vision->embedder->stats();
    les_vision_stats r;
    std::memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.n_images_encoded = s.n_images;
    r.n_chunks_encoded = s.n_chunks;
    r.n_image_tokens = s.n_rows;
    r.encode_ms_total = s.encode_ms_total;
    r.last_encode_ms = s.last_encode_ms;
    r.weight_bytes = s.weight_bytes;
    r.weight_bytes_resident = s.weight_bytes_resident;
    r.n_weight_loads = s.n_weight_loads;
    r.memory_bytes = s.memory_bytes;
    les::Status st = les::capi::copy_versioned_out(r, out, les::capi::kVisionStatsV1, "les_vision_stats");
    if (!st.ok()) return fail(st);
    return LES_OK;
  });
}

}  // extern "C"
