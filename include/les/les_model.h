/*
 * les_model.h: loading a GGUF model and querying its hyperparameters and
 * metadata. A model is the weights of one GGUF file: immutable after load, so
 * one model may be shared by any number of contexts on any threads, each
 * with its own settings (whether its experts stream, and within which budget:
 * les_context_params).
 * Part of the LES C ABI; include <les/les.h>.
 */
#ifndef LES_MODEL_H
#define LES_MODEL_H

#include "les_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a model's weights live once loaded. */
typedef enum les_weight_memory {
  /* Default. A model with routed experts reads its dense weights (everything but the routed
     experts) into LES's own memory (pread) and leaves the experts in a read-only mapping of the
     file: streaming contexts never touch the mapping, so a model file truncated or replaced
     under them makes the next expert read fail with LES_ERR_IO, never a signal, and the OS
     cannot drop the always-used weights under memory pressure. Resident contexts use the mapped
     experts (caveat of LES_WEIGHTS_MMAP). A model without routed experts maps everything. */
  LES_WEIGHTS_AUTO = 0,
  /* Every weight through a read-only mapping: the least memory and load time for resident runs
     (pages load on first use, shared with the page cache). Caveat: if the file is truncated or
     replaced while the model is loaded, the next touch of a lost page raises SIGBUS, which
     kills the process. */
  LES_WEIGHTS_MMAP = 1,
  /* Every weight, experts included, read into LES's own memory: a changed file can never raise
     a signal; needs memory for the whole model. */
  LES_WEIGHTS_READ = 2
} les_weight_memory;

typedef struct les_model_params {
  uint32_t struct_size;        /* sizeof(les_model_params) as compiled by the caller; set by les_model_default_params() */
  int32_t n_threads;           /* compute threads; 0 = number of cores; at most les_max_threads(),
                                  above it les_model_load() returns LES_ERR_INVALID_ARGUMENT */
  les_log_callback log_callback; /* NULL = log to stderr at WARN and above */
  void *log_user_data;         /* passed to log_callback */
  les_log_level log_level;     /* minimum level delivered; default LES_LOG_WARN */
  /* (The expert-streaming settings are les_context_params': each context has its own expert
     cache.) */
  /* --- where the weights live. A caller whose struct_size ends above gets the defaults. --- */
  les_weight_memory weights;   /* default LES_WEIGHTS_AUTO; see les_weight_memory. Memory: AUTO
                                  holds the dense weights' bytes, READ the whole file's tensor
                                  bytes, in LES's memory for the model's lifetime (read once at
                                  load, 64-byte aligned, then read-only and shared by every context
                                  of the model on any thread). Errors of les_model_load(): a value
                                  not in les_weight_memory is LES_ERR_INVALID_ARGUMENT naming the
                                  field; a file that changes while its weights are read is
                                  LES_ERR_IO naming the file and a tensor; no memory for the read
                                  weights is LES_ERR_OUT_OF_MEMORY */
  bool lock_weights;           /* mlock the weights read into LES's memory (nothing with
                                  LES_WEIGHTS_MMAP) so the OS never pages them out; when the lock
                                  fails (RLIMIT_MEMLOCK, permissions) the model still loads and the
                                  log gets a warning naming the limit; default false */
} les_model_params;

/* Defaults: struct_size set, n_threads 0, no callback, WARN, LES_WEIGHTS_AUTO, no lock. Thread-safe. */
LES_API les_model_params les_model_default_params(void);

/* Loads a GGUF model. `params` may be NULL (defaults). On success *out_model
 * owns the model: free it with les_model_free(). On failure *out_model is NULL
 * and les_last_error() names the problem (missing file: LES_ERR_IO; malformed
 * GGUF: LES_ERR_FORMAT; unknown architecture or tensor type: LES_ERR_UNSUPPORTED;
 * params->struct_size larger than this library knows, e.g. a 0.1 caller's struct
 * that still held the streaming fields: LES_ERR_INVALID_ARGUMENT). Thread-safe. */
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

/* Bytes of one routed expert of `layer` (0 <= layer < les_model_n_layer()):
 * its gate, up and down matrices as the file stores them, without padding,
 * i.e. what streaming reads for it. 0 for a dense layer, a layer out of
 * range, a file whose expert tensors cannot be described, or a NULL model.
 * Thread-safe; describes the file's tensors on every call (cheap, not free). */
LES_API uint64_t les_model_expert_bytes(const les_model *model, int32_t layer);

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
