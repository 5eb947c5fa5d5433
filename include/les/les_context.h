/*
 * les_context.h: a context is one generation stream over a model: its KV
 * cache, logits and scratch. Creating, decoding tokens, reading logits,
 * resetting, trimming and cancelling. Part of the LES C ABI; include
 * <les/les.h>.
 *
 * Thread-safety: a context takes one call at a time. A call on it from a
 * second thread while one runs does nothing and returns
 * LES_ERR_INVALID_ARGUMENT "... the context is in use by another thread"
 * (les_last_error(); the context's own last error is left to the running
 * call); the calls without a status say so by their result:
 * les_context_logits*() give NULL and les_context_n_past() gives -1, with
 * les_last_error() set. A callback of a running call (token, activation) may
 * read its context (les_context_tokens, _n_past, _logits, _state_save,
 * _generate_stats...) but not change it: decode, generate, reset, trim, load
 * and setting a callback return LES_ERR_INVALID_ARGUMENT "called from a
 * callback". Callable from any thread at any time: les_context_cancel(),
 * les_context_last_error(), les_context_memory_plan(), les_context_n_ctx() and
 * the expert-streaming calls of les_stream.h (les_context_set_expert_budget,
 * les_context_stream_stats, les_context_stream_layer_stats).
 * les_context_free() must not race any call on the context (it frees it).
 * Distinct contexts may be used on distinct threads at once, also over one
 * shared model.
 */
#ifndef LES_CONTEXT_H
#define LES_CONTEXT_H

#include "les_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* I/O backend for streamed experts. AUTO = io_uring where the kernel allows it, else pread. */
typedef enum les_io_backend {
  LES_IO_AUTO = 0,
  LES_IO_IO_URING = 1,   /* Linux io_uring (LES_ERR_UNSUPPORTED where refused or not built) */
  LES_IO_PREAD = 2,      /* POSIX pread thread pool (everywhere; Android apps) */
  LES_IO_DISPATCH_IO = 3 /* libdispatch's dispatch_io: Apple, and Linux builds with the Swift toolchain's
                            libdispatch (CMake LES_IO_DISPATCH); LES_ERR_UNSUPPORTED where not built */
} les_io_backend;

/* Expert cache eviction. ADAPTIVE (the default): evicts as NEXT_USE or as LRU, whichever two
 * ghost caches (keys only, the cache's capacity, replaying its lookups) show is hitting more over
 * the last tokens (ages with a 16-token half-life). NEXT_USE: evict the entry with the largest
 * expected time to its next use per byte, from the fixed layer order and its access frequency
 * (halving every 16 tokens); it keeps hitting below one token's worth of experts, where LRU gets
 * no hits. LFU_AGED: access frequency halving every 16 tokens; LRU: least recently used. */
typedef enum les_eviction_policy {
  LES_EVICTION_LFU_AGED = 0,
  LES_EVICTION_LRU = 1,
  LES_EVICTION_NEXT_USE = 2,
  LES_EVICTION_ADAPTIVE = 3
} les_eviction_policy;

typedef enum les_kv_type {
  LES_KV_F16 = 0,
  LES_KV_Q8_0 = 1
} les_kv_type;

/* Progress of a long call: `progress` in [0, 1]; return false to cancel it. */
typedef bool (*les_progress_callback)(float progress, void *user_data);

