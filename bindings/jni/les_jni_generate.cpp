// JNI natives of org.les.Native for sampling defaults, the streaming
// les_generate() / les_generate_with_images() call (each token goes to a Java
// TokenListener through Native.deliver) and the statistics of the last generation.
#include <string>
#include <vector>

#include "jni_util.h"

using les_jni::as_context;
using les_jni::from_bytes;
using les_jni::guarded;
using les_jni::refs;
using les_jni::throw_last_error;
using les_jni::throw_les;
using les_jni::to_bytes;

namespace {

// GenerateParams.ints(): n_predict, ignore_eos, top_k, penalty_last_n,
// lookup_ngram, draft_max, draft_min, parse_special, mtp.
constexpr jsize kInts = 9;
// Native.generateStats' array (Native.java lists the fields).
constexpr jsize kStats = 18;

// What les_generate's callback needs; lives on the generate() call's stack.
// The callback runs on the thread that called les_generate (the JNI thread).
struct Listener {
  JNIEnv* env;
  jobject listener;  // org.les.TokenListener (local ref of the native call)
  bool stopped = false;  // the listener returned false
};

bool on_token(les_token token, const char* piece, size_t len, void* user_data) {
  auto* l = static_cast<Listener*>(user_data);
  JNIEnv* env = l->env;
  if (env->ExceptionCheck()) return false;
  jbyteArray bytes = to_bytes(env, std::string_view(piece, len));
  if (bytes == nullptr) return false;  // OutOfMemoryError pending: stop
  const jboolean go = env->CallStaticBooleanMethod(refs().native_class, refs().deliver, l->listener, token, bytes);
  env->DeleteLocalRef(bytes);
  if (env->ExceptionCheck()) return false;  // the listener threw: stop, let it propagate
  if (go != JNI_TRUE) l->stopped = true;
  return go == JNI_TRUE;
}

// les_context_generate_stats into s; false with a LesException pending on error.
bool last_stats(JNIEnv* env, jlong h, les_generate_stats& s) {
  s.struct_size = sizeof s;
  const les_status st = les_context_generate_stats(as_context(h), &s);
  if (st != LES_OK) throw_last_error(env, st);
  return st == LES_OK;
}

}  // namespace

