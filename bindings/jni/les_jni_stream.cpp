// JNI natives of org.les.Native for expert streaming at run time (les_stream.h:
// set the budget, streaming totals, per-layer figures) and the memory plan of a
// context (les_context.h). les.h allows these from any thread at any time; the
// Java side guards the handle with NativeHandle.acquireShared().
#include "jni_util.h"

using les_jni::as_context;
using les_jni::guarded;
using les_jni::throw_last_error;
using les_jni::throw_les;

namespace {

// Native.streamStats' arrays (StreamStats lists the fields in this order).
constexpr jsize kStreamInts = 14;
constexpr jsize kStreamReals = 5;
constexpr jsize kLayerInts = 3;
constexpr jsize kLayerReals = 2;
constexpr jsize kPlanInts = 12;

bool sized(JNIEnv* env, jlongArray ints, jsize n_ints, jdoubleArray reals, jsize n_reals, const char* what) {
  if (ints == nullptr || env->GetArrayLength(ints) < n_ints ||
      (n_reals > 0 && (reals == nullptr || env->GetArrayLength(reals) < n_reals))) {
    throw_les(env, LES_ERR_INVALID_ARGUMENT, what);
    return false;
  }
  return true;
}

jlong as_long(uint64_t v) { return static_cast<jlong>(v); }  // byte counts stay below 2^63

}  // namespace

extern "C" {

JNIEXPORT void JNICALL Java_org_les_Native_contextSetExpertBudget(JNIEnv* env, jclass, jlong h, jlong bytes) {
  guarded(env, 0, [&] {
    if (bytes <= 0) {
      throw_les(env, LES_ERR_INVALID_ARGUMENT, "expert budget must be greater than 0 bytes");
      return 0;
    }
    les_context* ctx = as_context(h);
    const les_status st = les_context_set_expert_budget(ctx, static_cast<uint64_t>(bytes));
    if (st != LES_OK) throw_last_error(env, st, ctx);
    return 0;
  });
}

JNIEXPORT void JNICALL Java_org_les_Native_contextStreamStats(JNIEnv* env, jclass, jlong h, jlongArray ints,
                                                              jdoubleArray reals) {
  if (!sized(env, ints, kStreamInts, reals, kStreamReals, "streamStats: arrays of 14 longs and 5 doubles expected")) {
    return;
  }
  les_stream_stats s{};
  s.struct_size = sizeof s;
  const les_context* ctx = as_context(h);
  const les_status st = les_context_stream_stats(ctx, &s);
  if (st != LES_OK) {
    throw_last_error(env, st, ctx);
    return;
  }
  const jlong iv[kStreamInts] = {as_long(s.budget_bytes),     s.n_slots,
                                 s.prefetch_candidates,       as_long(s.tokens),
                                 as_long(s.bytes_read),       as_long(s.reads_issued),
                                 as_long(s.demand_experts),   as_long(s.prefetch_experts),
                                 as_long(s.cache_hits),       as_long(s.inflight_hits),
                                 as_long(s.cache_misses),     as_long(s.prefetch_unused_bytes),
                                 as_long(s.read_errors),      as_long(s.one_token_budget_bytes)};
  const jdouble rv[kStreamReals] = {s.hit_rate, s.mean_recall, s.io_wait_seconds, s.io_idle_seconds, s.wall_seconds};
  env->SetLongArrayRegion(ints, 0, kStreamInts, iv);
  env->SetDoubleArrayRegion(reals, 0, kStreamReals, rv);
}

JNIEXPORT void JNICALL Java_org_les_Native_contextStreamLayerStats(JNIEnv* env, jclass, jlong h, jint layer,
                                                                   jlongArray ints, jdoubleArray reals) {
  if (!sized(env, ints, kLayerInts, reals, kLayerReals, "streamLayerStats: arrays of 3 longs and 2 doubles expected")) {
    return;
  }
  les_stream_layer_stats s{};
  s.struct_size = sizeof s;
  const les_context* ctx = as_context(h);
  const les_status st = les_context_stream_layer_stats(ctx, layer, &s);
  if (st != LES_OK) {
    throw_last_error(env, st, ctx);
    return;
  }
  const jlong iv[kLayerInts] = {as_long(s.cache_hits), as_long(s.inflight_hits), as_long(s.cache_misses)};
  const jdouble rv[kLayerReals] = {s.recall, s.precision};
  env->SetLongArrayRegion(ints, 0, kLayerInts, iv);
  env->SetDoubleArrayRegion(reals, 0, kLayerReals, rv);
}

JNIEXPORT void JNICALL Java_org_les_Native_contextMemoryPlan(JNIEnv* env, jclass, jlong h, jlongArray ints) {
  if (!sized(env, ints, kPlanInts, nullptr, 0, "memoryPlan: an array of 12 longs expected")) return;
  les_memory_plan m{};
  m.struct_size = sizeof m;
  const les_context* ctx = as_context(h);
  const les_status st = les_context_memory_plan(ctx, &m);
  if (st != LES_OK) {
    throw_last_error(env, st, ctx);
    return;
  }
  const jlong iv[kPlanInts] = {as_long(m.limit_bytes),       as_long(m.baseline_bytes),     as_long(m.dense_bytes),
                               as_long(m.kv_bytes),          as_long(m.scratch_bytes),      as_long(m.routed_bytes),
                               as_long(m.min_expert_bytes),  as_long(m.expert_budget_bytes), m.resident,
                               m.n_ctx,                      as_long(m.draft_bytes),        as_long(m.vision_bytes)};
  env->SetLongArrayRegion(ints, 0, kPlanInts, iv);
}

}  // extern "C"
