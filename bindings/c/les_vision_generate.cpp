// C ABI: les_generate_with_images (les_vision.h): a prompt with media markers
// and its images, evaluated as one decode, then les_generate's loop.
#include <string>
#include <string_view>
#include <vector>

#include "vision_internal.h"

using les::capi::fail;
using les::capi::guarded;

extern "C" {

les_status les_generate_with_images(les_context* ctx, const char* prompt, const les_image* const* images,
                                    int32_t n_images, const les_generate_params* params, les_token_callback callback,
                                    void* user_data) {
  static constexpr const char* kFn = "les_generate_with_images";
  les::capi::MixedPrompt mixed;
  les::capi::CustomPrompt custom;
  custom.check = [&](const les_generate_params& p, const char* text, size_t text_len) -> les::Status {
    if (text == nullptr) return les::invalid_argument_error("prompt is NULL");
    if (p.prompt_tokens != nullptr)
      return les::invalid_argument_error("les_generate_params.prompt_tokens must be NULL (the prompt is text with "
                                         "media markers)");
    if (n_images < 0) return les::invalid_argument_error("n_images is " + std::to_string(n_images));
    if (n_images > 0 && images == nullptr)
      return les::invalid_argument_error("images is NULL but n_images is " + std::to_string(n_images));
    const std::span<const les_image* const> imgs(images, static_cast<size_t>(n_images));
    for (int32_t i = 0; i < n_images; ++i)
      LES_RETURN_IF_ERROR(les::capi::check_image_for(imgs[static_cast<size_t>(i)], ctx->model,
                                                     "images[" + std::to_string(i) + "]"));
    if (p.mtp && n_images > 0)
      return les::unsupported_error(
          "les_generate_params.mtp with images: the MTP head reads a token id at every position and image "
          "positions have none; use lookup_ngram or draft_model, or no drafter");
    les::Context& c = *ctx->ctx;
    std::vector<les::vision::ImageShape> shapes;
    for (const les_image* im : imgs) shapes.push_back(im->encoded.shape);
    les::vision::PromptOptions o;
    o.media_marker = LES_MEDIA_MARKER;
    o.add_special = c.n_tokens() == 0;
    o.parse_special = p.parse_special;
    // Without images the markers are never looked up: any (unused) values do.
    const les::vision::ImageMarkerTokens markers =
        n_images > 0 ? imgs[0]->markers : les::vision::ImageMarkerTokens{};
    LES_ASSIGN_OR_RETURN(const std::vector<les::vision::PromptChunk> chunks,
                         les::vision::build_prompt(*ctx->model->tokenizer, markers,
                                                   std::string_view(text, text_len), shapes, o));
    LES_ASSIGN_OR_RETURN(mixed, les::capi::flatten_prompt(chunks, imgs));
    if (mixed.tokens.empty() && c.pending() < 0 && !c.has_logits())
      return les::invalid_argument_error("the prompt is empty and the context has nothing to continue from");
    const int64_t need = static_cast<int64_t>(mixed.tokens.size());
    if (c.n_tokens() + need > c.n_ctx())
      return les::context_full_error("the prompt with its images takes " + std::to_string(need) +
                                     " positions but the context has room for " +
                                     std::to_string(c.n_ctx() - c.n_tokens()) + " (n_ctx " +
                                     std::to_string(c.n_ctx()) + ")");
    return les::Status();
  };
  custom.prefill = [&](les::Context& c) -> les::Result<int32_t> {
    // An empty prompt: generate evaluates a pending token itself.
    if (!mixed.tokens.empty()) LES_RETURN_IF_ERROR(c.decode_mixed(mixed.tokens, mixed.embd));
    return static_cast<int32_t>(mixed.tokens.size());
  };
  return les::capi::generate_common(ctx, kFn, prompt, params, callback, user_data, &custom);
}

}  // extern "C"