extern "C" {

JNIEXPORT void JNICALL Java_org_les_Native_generateDefaults(JNIEnv* env, jclass, jintArray ints, jfloatArray floats,
                                                            jlongArray seed) {
  if (ints == nullptr || floats == nullptr || seed == nullptr || env->GetArrayLength(ints) < kInts ||
      env->GetArrayLength(floats) < 6 || env->GetArrayLength(seed) < 1) {
    throw_les(env, LES_ERR_INVALID_ARGUMENT, "generateDefaults: arrays of 9 ints, 6 floats and 1 long expected");
    return;
  }
  const les_generate_params p = les_generate_default_params();
  const jint iv[kInts] = {p.n_predict,    p.ignore_eos ? 1 : 0, p.sampler.top_k, p.sampler.penalty_last_n,
                          p.lookup_ngram, p.draft_max,          p.draft_min,     p.parse_special ? 1 : 0,
                          p.mtp ? 1 : 0};
  const jfloat fv[6] = {p.sampler.temperature,      p.sampler.top_p,
                        p.sampler.min_p,            p.sampler.repeat_penalty,
                        p.sampler.presence_penalty, p.sampler.frequency_penalty};
  const jlong sv = static_cast<jlong>(p.sampler.seed);
  env->SetIntArrayRegion(ints, 0, kInts, iv);
  env->SetFloatArrayRegion(floats, 0, 6, fv);
  env->SetLongArrayRegion(seed, 0, 1, &sv);
}

JNIEXPORT void JNICALL Java_org_les_Native_generate(JNIEnv* env, jclass, jlong h, jbyteArray prompt, jintArray ints,
                                                    jfloatArray floats, jlong seed, jobjectArray stop,
                                                    jlong draft_model, jintArray prompt_tokens,
                                                    jlongArray images, jobject listener) {
  guarded(env, 0, [&] {
    // prompt_tokens non-null: the prompt is these ids and `prompt` is ignored.
    std::optional<std::string> text = std::string();
    std::vector<les_token> ids;
    if (prompt_tokens != nullptr) {
      ids.resize(static_cast<size_t>(env->GetArrayLength(prompt_tokens)));
      env->GetIntArrayRegion(prompt_tokens, 0, static_cast<jsize>(ids.size()), ids.data());
    } else {
      text = from_bytes(env, prompt, "prompt");
      if (!text) return 0;
    }
    if (ints == nullptr || floats == nullptr || env->GetArrayLength(ints) < kInts ||
        env->GetArrayLength(floats) < 6) {
      throw_les(env, LES_ERR_INVALID_ARGUMENT, "generate: arrays of 9 ints and 6 floats expected");
      return 0;
    }
    jint iv[kInts];
    jfloat fv[6];
    env->GetIntArrayRegion(ints, 0, kInts, iv);
    env->GetFloatArrayRegion(floats, 0, 6, fv);
    les_generate_params p = les_generate_default_params();
    p.n_predict = iv[0];
    p.ignore_eos = iv[1] != 0;
    p.sampler.top_k = iv[2];
    p.sampler.penalty_last_n = iv[3];
    p.sampler.temperature = fv[0];
    p.sampler.top_p = fv[1];
    p.sampler.min_p = fv[2];
    p.sampler.repeat_penalty = fv[3];
    p.sampler.presence_penalty = fv[4];
    p.sampler.frequency_penalty = fv[5];
    p.sampler.seed = static_cast<uint64_t>(seed);
    p.lookup_ngram = iv[4];
    p.draft_max = iv[5];
    p.draft_min = iv[6];
    p.draft_model = draft_model != 0 ? les_jni::as_model(draft_model) : nullptr;
    p.parse_special = iv[7] != 0;
    p.mtp = iv[8] != 0;
    if (prompt_tokens != nullptr) {
      p.prompt_tokens = ids.data();
      p.n_prompt_tokens = static_cast<int32_t>(ids.size());
    } else {
      // The text with its length: a Java string may hold U+0000 (a NUL byte in UTF-8).
      p.prompt_text = text->data();
      p.prompt_text_len = text->size();
    }

    std::vector<std::string> stops;
    std::vector<const char*> stop_ptrs;
    if (stop != nullptr) {
      const jsize n = env->GetArrayLength(stop);
      for (jsize i = 0; i < n; ++i) {
        auto element = static_cast<jbyteArray>(env->GetObjectArrayElement(stop, i));
        auto s = from_bytes(env, element, "stop string");
        env->DeleteLocalRef(element);
        if (!s) return 0;
        stops.push_back(std::move(*s));
      }
      for (const std::string& s : stops) stop_ptrs.push_back(s.c_str());
      p.stop = stop_ptrs.data();
      p.n_stop = static_cast<int32_t>(stop_ptrs.size());
    }

    // images non-null: les_generate_with_images, images[i] (les_image* handles) at the i-th marker.
    std::vector<const les_image*> imgs;
    if (images != nullptr) {
      std::vector<jlong> hs(static_cast<size_t>(env->GetArrayLength(images)));
      env->GetLongArrayRegion(images, 0, static_cast<jsize>(hs.size()), hs.data());
      for (jlong ih : hs) imgs.push_back(reinterpret_cast<const les_image*>(static_cast<intptr_t>(ih)));
    }

    les_context* ctx = as_context(h);
    Listener l{env, listener};
    const les_token_callback cb = listener != nullptr ? on_token : nullptr;
    les_status st = images != nullptr
                        ? les_generate_with_images(ctx, nullptr, imgs.data(), static_cast<int32_t>(imgs.size()), &p,
                                                   cb, &l)
                        : les_generate(ctx, nullptr, &p, cb, &l);
    if (env->ExceptionCheck()) return 0;  // the listener's exception propagates as is
    // TokenListener: returning false ends generate() normally (les_generate
    // reports it as LES_ERR_CANCELLED).
    if (st == LES_ERR_CANCELLED && l.stopped) return 0;
    if (st != LES_OK) throw_last_error(env, st, ctx);
    return 0;
  });
}

JNIEXPORT jdoubleArray JNICALL Java_org_les_Native_generateStats(JNIEnv* env, jclass, jlong h) {
  les_generate_stats s{};
  if (!last_stats(env, h, s)) return nullptr;
  const jdouble v[kStats] = {static_cast<jdouble>(s.n_prompt_tokens),
                        static_cast<jdouble>(s.n_generated),
                        s.prefill_seconds,
                        s.decode_seconds,
                        s.prefill_tokens_per_second,
                        s.decode_tokens_per_second,
                        static_cast<jdouble>(s.n_decoded),
                        static_cast<jdouble>(s.stop_reason),
                        static_cast<jdouble>(s.n_target_passes),
                        static_cast<jdouble>(s.n_verify_passes),
                        static_cast<jdouble>(s.n_drafted),
                        static_cast<jdouble>(s.n_draft_verified),
                        static_cast<jdouble>(s.n_draft_accepted),
                        static_cast<jdouble>(s.n_pass_tokens),
                        static_cast<jdouble>(s.union_experts),
                        static_cast<jdouble>(s.union_bytes),  // exact below 2^53 bytes
                        static_cast<jdouble>(s.expert_bytes_read),
                        s.draft_seconds};
  jdoubleArray out = env->NewDoubleArray(kStats);
  if (out != nullptr) env->SetDoubleArrayRegion(out, 0, kStats, v);
  return out;
}

// les_generate_stats.seed (a uint64 that a double of generateStats would round).
JNIEXPORT jlong JNICALL Java_org_les_Native_generateSeed(JNIEnv* env, jclass, jlong h) {
  les_generate_stats s{};
  return last_stats(env, h, s) ? static_cast<jlong>(s.seed) : 0;
}

JNIEXPORT jbyteArray JNICALL Java_org_les_Native_stopReasonName(JNIEnv* env, jclass, jint reason) {
  return to_bytes(env, les_stop_reason_name(static_cast<les_stop_reason>(reason)));
}

}  // extern "C"
