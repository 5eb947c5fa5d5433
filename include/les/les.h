/*
 * les.h: the stable C ABI of LES (Lookahead Expert Scheduling), an inference
 * engine for Mixture-of-Experts language models stored as GGUF files.
 *
 * Conventions
 * - Only opaque handles, fixed-width integers and plain structs cross this
 *   boundary; no C++ type, exception or STL object ever does.
 * - Every fallible call returns `les_status` (0 = LES_OK, negative = error,
 *   grouped by range). A message naming what went wrong is then available
 *   from `les_last_error()` (thread-local: the calling thread's last error).
 * - Thread-safety is stated on every declaration.
 *
 * This header grows with the issues that add the model, context and streaming
 * API; fields and functions are only ever appended.
 */
#ifndef LES_H
#define LES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#  if defined(LES_BUILDING_LIBRARY)
#    define LES_API __declspec(dllexport)
#  else
#    define LES_API __declspec(dllimport)
#  endif
#else
#  define LES_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* API version (semantic versioning of this header). */
#define LES_VERSION_MAJOR 0
#define LES_VERSION_MINOR 1
#define LES_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, for preprocessor comparisons. */
#define LES_VERSION_NUMERIC (LES_VERSION_MAJOR * 10000 + LES_VERSION_MINOR * 100 + LES_VERSION_PATCH)

/* Status codes. 0 is success; errors are negative and grouped:
 * -1..-99 argument, -100..-199 I/O, -200..-299 format, -300..-399 resource,
 * -400..-499 state, -900.. internal. */
typedef enum les_status {
  LES_OK = 0,
  LES_ERR_INVALID_ARGUMENT = -1, /* null handle, out-of-range token id, bad struct size */
  LES_ERR_IO = -100,             /* open/read failed, short read, EIO */
  LES_ERR_FORMAT = -200,         /* malformed file (GGUF structure, bounds, types) */
  LES_ERR_UNSUPPORTED = -201,    /* valid input this build does not handle */
  LES_ERR_OUT_OF_MEMORY = -300,  /* allocation or memory budget exhausted */
  LES_ERR_CONTEXT_FULL = -400,   /* no room left in the context (KV cache) */
  LES_ERR_CANCELLED = -401,      /* stopped by a callback or another thread */
  LES_ERR_INTERNAL = -900        /* a bug in LES */
} les_status;

/* The library's version as "MAJOR.MINOR.PATCH". Static storage; never free.
 * Thread-safe. */
LES_API const char *les_version(void);

/* True when the library linked at run time is version major.minor or newer,
 * i.e. (LES_VERSION_MAJOR, LES_VERSION_MINOR) >= (major, minor). Thread-safe. */
LES_API bool les_version_at_least(int major, int minor);

/* Short English name of a status ("ok", "format error", ...). Static storage.
 * Unknown values give "unknown status". Thread-safe. */
LES_API const char *les_status_name(les_status status);

/* The calling thread's last error message, set by the most recent failing LES
 * call on this thread; "" if none. Valid until the next LES call on this
 * thread. Thread-safe (thread-local storage). */
LES_API const char *les_last_error(void);

/* ------------------------------------------------------------------------
 * Logging
 * ------------------------------------------------------------------------ */

typedef enum les_log_level {
  LES_LOG_DEBUG = 0,
  LES_LOG_INFO = 1,
  LES_LOG_WARN = 2,
  LES_LOG_ERROR = 3
} les_log_level;

/* Receives one formatted log line (no trailing newline; `msg` is borrowed for
 * the duration of the call). Called on whichever thread logs. */
typedef void (*les_log_callback)(les_log_level level, const char *msg, void *user_data);

/* ------------------------------------------------------------------------
 * Model: the weights of one GGUF file. Immutable after load; one model may be
 * shared by any number of contexts on any threads.
 * ------------------------------------------------------------------------ */

typedef struct les_model les_model;
typedef struct les_context les_context;

/* I/O backend for streamed experts. AUTO = io_uring where the kernel allows it, else pread. */
typedef enum les_io_backend {
  LES_IO_AUTO = 0,
  LES_IO_IO_URING = 1,   /* Linux io_uring (LES_ERR_UNSUPPORTED where refused or not built) */
  LES_IO_PREAD = 2,      /* POSIX pread thread pool (everywhere; Android apps) */
  LES_IO_DISPATCH_IO = 3 /* Apple dispatch_io (LES_ERR_UNSUPPORTED elsewhere) */
} les_io_backend;

