/*
 * behaviour_dump: what one LES build computes on one model, as text that two
 * builds can be compared by (scripts/compare_behaviour.sh). Uses only the
 * public C API (include/les), so one source builds against older and newer
 * trees alike.
 *
 *   behaviour_dump MODEL [--budget-mb B] [--prefetch-c C|k|2k] [--eviction lru|lfu_aged]
 *                        [--io pread|io_uring] [--threads N] [--n-gen N]
 *
 * It decodes a fixed prompt (tokenized with BOS as the vocabulary asks) in one
 * batch keeping every position's logits, then N greedy steps one token at a
 * time (argmax, lowest id on ties; no stop at end of text). Defaults: resident,
 * c = -1 (the library's default), lfu_aged, pread, 2 threads, 24 steps,
 * n_ctx 256. It prints:
 *   model:  n_vocab, n_expert, n_expert_used (k)
 *   tokens: the prompt ids, then the generated ids
 *   logits: n_values and an FNV-1a 64 hash of the bytes of every logit row
 *           (prompt rows, then one row per greedy step), in decode order
 *   stream: with --budget-mb > 0 over a model with experts: slots, c,
 *           tokens and the predictor's mean recall (routing only, so
 *           independent of read timing)
 *   counters: then the streaming counters (reads, bytes, demand and
 *           prefetched experts, hits, in-flight hits, misses, unused prefetch
 *           bytes, read errors). With lookahead (c > 0) they depend on when
 *           reads complete (a prefetch still in flight, a held-back prefetch),
 *           so they vary from run to run of one build; on demand (c = 0) they
 *           do not.
 * Bit-identical logits give identical hashes; one differing bit changes it.
 * Exit status: 0 on success, 1 with a message on stderr.
 */
#include <les/les.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char kPrompt[] =
    "Once upon a time, in a small village by the sea, there lived an old fisherman who";

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

static int fail(const char *what) {
  fprintf(stderr, "behaviour_dump: %s: %s\n", what, les_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: behaviour_dump MODEL [--budget-mb B] [--prefetch-c C] [--eviction lru|lfu_aged] "
                    "[--io pread|io_uring] [--threads N] [--n-gen N]\n");
    return 1;
  }
  const char *path = argv[1];
  double budget_mb = 0;
  const char *prefetch_c = "-1";
  int threads = 2, n_gen = 24;
  les_eviction_policy eviction = LES_EVICTION_LFU_AGED;
  les_io_backend io = LES_IO_PREAD;
  for (int i = 2; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (strcmp(k, "--budget-mb") == 0) budget_mb = atof(v);
    else if (strcmp(k, "--prefetch-c") == 0) prefetch_c = v;
    else if (strcmp(k, "--threads") == 0) threads = atoi(v);
    else if (strcmp(k, "--n-gen") == 0) n_gen = atoi(v);
    else if (strcmp(k, "--eviction") == 0) eviction = strcmp(v, "lru") == 0 ? LES_EVICTION_LRU : LES_EVICTION_LFU_AGED;
    else if (strcmp(k, "--io") == 0) io = strcmp(v, "io_uring") == 0 ? LES_IO_IO_URING : LES_IO_PREAD;
    else {
      fprintf(stderr, "behaviour_dump: unknown option %s\n", k);
      return 1;
    }
  }

  les_model_params mp = les_model_default_params();
  mp.n_threads = threads;
  les_model *model = NULL;
  if (les_model_load(path, &mp, &model) != LES_OK) return fail("load");
  les_context_params cp = les_context_default_params();
  cp.n_threads = threads;
  cp.n_ctx = 256;
  cp.expert_budget_bytes = (uint64_t)(budget_mb * 1024.0 * 1024.0);
  const int32_t k_used = les_model_n_expert_used(model);
  cp.prefetch_candidates = strcmp(prefetch_c, "k") == 0    ? k_used
                           : strcmp(prefetch_c, "2k") == 0 ? 2 * k_used
                                                           : atoi(prefetch_c);
  cp.eviction = eviction;
  cp.io_backend = io;
  les_context *ctx = NULL;
  if (les_context_create(model, &cp, &ctx) != LES_OK) return fail("context");

  les_token prompt[128];
  int32_t n_prompt = 0;
  if (les_tokenize(model, kPrompt, strlen(kPrompt), true, false, prompt, 128, &n_prompt) != LES_OK) return fail("tokenize");
  const int32_t n_vocab = les_model_n_vocab(model);
  const size_t row_bytes = (size_t)n_vocab * sizeof(float);
  uint64_t h = 0xcbf29ce484222325ULL, n_values = 0;

  if (les_context_decode_all_logits(ctx, prompt, n_prompt) != LES_OK) return fail("prefill");
  for (int32_t i = 0; i < n_prompt; ++i) {
    const float *row = les_context_logits_ith(ctx, i);
    if (row == NULL) return fail("prompt logits");
    h = fnv1a(h, row, row_bytes);
    n_values += (uint64_t)n_vocab;
  }
  printf("model: n_vocab %d n_expert %d n_expert_used %d\n", n_vocab, les_model_n_expert(model), k_used);
  printf("tokens:");
  for (int32_t i = 0; i < n_prompt; ++i) printf(" %d", prompt[i]);
  printf(" |");
  const float *last = les_context_logits_ith(ctx, -1);
  for (int step = 0; step < n_gen; ++step) {
    les_token best = 0;
    for (int32_t v = 1; v < n_vocab; ++v) {
      if (last[v] > last[best]) best = v;
    }
    printf(" %d", best);
    if (les_context_decode(ctx, &best, 1) != LES_OK) return fail("decode");
    last = les_context_logits(ctx);
    h = fnv1a(h, last, row_bytes);
    n_values += (uint64_t)n_vocab;
  }
  printf("\nlogits: n_values %llu fnv1a64 %016llx\n", (unsigned long long)n_values, (unsigned long long)h);

  if (cp.expert_budget_bytes > 0 && les_model_n_expert(model) > 0) {
    les_stream_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = (uint32_t)sizeof s;
    if (les_context_stream_stats(ctx, &s) != LES_OK) return fail("stream stats");
    printf("stream: slots %d c %d tokens %llu mean_recall %.17g\n", s.n_slots, s.prefetch_candidates,
           (unsigned long long)s.tokens, s.mean_recall);
    printf("counters: reads %llu bytes %llu demand %llu prefetch %llu hits %llu inflight_hits %llu misses %llu "
           "prefetch_unused_bytes %llu read_errors %llu\n",
           (unsigned long long)s.reads_issued, (unsigned long long)s.bytes_read,
           (unsigned long long)s.demand_experts, (unsigned long long)s.prefetch_experts,
           (unsigned long long)s.cache_hits, (unsigned long long)s.inflight_hits,
           (unsigned long long)s.cache_misses, (unsigned long long)s.prefetch_unused_bytes,
           (unsigned long long)s.read_errors);
  }
  les_context_free(ctx);
  les_model_free(model);
  return 0;
}
