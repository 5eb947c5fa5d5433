/*
 * les_sampler.h: sampling parameters, and a sampler object usable on its own
 * by apps that drive les_context_decode() themselves (les_generate() makes
 * its own from les_generate_params.sampler). Part of the LES C ABI; include
 * <les/les.h>.
 *
 * The chain is llama.cpp's default: penalties -> top-k -> top-p -> min-p ->
 * temperature -> draw (src/core/sampler.h gives the math). temperature 0 is
 * greedy: the argmax after penalties, ties to the lowest id.
 *
 * Thread-safety: les_sampler_default_params() is thread-safe; a sampler is
 * used from one thread at a time (thread-compatible); distinct samplers are
 * independent.
 */
#ifndef LES_SAMPLER_H
#define LES_SAMPLER_H

#include "les_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* les_sampler_params.seed: draw a random seed (the default). The seed drawn is
 * reported by les_sampler_seed() and les_generate_stats.seed. */
#define LES_SEED_RANDOM UINT64_MAX

typedef struct les_sampler_params {
  uint32_t struct_size;    /* sizeof(les_sampler_params); set by les_sampler_default_params() */
  float temperature;       /* 0 = greedy (ties to the lowest id); default 0.8 */
  int32_t top_k;           /* 0 = off; default 40 */
  float top_p;             /* 1 = off; default 0.95 */
  float min_p;             /* 0 = off; default 0.05 */
  float repeat_penalty;    /* 1 = off; default 1 */
  float presence_penalty;  /* 0 = off */
  float frequency_penalty; /* 0 = off */
  int32_t penalty_last_n;  /* window of tokens for the penalties; default 64 */
  uint64_t seed;           /* RNG seed; same seed + same model = same text; default LES_SEED_RANDOM */
} les_sampler_params;

LES_API les_sampler_params les_sampler_default_params(void);

typedef struct les_sampler les_sampler;

/* Creates a sampler. `params` may be NULL (defaults). Errors:
 * LES_ERR_INVALID_ARGUMENT naming a bad field (temperature < 0, top_p outside
 * (0, 1], ...) or struct_size; *out_sampler is NULL then. Free with
 * les_sampler_free(). Thread-safe. */
LES_API les_status les_sampler_create(const les_sampler_params *params, les_sampler **out_sampler);

/* Frees a sampler; NULL is a no-op. */
LES_API void les_sampler_free(les_sampler *sampler);

/* Picks the next token from `logits` (n_vocab floats, index = token id, e.g.
 * les_context_logits()). Does not record it: call les_sampler_accept() with
 * the token the app actually appends. Errors: LES_ERR_INVALID_ARGUMENT (NULL,
 * n_vocab <= 0, a NaN or +inf logit, every logit -inf; the message names the
 * token). */
LES_API les_status les_sampler_sample(les_sampler *sampler, const float *logits, int32_t n_vocab,
                                      les_token *out_token);

/* Records a token in the penalty window (prompt tokens and generated ones).
 * Errors: LES_ERR_INVALID_ARGUMENT (NULL, token < 0). */
LES_API les_status les_sampler_accept(les_sampler *sampler, les_token token);

/* Clears the penalty window and restarts the random sequence from the seed. */
LES_API void les_sampler_reset(les_sampler *sampler);

/* The seed in use (the drawn one for LES_SEED_RANDOM); 0 for NULL. */
LES_API uint64_t les_sampler_seed(const les_sampler *sampler);

#ifdef __cplusplus
}
#endif

#endif /* LES_SAMPLER_H */