/* Expert cache eviction. LFU_AGED: access frequency halving every 16 tokens; LRU: least recently used. */
typedef enum les_eviction_policy {
  LES_EVICTION_LFU_AGED = 0,
  LES_EVICTION_LRU = 1
} les_eviction_policy;

typedef struct les_model_params {
  uint32_t struct_size;        /* sizeof(les_model_params) as compiled by the caller; set by les_model_default_params() */
  int32_t n_threads;           /* compute threads; 0 = number of cores */
  les_log_callback log_callback; /* NULL = log to stderr at WARN and above */
  void *log_user_data;         /* passed to log_callback */
  les_log_level log_level;     /* minimum level delivered; default LES_LOG_WARN */
  /* --- appended in 0.1: expert streaming (DESIGN.md). Older callers' struct_size ends above. --- */
  uint64_t expert_budget_bytes;  /* 0 = routed experts stay in the memory-mapped file (resident);
                                    > 0 = experts are streamed from the file into a per-context expert
                                    cache of this many bytes (cache slots, read buffers and scratch
                                    together); les_context_create() refuses a budget below the minimum
                                    (one layer's selected experts plus buffers) with
                                    LES_ERR_INVALID_ARGUMENT naming that minimum. Either expert file
                                    layout (GGUF's or `les repack`'s) is recognised from the file. A
                                    model without routed experts has nothing to stream: it runs
                                    resident, and les_context_stream_stats() reports
                                    LES_ERR_INVALID_ARGUMENT for its contexts. */
  int32_t prefetch_candidates;   /* lookahead: experts prefetched per layer, the top-c of the next
                                    layer's router applied to this layer's router input; -1 = top-k + 2
                                    (default), 0 = no lookahead (on-demand reads), else k <= c <= 2k */
  les_io_backend io_backend;     /* how expert bytes are read; default LES_IO_AUTO */
  les_eviction_policy eviction;  /* expert cache eviction; default LES_EVICTION_LFU_AGED */
} les_model_params;

/* Defaults: struct_size set, n_threads 0, no callback, WARN, experts resident
 * (expert_budget_bytes 0), prefetch_candidates -1, LES_IO_AUTO, LFU_AGED. Thread-safe. */
LES_API les_model_params les_model_default_params(void);

/* Loads a GGUF model. `params` may be NULL (defaults). On success *out_model
 * owns the model: free it with les_model_free(). On failure *out_model is NULL
 * and les_last_error() names the problem (missing file: LES_ERR_IO; malformed
 * GGUF: LES_ERR_FORMAT; unknown architecture or tensor type: LES_ERR_UNSUPPORTED;
 * params->struct_size larger than this library knows: LES_ERR_INVALID_ARGUMENT).
 * Thread-safe. */
LES_API les_status les_model_load(const char *path, const les_model_params *params, les_model **out_model);

/* Frees a model. Contexts created from it must be freed first: a model freed
 * while contexts live is kept alive until its last context is freed (the
 * handle becomes invalid for the caller at once). NULL is a no-op. */
LES_API void les_model_free(les_model *model);

/* Hyperparameters (0 for a NULL model). Thread-safe. */
LES_API int32_t les_model_n_vocab(const les_model *model);
LES_API int32_t les_model_n_embd(const les_model *model);
LES_API int32_t les_model_n_layer(const les_model *model);
LES_API int32_t les_model_n_head(const les_model *model);
LES_API int32_t les_model_n_head_kv(const les_model *model);
LES_API int32_t les_model_n_expert(const les_model *model);       /* 0 for dense models */
LES_API int32_t les_model_n_expert_used(const les_model *model);  /* top-k; 0 for dense models */
LES_API int32_t les_model_n_ctx_train(const les_model *model);

/* Copies a NUL-terminated description ("qwen3moe 8 layers, 32 experts top-4, F16")
 * into buf (truncated to buf_size - 1 bytes). Returns the full length, or -1 on
 * a NULL model. Thread-safe. */
LES_API int32_t les_model_desc(const les_model *model, char *buf, size_t buf_size);

/* Copies the metadata value of `key` as text (numbers in decimal, arrays as
 * "[array of N TYPE]") into buf, NUL-terminated and truncated to buf_size - 1.
 * Returns the full length, or -1 if the key is absent or an argument is NULL.
 * Thread-safe. */
LES_API int32_t les_model_meta_str(const les_model *model, const char *key, char *buf, size_t buf_size);

