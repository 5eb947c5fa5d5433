/*
 * les_stream.h: expert streaming at run time: changing a context's expert
 * budget and reading its streaming statistics (reads, prefetches, cache hits,
 * predictor recall, I/O wait). Applies to contexts created with
 * les_context_params.expert_budget_bytes > 0 (les_context.h) over a model with
 * routed experts. Part of the LES C ABI; include <les/les.h>.
 *
 * Thread-safety: the three functions below may be called from any thread at
 * any time, also while another thread runs les_generate() or
 * les_context_decode() on the context (an app's memory warning arrives on
 * another thread). A context must not be freed while another thread is inside
 * one of them.
 */
#ifndef LES_STREAM_H
#define LES_STREAM_H

#include "les_common.h"
#include "les_context.h" /* les_io_backend */

#ifdef __cplusplus
extern "C" {
#endif

/* Changes the context's expert budget at run time (e.g. when the OS asks the
 * app to free memory). Callable from any thread, also during les_generate():
 * the call blocks until the new budget is in effect, which is at the
 * scheduler's next safe point (between two of its bookkeeping steps; it never
 * waits for a read or for an expert's compute, so the wait is at most a few
 * milliseconds) or at once when no decode runs. When it returns, the budget
 * and n_slots of les_context_stream_stats() are the new ones and every cached
 * expert past the new budget that is not in use has been evicted and its
 * memory returned to the OS; experts the running layer is computing from, or
 * whose read is in flight, are freed the moment they are released (within
 * that layer). Generation continues and its text is the same as with any
 * other budget (the bytes are the file's). Errors: LES_ERR_INVALID_ARGUMENT
 * (context does not stream experts, or below the minimum: the message names
 * it; nothing changes), recorded in the calling thread's les_last_error(). */
LES_API les_status les_context_set_expert_budget(les_context *ctx, uint64_t budget_bytes);

/* Totals since the context was created, over finished forward passes. */
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
  /* --- not written for a caller whose struct_size ends above --- */
  uint64_t one_token_budget_bytes; /* budget one token's selected experts need: n_expert_used slots
                                      per layer with routed experts plus scheduler scratch; below it
                                      most of every token's experts are read again (les run warns) */
  /* --- not written for a caller whose struct_size ends above --- */
  les_io_backend io_backend;     /* the backend reading experts: LES_IO_IO_URING, LES_IO_PREAD or
                                    LES_IO_DISPATCH_IO (what LES_IO_AUTO chose), never LES_IO_AUTO */
  int32_t direct_io;             /* 1: expert reads bypass the page cache (the file's O_DIRECT
                                    descriptor passed its probe read), 0: buffered reads */
} les_stream_stats;

/* Per-layer predictor and cache figures. */
typedef struct les_stream_layer_stats {
  uint32_t struct_size; /* sizeof(les_stream_layer_stats) */
  uint64_t cache_hits, inflight_hits, cache_misses;
  double recall;        /* |predicted ∩ selected| / |selected| */
  double precision;     /* |predicted ∩ selected| / |predicted| */
} les_stream_layer_stats;

/* Copies the streaming totals / one layer's figures into *out, whose
 * struct_size the caller sets: as every versioned struct of les.h, any size
 * from the struct's first version to this header's is accepted and that many
 * bytes are filled. Errors: LES_ERR_INVALID_ARGUMENT (NULL, struct_size outside
 * those versions, layer out of range, or a context that does not stream
 * experts). Any thread, any time (see the top of this header). */
LES_API les_status les_context_stream_stats(const les_context *ctx, les_stream_stats *out);
LES_API les_status les_context_stream_layer_stats(const les_context *ctx, int32_t layer, les_stream_layer_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* LES_STREAM_H */
