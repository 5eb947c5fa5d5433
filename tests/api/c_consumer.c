/* A C99 program that uses LES only through the installed les.h and libles:
 * loads a model, generates greedily and prints the text, with the routed
 * experts resident or (BUDGET_MIB > 0) streamed through an expert cache of
 * that many MiB. It is compiled with -std=c99 -Wall -Wextra -Werror -pedantic
 * against an installed prefix by tests/api/run_c_consumer.sh, which compares
 * the output with llama.cpp's.
 *
 * usage: c_consumer MODEL.gguf PROMPT N_PREDICT [BUDGET_MIB] */
#include <les/les.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool on_token(les_token token, const char *piece, size_t len, void *user_data) {
  int *count = (int *)user_data;
  (void)token;
  fwrite(piece, 1, len, stdout);
  ++*count;
  return true;
}

int main(int argc, char **argv) {
  les_model *model = NULL;
  les_context *ctx = NULL;
  les_model_params mp;
  les_context_params cp;
  les_generate_params gp;
  les_status st;
  int count = 0;

  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: %s MODEL.gguf PROMPT N_PREDICT [BUDGET_MIB]\n", argv[0]);
    return 2;
  }
  if (!les_version_at_least(0, 2)) { /* 0.2: the expert budget is a context parameter */
    fprintf(stderr, "libles %s is older than 0.2\n", les_version());
    return 1;
  }
  mp = les_model_default_params();
  mp.n_threads = 2;
  st = les_model_load(argv[1], &mp, &model);
  if (st != LES_OK) {
    fprintf(stderr, "load failed: %s: %s\n", les_status_name(st), les_last_error());
    return 1;
  }
  cp = les_context_default_params();
  if (argc == 5) cp.expert_budget_bytes = (uint64_t)strtoull(argv[4], NULL, 10) << 20;
  st = les_context_create(model, &cp, &ctx);
  if (st != LES_OK) {
    fprintf(stderr, "context failed: %s\n", les_last_error());
    les_model_free(model);
    return 1;
  }
  gp = les_generate_default_params();
  gp.n_predict = atoi(argv[3]);
  gp.ignore_eos = true;
  gp.sampler.temperature = 0.0f; /* greedy */
  st = les_generate(ctx, argv[2], &gp, on_token, &count);
  if (st != LES_OK) {
    fprintf(stderr, "generate failed: %s: %s\n", les_status_name(st), les_context_last_error(ctx));
  }
  les_context_free(ctx);
  les_model_free(model);
  return st == LES_OK && count == gp.n_predict ? 0 : 1;
}
