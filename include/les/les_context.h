/*
 * les_context.h: a context is one generation stream over a model: its KV
 * cache, logits and scratch. Creating, decoding tokens, reading logits,
 * resetting, trimming and cancelling. Part of the LES C ABI; include
 * <les/les.h>.
 *
 * Thread-safety: use a context from one thread at a time (thread-compatible);
 * les_context_cancel() alone may be called from any thread. Distinct contexts
 * may be used on distinct threads at once, also over one shared model.
 */
#ifndef LES_CONTEXT_H
#define LES_CONTEXT_H

#include "les_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum les_kv_type {
  LES_KV_F16 = 0,
  LES_KV_Q8_0 = 1
} les_kv_type;

typedef struct les_context_params {
  uint32_t struct_size; /* sizeof(les_context_params); set by les_context_default_params() */
  int32_t n_ctx;        /* tokens the KV cache holds; 0 = min(model's training context, 4096) */
  int32_t n_batch;      /* max tokens per forward chunk during prefill; 0 = 512 */
  int32_t n_threads;    /* 0 = the model's n_threads */
  les_kv_type kv_type;  /* KV cache element type; default LES_KV_F16 (LES_KV_Q8_0 gives
                           LES_ERR_UNSUPPORTED where this build lacks it) */
} les_context_params;

LES_API les_context_params les_context_default_params(void);

/* Creates a context over `model` (borrowed; keep it alive, see les_model_free).
 * `params` may be NULL. Errors: LES_ERR_INVALID_ARGUMENT (NULL model, bad
 * field), LES_ERR_OUT_OF_MEMORY. On failure *out_ctx is NULL. Thread-safe for
 * distinct contexts. */
LES_API les_status les_context_create(les_model *model, const les_context_params *params, les_context **out_ctx);

/* Frees a context. NULL is a no-op. */
LES_API void les_context_free(les_context *ctx);

/* Last error of this context ("" if none); valid until the next call on it. */
LES_API const char *les_context_last_error(const les_context *ctx);

/* Appends n tokens at positions n_past .. n_past + n - 1 and runs the forward
 * pass; afterwards les_context_logits() gives the last token's logits.
 * Errors (state unchanged, nothing appended): LES_ERR_INVALID_ARGUMENT (NULL,
 * n <= 0, token id out of range), LES_ERR_CONTEXT_FULL (n_past + n > n_ctx). */
LES_API les_status les_context_decode(les_context *ctx, const les_token *tokens, int32_t n);

/* Logits of the last decoded token: n_vocab floats (index = token id), owned
 * by the context and valid until the next decode/reset/free. NULL before the
 * first decode. */
LES_API const float *les_context_logits(const les_context *ctx);

LES_API int32_t les_context_n_past(const les_context *ctx); /* tokens in the KV cache */
LES_API int32_t les_context_n_ctx(const les_context *ctx);

/* Empties the KV cache (n_past becomes 0). */
LES_API les_status les_context_reset(les_context *ctx);

/* Keeps the first n_keep positions of the KV cache and drops the rest (for
 * rollback). n_keep > n_past: LES_ERR_INVALID_ARGUMENT. */
LES_API les_status les_context_trim(les_context *ctx, int32_t n_keep);

/* Asks a running les_generate() on this context to stop after the current
 * token. Thread-safe: may be called from any thread. */
LES_API void les_context_cancel(les_context *ctx);

#ifdef __cplusplus
}
#endif

#endif /* LES_CONTEXT_H */
