/*
 * les_session.h: a context as a conversation. The tokens it holds, and its
 * state saved to a buffer or a file and restored later, into this context or
 * a fresh one of the same model (in this process or another). Part of the
 * LES C ABI; include <les/les.h>.
 *
 * What a context holds: the token ids of its KV cache positions, then at most
 * one pending token (the last token les_generate() delivered, accepted but
 * not evaluated yet; the next decode or generate evaluates it first).
 * les_context_n_past() counts both.
 *
 * The saved state (format: src/core/model/session_state.h) carries a format
 * version and a fingerprint of the model (architecture, metadata, tensor
 * table, sampled embedding bytes), the tokens, the pending token and the KV
 * cache rows. Restoring checks all of it before changing anything and names
 * what does not match: another model, another KV cache type or shape, too
 * small an n_ctx, a newer format, a truncated or corrupted file. After a
 * restore, generation continues with the same tokens as if the state had
 * never been saved. Logits are not part of the state (les_context_logits()
 * is NULL until the next decode).
 *
 * Thread-safety: like every context call, one thread at a time per context.
 */
#ifndef LES_SESSION_H
#define LES_SESSION_H

#include "les_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copies the ids the context holds (positions in order, then the pending
 * token) into tokens[0..n_max) and their count to *n_out. Buffer too small:
 * LES_ERR_INVALID_ARGUMENT with *n_out = the count (call again). */
LES_API les_status les_context_tokens(const les_context *ctx, les_token *tokens, int32_t n_max, int32_t *n_out);

/* The exact size in bytes of les_context_state_save()'s output now. */
LES_API les_status les_context_state_size(const les_context *ctx, size_t *n_bytes);

/* Writes the state into buf (buf_size bytes) and its size to *n_written.
 * Buffer too small: LES_ERR_INVALID_ARGUMENT with *n_written = the size
 * needed, nothing written. The context is not changed. */
LES_API les_status les_context_state_save(const les_context *ctx, void *buf, size_t buf_size, size_t *n_written);

/* Replaces the context's tokens and KV cache with a saved state (`size`
 * bytes). Errors (the context unchanged): LES_ERR_FORMAT (not a state,
 * truncated, corrupted), LES_ERR_INVALID_ARGUMENT (NULL, another model,
 * another KV cache type), LES_ERR_UNSUPPORTED (a newer format or a section
 * this library does not read), LES_ERR_CONTEXT_FULL (n_ctx too small). */
LES_API les_status les_context_state_load(les_context *ctx, const void *buf, size_t size);

/* The same through a file: written to PATH.tmp then renamed over PATH (a
 * crash never leaves a partial file under PATH); read whole, with a bound:
 * the file must be a regular file (a FIFO, a device such as /dev/zero or a
 * directory is LES_ERR_INVALID_ARGUMENT, refused before anything is read or
 * waited for), its first bytes must be a state's magic (LES_ERR_FORMAT before
 * the rest is read: e.g. a model file), and it must be at most the largest
 * state a context of this n_ctx holds (LES_ERR_INVALID_ARGUMENT naming that
 * size, from the file's size, before reading). I/O failures: LES_ERR_IO naming
 * the path. */
LES_API les_status les_context_state_save_file(const les_context *ctx, const char *path);
LES_API les_status les_context_state_load_file(les_context *ctx, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* LES_SESSION_H */
