/*
 * les_token.h: the model's vocabulary: special tokens, text -> token ids
 * (tokenization) and token id -> text bytes. Part of the LES C ABI; include
 * <les/les.h>.
 *
 * Thread-safety: every function declared here is thread-safe (the model is
 * immutable).
 */
#ifndef LES_TOKEN_H
#define LES_TOKEN_H

#include "les_common.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* LES_TOKEN_H */
