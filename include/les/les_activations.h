/*
 * les_activations.h: observing a forward pass. A context can report, for
 * every weight matrix it multiplies, the activation rows that enter it: what
 * an importance matrix (imatrix) accumulates, and what activation statistics
 * need. Part of the LES C ABI; include <les/les.h>.
 *
 * Thread-safety: the callback runs on the thread that calls
 * les_context_decode*() on the context; install it from that thread too.
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

#ifdef __cplusplus
}
#endif

#endif /* LES_ACTIVATIONS_H */
