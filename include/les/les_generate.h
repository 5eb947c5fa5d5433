/*
 * les_generate.h: sampling parameters and text generation on a context:
 * tokenize a prompt, prefill it, sample and stream tokens through a callback
 * until EOS, a stop string, n_predict, cancellation or a full context; then
 * read the run's timing. Part of the LES C ABI; include <les/les.h>.
 *
 * Thread-safety: les_generate() and les_context_generate_stats() follow the
 * context's rules (one thread at a time; les_context_cancel() from any
 * thread); the *_default_params() and les_stop_reason_name() are thread-safe.
 */
#ifndef LES_GENERATE_H
#define LES_GENERATE_H

#include "les_common.h"
#include "les_sampler.h"

#ifdef __cplusplus
extern "C" {
#endif


/* Called once per generated token with its id and its text bytes (`piece`,
 * `piece_len` bytes, borrowed for the call; UTF-8 sequences split across tokens
 * are held back and delivered whole). Return false to stop generation:
 * les_generate() then returns LES_ERR_CANCELLED. */
typedef bool (*les_token_callback)(les_token token, const char *piece, size_t piece_len, void *user_data);

/* Polled by a running les_generate() (les_generate_params.abort_callback) on
 * its thread: before its prompt is evaluated, between the prompt's chunks of
 * n_batch tokens and before each generated token is committed. Return true to
 * stop the call as les_context_cancel() would (LES_ERR_CANCELLED); it may be
 * polled again afterwards. */
typedef bool (*les_abort_callback)(void *user_data);

typedef struct les_generate_params {
  uint32_t struct_size;        /* sizeof(les_generate_params); set by les_generate_default_params() */
  int32_t n_predict;           /* max tokens to generate; default 128 */
  bool ignore_eos;             /* keep going past end-of-generation tokens */
  les_sampler_params sampler;  /* sampling */
  const char *const *stop;     /* NULL or an array of n_stop UTF-8 stop strings (borrowed) */
  int32_t n_stop;
  /* --- chat and sessions: a caller whose struct_size ends above gets the defaults. --- */
  bool parse_special;          /* control-token texts in the prompt (<|im_start|>, ...) become those
                                  tokens, as chat prompts from les_chat_apply_template() need; default
                                  false (they are plain text). Read only from callers whose
                                  struct_size covers prompt_tokens (CHANGELOG.md 0.2.0 says why). */
  const les_token *prompt_tokens; /* NULL (default): tokenize `prompt`. Else the prompt is these
                                  n_prompt_tokens ids (borrowed; BOS is the caller's to include) and
                                  `prompt` must be NULL or "": for apps that tokenize themselves, e.g.
                                  to reuse the common prefix of les_context_tokens() */
  int32_t n_prompt_tokens;
  /* --- speculative decoding; a caller whose struct_size ends above decodes plainly. With a
   * drafter set, each decode step drafts tokens, checks them in one batched verify pass of this
   * context's model and keeps the accepted prefix (lossless: greedy output is token for token
   * plain greedy decoding, sampled output has the target's distribution through speculative
   * rejection sampling). How many drafts a pass checks is chosen per step from the
   * bytes the pass would read (the union of the drafted tokens' experts, minus what the expert
   * cache holds) and the drafter's acceptance so far, down to none when speculation does not pay.
   * The drafter, its draft context and the length policy's measurements are kept by the context
   * across calls while these settings stay the same. At most one drafter: two of lookup_ngram > 0,
   * a draft_model and mtp (below) together are LES_ERR_INVALID_ARGUMENT. --- */
  int32_t lookup_ngram;        /* > 0: prompt lookup drafting (no extra model): the last n tokens,
                                  n = lookup_ngram down to 1, are matched against the conversation
                                  so far and what followed is drafted. 1..16; 0 (default) = off */
  const les_model *draft_model; /* non-NULL: this model drafts, run resident on its own context of
                                  the target's n_ctx. Its vocabulary must equal the target's token
                                  for token (les_model_check_draft(); otherwise
                                  LES_ERR_INVALID_ARGUMENT naming the first difference). Borrowed
                                  for the call; the context keeps a reference to the weights (as a
                                  context does), so les_model_free() of it afterwards is safe */
  int32_t draft_max;           /* most drafts per verify pass, 1..64; default 8 */
  int32_t draft_min;           /* fewest drafts verified when the drafter offers that many,
                                  0..draft_max; default 0 (the byte-aware length may switch
                                  speculation off); > 0 forces speculation (measurements) */
  /* --- a caller whose struct_size ends above gets no MTP drafting. --- */
  bool mtp;                    /* true: the draft head stored in this context's own model (an MTP /
                                  "nextn" block, e.g. qwen35moe files with one) drafts, greedily,
                                  from the target's final hidden rows; no extra model. The context
                                  then keeps its hidden rows (a few KiB per token of a decode; the
                                  last layer runs every prompt row). A model without an MTP block
                                  is LES_ERR_UNSUPPORTED naming the model. The head follows the
                                  context from the first les_generate() with mtp set on an empty
                                  context (or after les_context_reset()); positions decoded before
                                  without it leave it without drafts (plain decoding, still exact).
                                  Only one drafter: with lookup_ngram > 0 or draft_model,
                                  LES_ERR_INVALID_ARGUMENT. Default false */
  /* --- a caller whose struct_size ends above gets no abort callback, and its prompt is `prompt`
   * or prompt_tokens (no prompt_text). --- */
  les_abort_callback abort_callback; /* NULL (default), or polled as les_abort_callback says: a stop
                                  request scoped to this call (unlike les_context_cancel(), which
                                  stays pending until a call consumes it), e.g. an interactive
                                  app's Ctrl-C flag, or a server's "the client went away" */
  void *abort_user_data;       /* passed to abort_callback */
  const char *prompt_text;     /* NULL (default): the prompt is the `prompt` argument, NUL-terminated.
                                  Else the prompt is these prompt_text_len bytes (borrowed), NUL bytes
                                  included (tokenized like any other byte), and `prompt` must be NULL
                                  or "" and prompt_tokens NULL: for text that may hold NUL bytes (a
                                  file's, a wrapper's string), which a C string would cut short */
  size_t prompt_text_len;
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
  /* A caller whose struct_size ends above gets the fields above only (here and
   * at each --- line below). */
  int32_t n_decoded;           /* single-token forward passes (the last sampled token is not evaluated) */
  les_stop_reason stop_reason; /* why generation ended */
  uint64_t seed;               /* the sampler's seed (the random one drawn for LES_SEED_RANDOM) */
  /* --- speculative decoding (all 0 without a drafter). A "target pass" is one
   * forward pass of the decode phase: a verify pass (the pending token and d >= 1 drafts) or a
   * plain one-token pass (d = 0, chosen when speculation would not pay). "Union": the distinct
   * (layer, expert) pairs a pass's rows selected together, each counted once per pass. --- */
  int32_t n_target_passes;     /* target passes of the decode phase */
  int32_t n_verify_passes;     /* of those, passes that checked at least one draft */
  int32_t n_drafted;           /* tokens the drafter proposed */
  int32_t n_draft_verified;    /* drafts the verify passes checked (the byte-aware length may cut
                                  a proposal short) */
  int32_t n_draft_accepted;    /* drafts accepted; acceptance rate = n_draft_accepted / n_draft_verified */
  int32_t n_pass_tokens;       /* tokens the target passes produced (accepted drafts + one of the
                                  target's own per pass); tokens per target pass =
                                  n_pass_tokens / n_target_passes */
  int64_t union_experts;       /* sum over target passes of their union's size, in experts */
  uint64_t union_bytes;        /* sum over target passes of their union's bytes */
  uint64_t expert_bytes_read;  /* expert bytes read from the file during target passes (0 resident);
                                  bytes per produced token = expert_bytes_read / n_pass_tokens */
  double draft_seconds;        /* wall time spent drafting (inside decode_seconds) */
  /* --- a caller whose struct_size ends above does not get the field below --- */
  double forward_seconds;      /* of decode_seconds, the wall time inside the decode phase's forward
                                  passes (one per generated token but the last, or whole speculative
                                  steps, drafting included); the rest is sampling, detokenizing, stop
                                  strings and the token callback. n_decoded / forward_seconds is the
                                  rate llama.cpp's "eval time" line reports (its sampling excluded) */
} les_generate_stats;

/* Whether `draft` can draft for `target` (les_generate_params.draft_model): LES_OK when their
 * vocabularies are equal (the same number of tokens, every token's text and type, the BOS and EOS
 * ids); LES_ERR_INVALID_ARGUMENT naming the first difference otherwise (or a NULL model). Reads
 * the vocabularies only. Thread-safe (both models are read-only). */
LES_API les_status les_model_check_draft(const les_model *target, const les_model *draft);

/* Tokenizes `prompt` (control-token texts parsed iff params->parse_special),
 * appends it to the context after what it already holds, then samples up to
 * n_predict tokens, streaming each through `callback` (may be NULL). Stops at
 * EOS (unless ignore_eos), a stop string or n_predict (LES_OK), or:
 * - the callback returning false: LES_ERR_CANCELLED, "the token callback
 *   returned false" (the text delivered so far is complete up to that token,
 *   which is kept and counted);
 * - les_context_cancel() or params->abort_callback: LES_ERR_CANCELLED between
 *   two chunks of n_batch prompt tokens (the prefill then keeps nothing of
 *   this prompt: n_past and the pending token as before the call,
 *   n_prompt_tokens 0) or before the next generated token is committed: every
 *   token counted in n_generated and kept in the context was delivered to the
 *   callback (delivered == counted == kept), and held-back text is still
 *   delivered (token -1). A cancel is never lost: one issued while no call
 *   runs on the context (or after the running one's last check) stays
 *   pending, and the next call that evaluates tokens (les_generate*,
 *   les_context_decode*, les_context_append_image) returns LES_ERR_CANCELLED
 *   at once without decoding anything (n_past unchanged, no callback). Each
 *   cancel stops one call;
 * - a full context: LES_ERR_CONTEXT_FULL after delivering what fit; a prompt
 *   that does not fit in the room left (n_ctx - n_past) is also
 *   LES_ERR_CONTEXT_FULL, before anything is decoded (as les_context_decode).
 * les_context_generate_stats() then gives stop_reason LES_STOP_CANCELLED /
 * LES_STOP_CONTEXT_FULL. Other errors: LES_ERR_INVALID_ARGUMENT (NULL prompt,
 * bad parameters, an empty prompt with nothing to continue from), decode
 * errors (I/O while streaming experts).
 *
 * A context is a conversation: BOS is added (as the vocabulary requests) only
 * when the context is empty, and a later call continues where this one
 * stopped. The context keeps the prompt and every delivered token: the last
 * one stays pending (accepted but not evaluated; the next decode or generate
 * evaluates it first, in the same batch), so n_past grows by n_prompt_tokens
 * + n_generated, except that a stop at EOS adds nothing for the EOS token and
 * a full context drops the last token. Several calls therefore give exactly
 * the tokens of one long generation over the concatenated prompts (greedy, or
 * with a fixed seed per call). An empty prompt continues from the pending
 * token (or the last logits). */
LES_API les_status les_generate(les_context *ctx, const char *prompt, const les_generate_params *params,
                                les_token_callback callback, void *user_data);

/* Copies the statistics of the last les_generate() into *out (whose
 * struct_size the caller sets). */
LES_API les_status les_context_generate_stats(const les_context *ctx, les_generate_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* LES_GENERATE_H */