typedef struct les_context_params {
  uint32_t struct_size; /* sizeof(les_context_params); set by les_context_default_params() */
  int32_t n_ctx;        /* tokens the KV cache holds; 0 = min(model's training context, 4096) */
  int32_t n_batch;      /* max tokens per forward chunk during prefill; 0 = 512 */
  int32_t n_threads;    /* 0 = the model's n_threads; at most les_max_threads(), above it
                           les_context_create() returns LES_ERR_INVALID_ARGUMENT */
  les_kv_type kv_type;  /* KV cache element type; default LES_KV_F16 (LES_KV_Q8_0 gives
                           LES_ERR_UNSUPPORTED where this build lacks it) */
  /* --- expert streaming (les_stream.h). A caller whose struct_size ends above gets the defaults:
     experts resident. --- */
  uint64_t expert_budget_bytes;  /* 0 = routed experts stay in the memory-mapped file (resident);
                                    > 0 = experts are streamed from the file into this context's expert
                                    cache of this many bytes (cache slots, read buffers and scratch
                                    together); les_context_create() refuses a budget below the minimum
                                    (one expert slot plus the scheduler's scratch) with
                                    LES_ERR_INVALID_ARGUMENT naming that minimum. Either expert file
                                    layout (GGUF's or `les repack`'s) is recognised from the file. A
                                    model without routed experts has nothing to stream: it runs
                                    resident, and les_context_stream_stats() reports
                                    LES_ERR_INVALID_ARGUMENT for its contexts. */
  int32_t prefetch_candidates;   /* lookahead: experts prefetched per layer, the top-c of the next
                                    layer's router applied to this layer's router input; -1 = top-k + 2
                                    (default), 0 = no lookahead (on-demand reads), else k <= c <= 2k */
  les_io_backend io_backend;     /* how expert bytes are read; default LES_IO_AUTO */
  les_eviction_policy eviction;  /* expert cache eviction; default LES_EVICTION_ADAPTIVE */
  /* --- a caller whose struct_size ends above gets no limit and no callback. --- */
  uint64_t memory_limit_bytes;   /* 0 = no limit (default). > 0: a bound on the whole process's peak
                                    resident set (binary, libraries, allocator and everything already
                                    held included, as getrusage's peak RSS reports it). With
                                    expert_budget_bytes 0, les_context_create() chooses the expert
                                    budget: the limit minus the process's resident set now, the dense
                                    weights, the KV cache (and recurrent state) at n_ctx and the
                                    forward-pass scratch for a chunk of min(n_batch, n_ctx) tokens; experts stay resident when the
                                    whole model fits. With expert_budget_bytes > 0 it checks that
                                    budget fits. A limit that cannot hold the fixed parts plus one
                                    token's worth of experts (top-k slots in every MoE layer and the
                                    scheduler's scratch) is refused with LES_ERR_INVALID_ARGUMENT and
                                    a message giving every part in MiB. les_context_memory_plan()
                                    reports the split. Other contexts created later in the process
                                    are not counted: give each its own share (a draft model: draft_model). */
  les_progress_callback progress_callback; /* How a streaming context's expert cache is faulted in
                                    (the kernel zeroes every page: about 2 s per GiB).
                                    Given: synchronously: called on the creating thread
                                    while les_context_create() faults the pages in, after each chunk
                                    of 64 MiB, with the fraction done in (0, 1], never after
                                    les_context_create() returns; returning false cancels:
                                    les_context_create() returns LES_ERR_CANCELLED and nothing is kept.
                                    Give one (even one that only returns true) to have every page in
                                    place when les_context_create() returns (benchmarks).
                                    NULL (default): in the background on Linux 5.14+
                                    (MADV_POPULATE_WRITE maps pages without writing them):
                                    les_context_create() returns at once and a thread of the context
                                    faults the pages in while it decodes (outputs are the same;
                                    a page not yet faulted is faulted by its first read);
                                    les_context_free() stops it, les_context_set_expert_budget() stops it
                                    and resumes it for the new budget (each waits at most one 8 MiB
                                    chunk). Older kernels and other systems: synchronously on the
                                    creating thread. Never called for
                                    resident contexts. */
  void *progress_user_data;      /* passed to progress_callback */
  const les_model *draft_model;  /* NULL (default), or the model this context will decode with as
                                    les_generate_params.draft_model: with memory_limit_bytes > 0 its
                                    share is counted in the limit (it runs resident on its own context
                                    of this n_ctx: all its weights, its F16 KV cache and forward-pass
                                    scratch; les_memory_plan.draft_bytes) and a limit that cannot hold
                                    it too is refused naming the draft model. Load it before creating
                                    this context. Borrowed for the call; ignored without a limit. */
  /* --- a caller whose struct_size ends above counts no encoder. --- */
  const les_vision *vision;      /* NULL (default), or the vision encoder (les_vision.h) whose images
                                    this context will take: with memory_limit_bytes > 0 its peak
                                    (weights + encode scratch, les_vision_stats.memory_bytes) is
                                    counted in the limit (les_memory_plan.vision_bytes), whether or not
                                    it releases its weights between encodes. Borrowed for the call;
                                    ignored without a limit. */
} les_context_params;

