/*
 * les_vision.h: image input for multimodal models. A vision encoder ("mmproj"
 * GGUF, as llama.cpp ships them next to the text model) is loaded for a text
 * model; it turns an image into embedding rows that the text model's context
 * decodes in place of tokens, between the image marker tokens. Part of the
 * LES C ABI; include <les/les.h>.
 *
 * Supported: MiniCPM-V 4.6 (clip.projector_type "minicpmv4_6"): a SigLIP-style
 * ViT with a window-attention merger and an erf-GELU projector; an image is
 * encoded as an overview chunk and, when larger than the encoder's image_size,
 * up to 9 slices (llama.cpp's llava-uhd slicing). Its prompt layout per image:
 *   <image> overview </image>, then per row of slices
 *   (<slice> slice </slice>) x cols, with "\n" between rows;
 * the embedding rows take plain sequential decoder positions.
 *
 * Typical use (errors not handled):
 *   les_vision *vis = NULL; les_image *img = NULL;
 *   les_vision_load(model, "mmproj.gguf", NULL, &vis);
 *   les_vision_encode_file(vis, "cat.png", &img);
 *   const les_image *imgs[1] = {img};
 *   les_generate_with_images(ctx, "<__media__>Describe the image.", imgs, 1, &gp, on_token, NULL);
 *   les_image_free(img); les_vision_free(vis);
 *
 * Memory: the encoder's weights are resident while it encodes. By default
 * they stay loaded (memory-mapped from the mmproj file) while the les_vision
 * lives; with les_vision_params.release_after_encode they are unmapped after
 * every encode and mapped again from the file by the next one (same
 * embeddings), for devices that cannot keep an encoder next to a streamed
 * decoder. A context created with a memory limit counts the encoder (weights
 * and encode scratch) in its split when les_context_params.vision names it
 * (les_memory_plan.vision_bytes); the peak during an encode is the same either
 * way, release_after_encode lowers what stays resident between encodes.
 *
 * Thread-safety: a les_vision is thread-safe: any number of threads may call
 * les_vision_encode_*() and les_vision_get_stats() on one les_vision at once
 * (encodes take turns on the vision's own lock and thread pool); only
 * les_vision_free() must not overlap other calls on it. A les_image is
 * immutable: it may be appended to several contexts on several threads at
 * once. Calls that take a context follow the context's rule (one thread at a
 * time per context).
 */
#ifndef LES_VISION_H
#define LES_VISION_H

