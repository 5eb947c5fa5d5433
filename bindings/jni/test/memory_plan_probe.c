/*
 * memory_plan_probe: what the C API reports as a draft model's and a vision encoder's share of a
 * context's memory limit, for the wrapper tests (JniTest, JniVisionTest, KotlinTest) to compare
 * with the les_memory_plan their wrapper returns for the same parameters.
 *
 * usage: memory_plan_probe MODEL N_CTX LIMIT_BYTES N_THREADS DRAFT|- MMPROJ|-
 *   Loads MODEL (and DRAFT, and the vision encoder MMPROJ for MODEL; "-" = none) with n_threads
 *   N_THREADS, creates a context with n_ctx N_CTX, memory_limit_bytes LIMIT_BYTES, draft_model
 *   and vision, and prints one line: "draft_bytes=D vision_bytes=V" (les_memory_plan, bytes).
 *   Both figures depend on the files, n_ctx and the draft model's n_threads (its scratch), not on
 *   the process's resident set, so another process with the same arguments gets the same.
 * Exit status: 0, 2 on a usage error, 1 when a C call fails (its message on stderr).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "les/les.h"

static int failed(const char *what, les_status st) {
  fprintf(stderr, "memory_plan_probe: %s: %s: %s\n", what, les_status_name(st), les_last_error());
  return 1;
}

/* A decimal number in [0, max] from s, or -1 when s is not one. */
static long long parse_count(const char *s, long long max) {
  char *end = NULL;
  errno = 0;
  const long long v = strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 0 || v > max) return -1;
  return v;
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: memory_plan_probe MODEL N_CTX LIMIT_BYTES N_THREADS DRAFT|- MMPROJ|-\n");
    return 2;
  }
  const long long n_ctx = parse_count(argv[2], INT32_MAX);
  const long long limit = parse_count(argv[3], INT64_MAX);
  const long long n_threads = parse_count(argv[4], INT32_MAX);
  if (n_ctx < 0 || limit <= 0 || n_threads < 0) {
    fprintf(stderr, "memory_plan_probe: N_CTX '%s', LIMIT_BYTES '%s' or N_THREADS '%s' is not a count"
            " (LIMIT_BYTES > 0)\n", argv[2], argv[3], argv[4]);
    return 2;
  }
  les_model_params mp = les_model_default_params();
  mp.n_threads = (int32_t)n_threads;
  les_vision_params vp = les_vision_default_params();
  vp.n_threads = (int32_t)n_threads;
  les_model *model = NULL, *draft = NULL;
  les_vision *vision = NULL;
  les_context *ctx = NULL;
  les_context_params cp = les_context_default_params();
  les_memory_plan plan;
  memset(&plan, 0, sizeof plan);
  plan.struct_size = sizeof plan;
  int rc = 1;
  les_status st = les_model_load(argv[1], &mp, &model);
  if (st != LES_OK) return failed("les_model_load(MODEL)", st);
  if (strcmp(argv[5], "-") != 0 && (st = les_model_load(argv[5], &mp, &draft)) != LES_OK) {
    rc = failed("les_model_load(DRAFT)", st);
    goto done;
  }
  if (strcmp(argv[6], "-") != 0 && (st = les_vision_load(model, argv[6], &vp, &vision)) != LES_OK) {
    rc = failed("les_vision_load", st);
    goto done;
  }
  cp.n_ctx = (int32_t)n_ctx;
  cp.memory_limit_bytes = (uint64_t)limit;
  cp.draft_model = draft;
  cp.vision = vision;
  if ((st = les_context_create(model, &cp, &ctx)) != LES_OK) {
    rc = failed("les_context_create", st);
    goto done;
  }
  if ((st = les_context_memory_plan(ctx, &plan)) != LES_OK) {
    rc = failed("les_context_memory_plan", st);
    goto done;
  }
  printf("draft_bytes=%" PRIu64 " vision_bytes=%" PRIu64 "\n", plan.draft_bytes, plan.vision_bytes);
  rc = 0;
done:
  les_context_free(ctx);
  les_vision_free(vision);
  les_model_free(draft);
  les_model_free(model);
  return rc;
}
