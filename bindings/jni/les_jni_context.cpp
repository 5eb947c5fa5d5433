// JNI natives of org.les.Native for contexts: creation, decode (last or all
// logits), logits, KV cache reset/trim and cancel; each a thin call of the les.h function of that name.
// Creation takes the handles of les_context_params.draft_model and .vision as longs (0 = none); the
// Java side (LesContext) keeps them open for the call.
#include <cstdint>
#include <vector>

#include "jni_util.h"

using les_jni::as_context;
using les_jni::as_jlong;
using les_jni::as_model;
using les_jni::as_vision;
using les_jni::guarded;
using les_jni::throw_last_error;
using les_jni::throw_les;

extern "C" {

// The defaults of les_context_params in field order (ContextParams reads them by index).
JNIEXPORT jlongArray JNICALL Java_org_les_Native_contextDefaults(JNIEnv* env, jclass) {
  const les_context_params p = les_context_default_params();
  const jlong values[9] = {p.n_ctx,
                           p.n_batch,
                           p.n_threads,
                           static_cast<jlong>(p.kv_type),
                           static_cast<jlong>(p.expert_budget_bytes),
                           p.prefetch_candidates,
                           static_cast<jlong>(p.io_backend),
                           static_cast<jlong>(p.eviction),
                           static_cast<jlong>(p.memory_limit_bytes)};
  jlongArray out = env->NewLongArray(9);
  if (out != nullptr) env->SetLongArrayRegion(out, 0, 9, values);
  return out;
}

JNIEXPORT jlong JNICALL Java_org_les_Native_contextCreate(JNIEnv* env, jclass, jlong model, jint n_ctx,
                                                          jint n_batch, jint n_threads, jint kv_type,
                                                          jlong expert_budget_bytes, jint prefetch_candidates,
                                                          jint io_backend, jint eviction,
                                                          jlong memory_limit_bytes, jlong draft_model,
                                                          jlong vision) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    if (expert_budget_bytes < 0) {
      throw_les(env, LES_ERR_INVALID_ARGUMENT, "expertBudgetBytes is negative");
      return 0;
    }
    if (memory_limit_bytes < 0) {
      throw_les(env, LES_ERR_INVALID_ARGUMENT, "memoryLimitBytes is negative");
      return 0;
    }
    les_context_params p = les_context_default_params();
    p.n_ctx = n_ctx;
    p.n_batch = n_batch;
    p.n_threads = n_threads;
    // Enum values go through as integers: les_context_create refuses one outside its enum.
    p.kv_type = static_cast<les_kv_type>(kv_type);
    p.expert_budget_bytes = static_cast<uint64_t>(expert_budget_bytes);
    p.prefetch_candidates = prefetch_candidates;
    p.io_backend = static_cast<les_io_backend>(io_backend);
    p.eviction = static_cast<les_eviction_policy>(eviction);
    p.memory_limit_bytes = static_cast<uint64_t>(memory_limit_bytes);
    // Borrowed for the call (counted in the memory limit); p.struct_size is this header's size.
    p.draft_model = draft_model != 0 ? as_model(draft_model) : nullptr;
    p.vision = vision != 0 ? as_vision(vision) : nullptr;
    les_context* ctx = nullptr;
    les_status st = les_context_create(as_model(model), &p, &ctx);
    if (st != LES_OK) {
      throw_last_error(env, st);
      return 0;
    }
    return as_jlong(ctx);
  });
}

JNIEXPORT void JNICALL Java_org_les_Native_contextFree(JNIEnv*, jclass, jlong ctx) { les_context_free(as_context(ctx)); }

JNIEXPORT void JNICALL Java_org_les_Native_contextDecode(JNIEnv* env, jclass, jlong h, jintArray tokens,
                                                         jboolean all_logits) {
  guarded(env, 0, [&] {
    if (tokens == nullptr) {
      throw_les(env, LES_ERR_INVALID_ARGUMENT, "tokens is null");
      return 0;
    }
    std::vector<les_token> ids(static_cast<size_t>(env->GetArrayLength(tokens)));
    env->GetIntArrayRegion(tokens, 0, static_cast<jsize>(ids.size()), ids.data());
    les_context* ctx = as_context(h);
    const auto n = static_cast<int32_t>(ids.size());
    les_status st = all_logits == JNI_TRUE ? les_context_decode_all_logits(ctx, ids.data(), n)
                                           : les_context_decode(ctx, ids.data(), n);
    if (st != LES_OK) throw_last_error(env, st, ctx);
    return 0;
  });
}

// i: a token of the last decode (les_context_logits_ith), or INT32_MIN for les_context_logits().
JNIEXPORT jfloatArray JNICALL Java_org_les_Native_contextLogits(JNIEnv* env, jclass, jlong h, jint n_vocab, jint i) {
  const float* logits = i == INT32_MIN ? les_context_logits(as_context(h)) : les_context_logits_ith(as_context(h), i);
  if (logits == nullptr || n_vocab <= 0) return nullptr;
  jfloatArray out = env->NewFloatArray(n_vocab);
  if (out != nullptr) env->SetFloatArrayRegion(out, 0, n_vocab, logits);
  return out;
}

JNIEXPORT jint JNICALL Java_org_les_Native_contextNPast(JNIEnv*, jclass, jlong h) {
  return les_context_n_past(as_context(h));
}

JNIEXPORT jint JNICALL Java_org_les_Native_contextNCtx(JNIEnv*, jclass, jlong h) {
  return les_context_n_ctx(as_context(h));
}

JNIEXPORT void JNICALL Java_org_les_Native_contextReset(JNIEnv* env, jclass, jlong h) {
  les_context* ctx = as_context(h);
  les_status st = les_context_reset(ctx);
  if (st != LES_OK) throw_last_error(env, st, ctx);
}

JNIEXPORT void JNICALL Java_org_les_Native_contextTrim(JNIEnv* env, jclass, jlong h, jint n_keep) {
  les_context* ctx = as_context(h);
  les_status st = les_context_trim(ctx, n_keep);
  if (st != LES_OK) throw_last_error(env, st, ctx);
}

JNIEXPORT void JNICALL Java_org_les_Native_contextCancel(JNIEnv*, jclass, jlong h) {
  les_context_cancel(as_context(h));
}

}  // extern "C"