#include "les_common.h"
#include "les_generate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The text that stands for an image in a prompt of les_generate_with_images()
 * (llama.cpp mtmd's default media marker). */
#define LES_MEDIA_MARKER "<__media__>"

typedef struct les_vision_params {
  uint32_t struct_size;       /* sizeof(les_vision_params); set by les_vision_default_params() */
  int32_t n_threads;          /* encoder threads incl. the caller; 0 = the model's n_threads
                                 (les_model_params.n_threads); at most les_max_threads() */
  bool release_after_encode;  /* false (default): the weights stay mapped while the les_vision lives;
                                 true: unmapped after each encode, mapped again by the next one */
} les_vision_params;

/* Defaults: struct_size set, n_threads 0, release_after_encode false. Thread-safe. */
LES_API les_vision_params les_vision_default_params(void);

/* Loads the vision encoder in `mmproj_path` for `model` (borrowed; the vision
 * keeps a reference to its weights, as a context does, so les_model_free()
 * first is safe). `params` may be NULL (defaults). The file is validated in
 * full (every key and tensor shape) and then unmapped again when
 * release_after_encode is set. Errors, each with a message naming the
 * problem: LES_ERR_INVALID_ARGUMENT (NULL model, path or out; bad params;
 * the mmproj's output width (mm.down rows) differs from the model's n_embd,
 * both named), LES_ERR_UNSUPPORTED (a projector other than minicpmv4_6, by
 * name; a text model whose vocabulary lacks the image marker tokens <image>
 * </image> <slice> </slice>, named), LES_ERR_IO (cannot open/read),
 * LES_ERR_FORMAT (not a clip GGUF, a missing or malformed key or tensor).
 * On failure *out is NULL. Thread-safe. */
LES_API les_status les_vision_load(les_model *model, const char *mmproj_path, const les_vision_params *params,
                                   les_vision **out);

/* Frees a vision and its weights. NULL is a no-op. Images it encoded stay valid. */
LES_API void les_vision_free(les_vision *vision);

/* Encodes an RGB8 image: `rgb` holds width x height pixels, row-major from the
 * top row, 3 bytes per pixel (R, G, B), no row padding (width * height * 3
 * bytes, borrowed for the call). Preprocessing (resize, slicing, normalisation)
 * and the encoder follow llama.cpp's mtmd for this projector. *out receives a
 * new image (free with les_image_free). Errors: LES_ERR_INVALID_ARGUMENT (NULL
 * vision/rgb/out, width or height <= 0 ("zero-size image"), more than 2^26
 * pixels, an aspect ratio so extreme that the overview and slices would need
 * more than 4 x 10 full chunks' image tokens: 640 for an encoder whose chunk
 * gives 64 tokens, e.g. a 1 x 10000 image: "aspect ratio is too extreme";
 * llama.cpp's mtmd has no such bound), LES_ERR_IO / LES_ERR_FORMAT (release_after_encode and the mmproj
 * file cannot be mapped again), LES_ERR_OUT_OF_MEMORY. On failure *out is
 * NULL. Thread-safe (see the top of this header). */
LES_API les_status les_vision_encode_rgb(les_vision *vision, const uint8_t *rgb, int32_t width, int32_t height,
                                         les_image **out);

/* Decodes the image file at `path` (PNG, JPEG, binary PPM/PGM, through
 * stb_image; grey becomes RGB, alpha is dropped) and encodes it as
 * les_vision_encode_rgb() does. Errors: those of les_vision_encode_rgb, and
 * LES_ERR_IO (cannot open or read `path`, named), LES_ERR_FORMAT (not one of
 * the formats, corrupt or truncated data, a zero-size header: the message
 * names the file and the reason), LES_ERR_INVALID_ARGUMENT (NULL path, a
 * file above 1 GiB or an image above 2^26 pixels). Thread-safe. */
LES_API les_status les_vision_encode_file(les_vision *vision, const char *path, les_image **out);

/* Decodes an encoded image held in memory (`data`, `n_bytes` bytes, borrowed
 * for the call: the contents of a PNG, JPEG or binary PPM/PGM file, e.g. a
 * base64-decoded data: URL) and encodes it as les_vision_encode_rgb() does.
 * Errors: those of les_vision_encode_file (LES_ERR_FORMAT for data that is
 * no such image, corrupt or truncated; LES_ERR_INVALID_ARGUMENT for NULL
 * data, n_bytes 0 or above 2^31 - 1), without the I/O ones. Thread-safe. */
LES_API les_status les_vision_encode_memory(les_vision *vision, const uint8_t *data, size_t n_bytes,
                                            les_image **out);

/* Decoder positions the image takes in a context: its embedding rows plus its
 * marker tokens (<image>, </image>, and per slice <slice> </slice>, "\n"
 * between rows of slices). 0 for NULL. Thread-safe. */
LES_API int32_t les_image_n_tokens(const les_image *image);

/* Frees an image. NULL is a no-op. */
LES_API void les_image_free(les_image *image);

/* Appends the image to the context after what it holds: its marker tokens and
 * its chunks' embedding rows, in llama.cpp's order, at the next
 * les_image_n_tokens(image) positions (a pending token is evaluated first).
 * Afterwards les_context_logits() holds the logits of the image's last
 * position (its closing marker); les_context_tokens() shows -1 for positions
 * filled from embedding rows. Errors (the context unchanged and usable):
 * LES_ERR_INVALID_ARGUMENT (NULL; the image was encoded by a les_vision of
 * another les_model), LES_ERR_CONTEXT_FULL (fewer than les_image_n_tokens()
 * positions left; the message gives both), LES_ERR_CANCELLED
 * (les_context_cancel(), as for les_context_decode()), decode errors (I/O
 * while streaming experts: the context is rolled back to where it was). Same
 * thread rules as the context. */
LES_API les_status les_context_append_image(les_context *ctx, const les_image *image);

/* les_generate() with images: `prompt` (or params->prompt_text's bytes, NUL
 * bytes included, with `prompt` NULL) holds one LES_MEDIA_MARKER
 * ("<__media__>") per image, and images[i] goes where the i-th marker is
 * (markers are replaced by the image's marker tokens and embedding rows; the
 * text around them is tokenized as les_generate() does: control-token texts
 * parsed iff params->parse_special, BOS only when the context is empty). A
 * chat prompt from les_chat_apply_template() whose user message contains the
 * markers works as is (llama-mtmd-cli puts them in front of the text). Then
 * generates as les_generate(); les_context_generate_stats() counts every
 * position of the prompt (text and images) in n_prompt_tokens and its
 * evaluation in prefill_seconds. n_images 0 (images may be NULL then) is
 * les_generate(). Speculative decoding: lookup_ngram and draft_model work as
 * in les_generate (prompt lookup never drafts an image position; a draft
 * model reads the text after the last image); mtp after image positions is
 * LES_ERR_UNSUPPORTED (the MTP head reads a token at every position).
 * Errors: those of les_generate(), and LES_ERR_INVALID_ARGUMENT (n_images < 0,
 * NULL images or images[i], the number of markers differs from n_images (both
 * named), params->prompt_tokens set, an image of another model),
 * LES_ERR_CONTEXT_FULL (the whole prompt does not fit: nothing is decoded).
 * On an error before generation starts the context is unchanged. Same thread
 * rules as the context. */
LES_API les_status les_generate_with_images(les_context *ctx, const char *prompt, const les_image *const *images,
                                            int32_t n_images, const les_generate_params *params,
                                            les_token_callback callback, void *user_data);

/* What a vision has done (les_vision_get_stats). */
typedef struct les_vision_stats {
  uint32_t struct_size;           /* set by the caller to sizeof(les_vision_stats) */
  int64_t n_images_encoded;       /* images encoded so far */
  int64_t n_chunks_encoded;       /* encoder runs (overview + slices) */
  int64_t n_image_tokens;         /* embedding rows produced (marker tokens not counted) */
  double encode_ms_total;         /* wall time of all encodes (decode of a file, preprocessing,
                                     encoder, reloading released weights), milliseconds */
  double last_encode_ms;          /* wall time of the last encode, milliseconds */
  uint64_t weight_bytes;          /* the encoder's tensor bytes (the mmproj's weights) */
  uint64_t weight_bytes_resident; /* of those, mapped now: weight_bytes, or 0 after a release */
  int64_t n_weight_loads;         /* times the weights were mapped (1 + reloads after releases) */
  uint64_t memory_bytes;          /* what an encode needs at its peak: weights + encode scratch (the
                                     figure les_memory_plan.vision_bytes counts) */
} les_vision_stats;

/* Copies the vision's statistics into *out (its struct_size set by the
 * caller; that many bytes are filled). Errors: LES_ERR_INVALID_ARGUMENT (NULL,
 * struct_size outside the versions this library knows). Thread-safe. */
LES_API les_status les_vision_get_stats(const les_vision *vision, les_vision_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* LES_VISION_H */