/* ------------------------------------------------------------------------
 * Tokens
 * ------------------------------------------------------------------------ */

typedef int32_t les_token;

LES_API les_token les_token_bos(const les_model *model); /* -1 if none */
LES_API les_token les_token_eos(const les_model *model); /* -1 if none */

/* Tokenizes `text_len` bytes of UTF-8 text. add_special: add BOS/EOS as the
 * vocabulary requests; parse_special: text matching a control token becomes
 * that token. Writes at most n_tokens_max ids to `tokens` and the number
 * needed to *n_tokens_out; if the buffer is too small, returns
 * LES_ERR_INVALID_ARGUMENT with *n_tokens_out set to the size needed (call
 * again). Thread-safe. */
LES_API les_status les_tokenize(const les_model *model, const char *text, size_t text_len, bool add_special,
                                bool parse_special, les_token *tokens, int32_t n_tokens_max,
                                int32_t *n_tokens_out);

/* Writes the bytes of one token's text (not NUL-terminated; may be a partial
 * UTF-8 sequence) into buf and their count to *n_out. Buffer too small:
 * LES_ERR_INVALID_ARGUMENT with *n_out = size needed. Token out of range:
 * LES_ERR_INVALID_ARGUMENT. Thread-safe. */
LES_API les_status les_token_to_piece(const les_model *model, les_token token, char *buf, size_t buf_size,
                                      size_t *n_out);

/* ------------------------------------------------------------------------
 * Context: one generation stream (KV cache, logits, scratch). Use a context
 * from one thread at a time (thread-compatible); les_context_cancel() alone
 * may be called from any thread.
 * ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------
 * Expert streaming (contexts of a model loaded with expert_budget_bytes > 0)
 * ------------------------------------------------------------------------ */

/* Changes the context's expert budget at run time (e.g. when the OS asks the
 * app to free memory); a lower budget evicts and frees at once. Errors:
 * LES_ERR_INVALID_ARGUMENT (context does not stream experts, or below the
 * minimum: the message names it; nothing changes). Not during les_generate(). */
LES_API les_status les_context_set_expert_budget(les_context *ctx, uint64_t budget_bytes);

/* Totals since the context was created (or les_context_reset_stream_stats). */
typedef struct les_stream_stats {
  uint32_t struct_size;          /* set by the caller to sizeof(les_stream_stats) */
  uint64_t budget_bytes;         /* current budget */
  int32_t n_slots;               /* expert slots that fit in it */
  int32_t prefetch_candidates;   /* c in effect */
  uint64_t tokens;               /* tokens run through forward passes */
  uint64_t bytes_read;           /* bytes read from the file (incl. O_DIRECT alignment padding) */
  uint64_t reads_issued;         /* read requests (3 per expert in GGUF's layout, 1 when repacked) */
  uint64_t demand_experts;       /* experts read because compute needed them now */
  uint64_t prefetch_experts;     /* experts read ahead by the lookahead predictor */
  uint64_t cache_hits;           /* selected experts already in the cache */
  uint64_t inflight_hits;        /* selected experts whose prefetch was still in flight */
  uint64_t cache_misses;         /* selected experts that needed a demand read */
  uint64_t prefetch_unused_bytes;/* bytes prefetched and evicted before any use */
  uint64_t read_errors;          /* experts whose read failed */
  double hit_rate;               /* (hits + in-flight hits) / selected experts */
  double mean_recall;            /* predictor recall averaged over layers 1.. (layer l+1 from l) */
  double io_wait_seconds;        /* compute blocked waiting for expert bytes */
  double io_idle_seconds;        /* no read in flight while a forward pass ran */
  double wall_seconds;           /* time inside forward passes */
} les_stream_stats;

/* Per-layer predictor and cache figures. */
typedef struct les_stream_layer_stats {
  uint32_t struct_size; /* sizeof(les_stream_layer_stats) */
  uint64_t cache_hits, inflight_hits, cache_misses;
  double recall;        /* |predicted ∩ selected| / |selected| */
  double precision;     /* |predicted ∩ selected| / |predicted| */
} les_stream_layer_stats;

/* Copies the streaming totals / one layer's figures. Errors:
 * LES_ERR_INVALID_ARGUMENT (NULL, wrong struct_size, layer out of range, or a
 * context that does not stream experts). Same thread rules as the context. */
