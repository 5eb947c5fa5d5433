// JNI natives of org.les.Native for a sampler on its own (les_sampler.h), for
// apps that drive decode() themselves. Each is a thin call of the les.h function.
#include <vector>

#include "jni_util.h"

using les_jni::as_jlong;
using les_jni::guarded;
using les_jni::throw_last_error;
using les_jni::throw_les;

namespace {
les_sampler* as_sampler(jlong h) { return reinterpret_cast<les_sampler*>(static_cast<intptr_t>(h)); }
}  // namespace

extern "C" {

// floats: temperature, top_p, min_p, repeat_penalty, presence_penalty,
// frequency_penalty (GenerateParams.floats()); ints: top_k, penalty_last_n.
JNIEXPORT jlong JNICALL Java_org_les_Native_samplerCreate(JNIEnv* env, jclass, jfloatArray floats, jint top_k,
                                                          jint penalty_last_n, jlong seed) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    if (floats == nullptr || env->GetArrayLength(floats) < 6) {
      throw_les(env, LES_ERR_INVALID_ARGUMENT, "samplerCreate: an array of 6 floats expected");
      return 0;
    }
    jfloat fv[6];
    env->GetFloatArrayRegion(floats, 0, 6, fv);
    les_sampler_params p = les_sampler_default_params();
    p.temperature = fv[0];
    p.top_p = fv[1];
    p.min_p = fv[2];
    p.repeat_penalty = fv[3];
    p.presence_penalty = fv[4];
    p.frequency_penalty = fv[5];
    p.top_k = top_k;
    p.penalty_last_n = penalty_last_n;
    p.seed = static_cast<uint64_t>(seed);
    les_sampler* s = nullptr;
    const les_status st = les_sampler_create(&p, &s);
    if (st != LES_OK) {
      throw_last_error(env, st);
      return 0;
    }
    return as_jlong(s);
  });
}

JNIEXPORT void JNICALL Java_org_les_Native_samplerFree(JNIEnv*, jclass, jlong h) { les_sampler_free(as_sampler(h)); }

JNIEXPORT jint JNICALL Java_org_les_Native_samplerSample(JNIEnv* env, jclass, jlong h, jfloatArray logits) {
  return guarded(env, jint{-1}, [&]() -> jint {
    if (logits == nullptr) {
      throw_les(env, LES_ERR_INVALID_ARGUMENT, "logits is null");
      return -1;
    }
    std::vector<float> v(static_cast<size_t>(env->GetArrayLength(logits)));
    env->GetFloatArrayRegion(logits, 0, static_cast<jsize>(v.size()), v.data());
    les_token tok = -1;
    const les_status st = les_sampler_sample(as_sampler(h), v.data(), static_cast<int32_t>(v.size()), &tok);
    if (st != LES_OK) {
      throw_last_error(env, st);
      return -1;
    }
    return tok;
  });
}

JNIEXPORT void JNICALL Java_org_les_Native_samplerAccept(JNIEnv* env, jclass, jlong h, jint token) {
  const les_status st = les_sampler_accept(as_sampler(h), token);
  if (st != LES_OK) throw_last_error(env, st);
}

JNIEXPORT void JNICALL Java_org_les_Native_samplerReset(JNIEnv*, jclass, jlong h) { les_sampler_reset(as_sampler(h)); }

JNIEXPORT jlong JNICALL Java_org_les_Native_samplerSeed(JNIEnv*, jclass, jlong h) {
  return static_cast<jlong>(les_sampler_seed(as_sampler(h)));
}

}  // extern "C"
