/*
 * les.h: the stable C ABI of LES (Lookahead Expert Scheduling), an inference
 * engine for Mixture-of-Experts language models stored as GGUF files.
 * Include this header only; it includes the topic headers, one per concept:
 *
 *   les_common.h    export macro, API version, status codes, last error,
 *                   logging types, the opaque handle and token types
 *   les_model.h     loading a GGUF model, hyperparameters, metadata
 *   les_token.h     vocabulary: special tokens, tokenize, token -> text
 *   les_context.h   contexts: KV cache, decode, logits, reset/trim, cancel
 *   les_activations.h  observing a forward pass: each weight matrix's input rows
 *   les_stream.h    expert streaming: run-time budget, streaming statistics
 *   les_sampler.h   sampler parameters and a sampler object of its own
 *   les_generate.h  generation, its statistics
 *   les_chat.h      chat templates: messages -> the model's prompt format
 *   les_session.h   a context's tokens; saving and restoring its state
 *   les_vision.h    image input: a vision encoder (mmproj), images into a context
 *
 * Conventions
 * - Only opaque handles, fixed-width integers and plain structs cross this
 *   boundary; no C++ type, exception or STL object ever does.
 * - Every fallible call returns `les_status` (0 = LES_OK, negative = error,
 *   grouped by range). A message naming what went wrong is then available
 *   from `les_last_error()` (thread-local: the calling thread's last error),
 *   and from `les_context_last_error()` for calls on a context.
 * - Parameter and statistics structs carry their `struct_size` (parameters
 *   come from `les_*_default_params()`); fields are only ever appended, so a
 *   caller compiled against an older header of the same ABI keeps working.
 *   Before 1.0 a minor version may break the ABI (the library's soname then
 *   changes); CHANGELOG.md lists every break.
 * - Threading: a model is immutable and shared freely across threads; a
 *   context is used from one thread at a time (les_context_cancel() and the
 *   les_stream.h calls may come from any thread). Each declaration states its own rule.
 *
 * Minimal use (error handling shortened; README.md has the full program):
 *
 *   les_model *model = NULL; les_context *ctx = NULL;
 *   les_generate_params gp = les_generate_default_params();
 *   if (les_model_load("model.gguf", NULL, &model) != LES_OK) puts(les_last_error());
 *   les_context_create(model, NULL, &ctx);
 *   les_generate(ctx, "Once upon a time", &gp, on_token, NULL);
 *   les_context_free(ctx); les_model_free(model);
 */
#ifndef LES_H
#define LES_H

#include "les_common.h"
#include "les_model.h"
#include "les_token.h"
#include "les_context.h"
#include "les_activations.h"
#include "les_stream.h"
#include "les_sampler.h"
#include "les_generate.h"
#include "les_chat.h"
#include "les_session.h"
#include "les_vision.h"

#endif /* LES_H */