LES_API les_status les_context_stream_stats(const les_context *ctx, les_stream_stats *out);
LES_API les_status les_context_stream_layer_stats(const les_context *ctx, int32_t layer, les_stream_layer_stats *out);

/* ------------------------------------------------------------------------
 * Sampling and generation
 * ------------------------------------------------------------------------ */

typedef struct les_sampler_params {
  uint32_t struct_size;    /* sizeof(les_sampler_params); set by les_sampler_default_params() */
  float temperature;       /* 0 = greedy (ties to the lowest id); default 0.8 */
  int32_t top_k;           /* 0 = off; default 40 */
  float top_p;             /* 1 = off; default 0.95 */
  float min_p;             /* 0 = off; default 0.05 */
  float repeat_penalty;    /* 1 = off; default 1 */
  float presence_penalty;  /* 0 = off */
  float frequency_penalty; /* 0 = off */
  int32_t penalty_last_n;  /* window of tokens for the penalties; default 64 */
  uint64_t seed;           /* RNG seed; same seed + same model = same text */
} les_sampler_params;

LES_API les_sampler_params les_sampler_default_params(void);

/* Called once per generated token with its id and its text bytes (`piece`,
 * `piece_len` bytes, borrowed for the call; UTF-8 sequences split across tokens
 * are held back and delivered whole). Return false to stop generation. */
typedef bool (*les_token_callback)(les_token token, const char *piece, size_t piece_len, void *user_data);

typedef struct les_generate_params {
  uint32_t struct_size;        /* sizeof(les_generate_params); set by les_generate_default_params() */
  int32_t n_predict;           /* max tokens to generate; default 128 */
  bool ignore_eos;             /* keep going past end-of-generation tokens */
  les_sampler_params sampler;  /* sampling */
  const char *const *stop;     /* NULL or an array of n_stop UTF-8 stop strings (borrowed) */
  int32_t n_stop;
} les_generate_params;

LES_API les_generate_params les_generate_default_params(void);

/* Why the last les_generate() ended. */
typedef enum les_stop_reason {
  LES_STOP_EOS = 0,          /* an end-of-generation token (not delivered) */
  LES_STOP_STOP_STRING = 1,  /* the text reached a stop string (cut before it) */
  LES_STOP_N_PREDICT = 2,    /* n_predict tokens were generated */
  LES_STOP_CONTEXT_FULL = 3, /* the KV cache filled up */
  LES_STOP_CANCELLED = 4     /* the callback returned false, or les_context_cancel() */
} les_stop_reason;

/* "eos", "stop_string", "n_predict", "context_full" or "cancelled" (the names
 * `les run` prints); "unknown" for other values. Static storage. Thread-safe. */
LES_API const char *les_stop_reason_name(les_stop_reason reason);

/* Timing of the last les_generate() on a context. */
typedef struct les_generate_stats {
  uint32_t struct_size;
  int32_t n_prompt_tokens;     /* prompt tokens evaluated (prefill) */
  int32_t n_generated;         /* tokens sampled and delivered (a stopping EOS excluded) */
  double prefill_seconds;
  double decode_seconds;
  double prefill_tokens_per_second;  /* n_prompt_tokens / prefill_seconds */
  double decode_tokens_per_second;   /* n_decoded / decode_seconds */
  /* Appended after the first version; a caller whose struct_size ends before
   * them gets the fields above only. */
  int32_t n_decoded;           /* single-token forward passes (the last sampled token is not evaluated) */
  les_stop_reason stop_reason; /* why generation ended */
} les_generate_stats;

/* Tokenizes `prompt` (adding BOS as the vocabulary requests), appends it to the context (after what it already holds),
 * then samples up to n_predict tokens, streaming each through `callback` (may
 * be NULL). Stops at EOS (unless ignore_eos), a stop string, n_predict, the
 * callback returning false, or les_context_cancel() (then returns
 * LES_ERR_CANCELLED). A full context returns LES_ERR_CONTEXT_FULL after
 * delivering what fit. The KV cache keeps the prompt and the generated
 * tokens except the last one sampled, which is delivered but not evaluated
 * (n_past grows by n_prompt_tokens + n_decoded). */
LES_API les_status les_generate(les_context *ctx, const char *prompt, const les_generate_params *params,
                                les_token_callback callback, void *user_data);

/* Copies the statistics of the last les_generate() into *out (whose
 * struct_size the caller sets). */
LES_API les_status les_context_generate_stats(const les_context *ctx, les_generate_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* LES_H */
