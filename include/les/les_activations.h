/*
 * les_activations.h: observing a forward pass. A context can report, for
 * every weight matrix it multiplies, the activation rows that enter it: what
 * an importance matrix (imatrix) accumulates, and what activation statistics
 * need; and, for every MoE layer, which experts its router selected for each
 * token (a routing trace). Part of the LES C ABI; include <les/les.h>.
 *
 * Thread-safety: the callbacks run on the thread that calls
 * les_context_decode*() on the context; install them from that thread too.
 */
#ifndef LES_ACTIVATIONS_H
#define LES_ACTIVATIONS_H

#include "les_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called once per weight matrix per forward chunk with the rows it multiplies:
 * `x` holds n_rows rows of n_cols floats (row-major; n_cols is the matrix's
 * input width). `tensor` is the weight's GGUF name ("blk.3.attn_q.weight",
 * "output.weight"), the same for either expert file layout. For a routed
 * expert tensor (blk.N.ffn_gate_exps / ffn_up_exps / ffn_down_exps.weight)
 * `expert` is the expert id and the rows are the tokens routed to it; for
 * every other tensor it is -1. The last layer's attention output, FFN and the
 * output matrix see only the rows whose logits are computed (all of them with
 * les_context_decode_all_logits()). `tensor` and `x` are borrowed for the call. */
typedef void (*les_activation_callback)(const char *tensor, int32_t expert, const float *x, int64_t n_rows,
                                        int64_t n_cols, void *user_data);

/* Installs `callback` (NULL removes it) on ctx, called with `user_data` during
 * every later decode. Errors: LES_ERR_INVALID_ARGUMENT (NULL ctx). */
LES_API les_status les_context_set_activation_callback(les_context *ctx, les_activation_callback callback,
                                                       void *user_data);

/* Called once per MoE layer per forward chunk with its router's choice: row i
 * (0 <= i < n_tokens) is the token at sequence position pos + i; its
 * n_expert_used expert ids, in descending router score, are
 * selected[i * n_expert_used .. (i + 1) * n_expert_used) and their final gate
 * weights (after renormalisation and scale) are weights[same]. A prefill
 * chunk's last layer routes only the rows whose logits are computed (the
 * chunk's last row, unless les_context_decode_all_logits()). A speculative
 * verify pass routes its draft rows too: a rejected draft's position is
 * routed again by the pass that evaluates the token that replaced it.
 * `selected` and `weights` are borrowed for the call. Dense layers never call
 * it. This is what `les run --route-trace` records (route_trace v1). */
typedef void (*les_route_callback)(int32_t layer, int32_t pos, int32_t n_tokens, int32_t n_expert_used,
                                   const int32_t *selected, const float *weights, void *user_data);

/* Installs `callback` (NULL removes it) on ctx, called with `user_data` during
 * every later decode. Errors: LES_ERR_INVALID_ARGUMENT (NULL ctx). */
LES_API les_status les_context_set_route_callback(les_context *ctx, les_route_callback callback, void *user_data);

#ifdef __cplusplus
}
#endif

#endif /* LES_ACTIVATIONS_H */
