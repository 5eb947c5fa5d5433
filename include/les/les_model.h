/*
 * les_model.h: loading a GGUF model and querying its hyperparameters and
 * metadata. A model is the weights of one GGUF file: immutable after load, so
 * one model may be shared by any number of contexts on any threads.
 * Part of the LES C ABI; include <les/les.h>.
 */
#ifndef LES_MODEL_H
#define LES_MODEL_H

#include "les_common.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* LES_MODEL_H */