/* How a context's memory limit was split (les_context_params.memory_limit_bytes), all in bytes. */
typedef struct les_memory_plan {
  uint32_t struct_size;          /* set by the caller to sizeof(les_memory_plan) */
  uint64_t limit_bytes;          /* the limit (0: the context was created without one; the rest are 0) */
  uint64_t baseline_bytes;       /* the process's resident set when the context was created */
  uint64_t dense_bytes;          /* tensors that are not routed experts */
  uint64_t kv_bytes;             /* KV cache at n_ctx (and the recurrent state of hybrid models) */
  uint64_t scratch_bytes;        /* forward pass for a chunk of min(n_batch, n_ctx) tokens, logits, sampler */
  uint64_t routed_bytes;         /* all routed experts of the file (0: a dense model) */
  uint64_t min_expert_bytes;     /* smallest expert budget accepted: one token's worth of experts */
  uint64_t expert_budget_bytes;  /* the budget chosen (0: experts resident) */
  int32_t resident;              /* 1: the whole model fits, experts stay resident; 0: streamed */
  int32_t n_ctx;                 /* the n_ctx the KV figure is for */
  uint64_t draft_bytes;          /* les_context_params.draft_model's share: weights, KV cache, scratch
                                    (0: none). The parts add up to at most the limit: baseline + draft
                                    + dense + kv + scratch + (routed if resident, else expert budget) */
  uint64_t vision_bytes;         /* les_context_params.vision's share (its weights and encode scratch;
                                    0: none), part of the fixed parts above; not written for a caller
                                    whose struct_size ends above */
} les_memory_plan;

/* Defaults: struct_size set, n_ctx 0, n_batch 0, n_threads 0, LES_KV_F16, experts resident
 * (expert_budget_bytes 0), prefetch_candidates -1, LES_IO_AUTO, LES_EVICTION_ADAPTIVE, no memory
 * limit (memory_limit_bytes 0). Thread-safe. */
LES_API les_context_params les_context_default_params(void);

/* The largest n_threads that les_model_params and les_context_params accept:
 * 4 x this machine's hardware threads (256 when the count is unknown). More
 * threads than hardware threads only time-slice the same cores. Thread-safe. */
LES_API int32_t les_max_threads(void);

/* Creates a context over `model` (borrowed; keep it alive, see les_model_free).
 * `params` may be NULL (defaults). Errors: LES_ERR_INVALID_ARGUMENT (NULL
 * model, bad field or enum value, struct_size outside the versions this
 * library knows, expert budget below the minimum, prefetch_candidates outside
 * {-1, 0, k..2k}, a memory limit that cannot hold the minimum: the message
 * gives the arithmetic), LES_ERR_UNSUPPORTED (io_backend not available here),
 * LES_ERR_IO (the model file cannot be opened for streaming),
 * LES_ERR_OUT_OF_MEMORY. On failure *out_ctx is NULL. Thread-safe for
 * distinct contexts. */
LES_API les_status les_context_create(les_model *model, const les_context_params *params, les_context **out_ctx);

/* The memory plan of a context created with memory_limit_bytes > 0 (all fields 0 for one
 * created without). `out->struct_size` must be set by the caller; that many bytes are filled.
 * Errors: LES_ERR_INVALID_ARGUMENT (NULL, struct_size outside the versions this library knows).
 * Thread-safe (the plan does not change after creation). */
LES_API les_status les_context_memory_plan(const les_context *ctx, les_memory_plan *out);

/* Frees a context. NULL is a no-op. */
LES_API void les_context_free(les_context *ctx);

/* The message of the last failed call on this context: every call that takes
 * it records its failure here (also les_context_set_expert_budget and the
 * statistics calls, whatever thread made them); les_context_decode*() and
 * les_generate() clear it as they start. "" if none. The string is this
 * thread's copy, valid until this thread's next les_context_last_error().
 * Thread-safe. */
LES_API const char *les_context_last_error(const les_context *ctx);

/* Appends n tokens at positions n_past .. n_past + n - 1 and runs the forward
 * pass (in chunks of n_batch tokens); afterwards les_context_logits() gives
 * the last token's logits.
 * Errors (state unchanged, nothing appended): LES_ERR_INVALID_ARGUMENT (NULL,
 * n <= 0, token id out of range, the context in use), LES_ERR_CONTEXT_FULL
 * (n_past + n > n_ctx), LES_ERR_CANCELLED (les_context_cancel(): pending when
 * the call starts, or issued while it runs: seen between two chunks),
 * LES_ERR_IO (a streaming context could not read an expert it needed from
 * the model file, after one retry: the message names the expert, the layer
 * and the file; the context stays usable, a later decode reads it again),
 * LES_ERR_OUT_OF_MEMORY. */
LES_API les_status les_context_decode(les_context *ctx, const les_token *tokens, int32_t n);

/* Logits of the last decoded token: n_vocab floats (index = token id), owned
 * by the context and valid until the next decode/reset/free. NULL before the
 * first decode. */
LES_API const float *les_context_logits(const les_context *ctx);

/* Like les_context_decode(), and keeps the logits of every one of the n
 * tokens (perplexity, speculative verification): afterwards
 * les_context_logits_ith(ctx, i) gives token i's for 0 <= i < n. This costs
 * n x n_vocab floats and the last layer's attention and FFN for every token
 * (les_context_decode() computes them for the last token only). Same errors
 * and state rules as les_context_decode(). */
LES_API les_status les_context_decode_all_logits(les_context *ctx, const les_token *tokens, int32_t n);

/* Logits of token i of the last decode: n_vocab floats, owned by the context
 * and valid until the next decode/reset/trim/free. i may be negative, counting
 * from the end (-1 = the last token). After les_context_decode_all_logits() any
 * i in [-n, n) works; after les_context_decode() only the last token's logits
 * exist (i = -1). NULL otherwise: out of range, NULL ctx, nothing decoded.
 * Same thread rules as the context. */
LES_API const float *les_context_logits_ith(const les_context *ctx, int32_t i);

/* Tokens in the KV cache (the pending token counted); 0 for NULL; -1 while
 * another thread's call runs on the context (les_last_error() says so). */
LES_API int32_t les_context_n_past(const les_context *ctx);
LES_API int32_t les_context_n_ctx(const les_context *ctx);

/* Empties the KV cache (n_past becomes 0). */
LES_API les_status les_context_reset(les_context *ctx);

/* Keeps the first n_keep tokens of the context (les_context_tokens' order;
 * the pending token, if any, counts last) and drops the rest (for rollback,
 * conversation editing). When the logits of the last kept token are gone
 * with the trim, that token becomes pending: it stays in the context
 * (les_context_n_past and les_context_tokens are unchanged by this) and the
 * next decode evaluates it again, so les_generate(ctx, "", ...) continues
 * from it ("trim and regenerate") and les_context_logits() is NULL until
 * then. Errors: LES_ERR_INVALID_ARGUMENT for n_keep < 0 or
 * > les_context_n_past, and, for a model with a recurrent (linear-attention)
 * state such as qwen35moe, any n_keep other than 0 or the positions already
 * evaluated (that state cannot be unwound: reset and decode again); nothing
 * changes then. Thread-compatible (one thread per context). */
LES_API les_status les_context_trim(les_context *ctx, int32_t n_keep);

/* Asks the call running on this context to stop: les_generate*() before
 * its next chunk of prompt tokens or before its next token is committed,
 * les_context_decode*() and les_context_append_image() before their next
 * chunk of n_batch rows (LES_ERR_CANCELLED, nothing of that call's input kept;
 * a call of one chunk completes). When none runs, the next one returns
 * LES_ERR_CANCELLED at once: the cancel stays pending until a call consumes
 * it (see les_generate.h), so a cancel issued just before a generation starts
 * is not lost. Thread-safe: may be called from any thread. Async-signal-safe
 * (one lock-free atomic store), so a SIGINT handler may call it. */
LES_API void les_context_cancel(les_context *ctx);

#ifdef __cplusplus
}
#endif

#endif /* LES_CONTEXT_H */
