// JNI natives of org.les.Native for models and tokens: each is a thin call of
// the les.h function of the same name; errors become LesException.
#include <string>
#include <vector>

#include "jni_util.h"

using les_jni::as_jlong;
using les_jni::as_model;
using les_jni::from_bytes;
using les_jni::guarded;
using les_jni::throw_last_error;
using les_jni::throw_les;
using les_jni::to_bytes;

namespace {

// les_token_to_piece into a growing buffer; false with a LesException pending on error.
bool append_piece(JNIEnv* env, const les_model* model, les_token token, std::string& out) {
  char buf[64];
  size_t n = 0;
  les_status st = les_token_to_piece(model, token, buf, sizeof buf, &n);
  if (st == LES_OK) {
    out.append(buf, n);
    return true;
  }
  if (st == LES_ERR_INVALID_ARGUMENT && n > sizeof buf) {  // buffer too small: n is the size needed
    std::string big(n, '\0');
    st = les_token_to_piece(model, token, big.data(), big.size(), &n);
    if (st == LES_OK) {
      out.append(big.data(), n);
      return true;
    }
  }
  throw_last_error(env, st);
  return false;
}

}  // namespace

extern "C" {

JNIEXPORT jbyteArray JNICALL Java_org_les_Native_version(JNIEnv* env, jclass) {
  return guarded(env, jbyteArray{}, [&] { return to_bytes(env, les_version()); });
}

JNIEXPORT jlong JNICALL Java_org_les_Native_modelLoad(JNIEnv* env, jclass, jbyteArray path, jint n_threads,
                                                       jint weights, jboolean lock_weights, jint log_level) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    auto p = from_bytes(env, path, "path");
    if (!p) return 0;
    if (log_level < LES_LOG_DEBUG || log_level > LES_LOG_ERROR) {
      throw_les(env, LES_ERR_INVALID_ARGUMENT, "logLevel " + std::to_string(log_level) + " is not a LOG_* level (0..3)");
      return 0;
    }
    les_model_params mp = les_model_default_params();
    mp.n_threads = n_threads;
    // An integer outside les_weight_memory is refused by les_model_load, naming the field.
    mp.weights = static_cast<les_weight_memory>(weights);
    mp.lock_weights = lock_weights == JNI_TRUE;
    mp.log_level = static_cast<les_log_level>(log_level);
    les_model* model = nullptr;
    les_status st = les_model_load(p->c_str(), &mp, &model);
    if (st != LES_OK) {
      throw_last_error(env, st);
      return 0;
    }
    return as_jlong(model);
  });
}

JNIEXPORT void JNICALL Java_org_les_Native_modelFree(JNIEnv*, jclass, jlong model) { les_model_free(as_model(model)); }

JNIEXPORT jint JNICALL Java_org_les_Native_modelInfo(JNIEnv* env, jclass, jlong h, jint which) {
  const les_model* m = as_model(h);
  switch (which) {
    case 0: return les_model_n_vocab(m);
    case 1: return les_model_n_embd(m);
    case 2: return les_model_n_layer(m);
    case 3: return les_model_n_head(m);
    case 4: return les_model_n_head_kv(m);
    case 5: return les_model_n_expert(m);
    case 6: return les_model_n_expert_used(m);
    case 7: return les_model_n_ctx_train(m);
    case 8: return les_token_bos(m);
    case 9: return les_token_eos(m);
    default: throw_les(env, LES_ERR_INVALID_ARGUMENT, "modelInfo: unknown field " + std::to_string(which)); return 0;
  }
}

JNIEXPORT jbyteArray JNICALL Java_org_les_Native_modelDesc(JNIEnv* env, jclass, jlong h) {
  return guarded(env, jbyteArray{}, [&]() -> jbyteArray {
    const les_model* m = as_model(h);
    const int32_t n = les_model_desc(m, nullptr, 0);
    if (n < 0) {
      throw_les(env, LES_ERR_INVALID_ARGUMENT, "les_model_desc: model is NULL");
      return nullptr;
    }
    std::string buf(static_cast<size_t>(n) + 1, '\0');
    les_model_desc(m, buf.data(), buf.size());
    buf.resize(static_cast<size_t>(n));
    return to_bytes(env, buf);
  });
}

JNIEXPORT jbyteArray JNICALL Java_org_les_Native_modelMeta(JNIEnv* env, jclass, jlong h, jbyteArray key) {
  return guarded(env, jbyteArray{}, [&]() -> jbyteArray {
    auto k = from_bytes(env, key, "key");
    if (!k) return nullptr;
    const les_model* m = as_model(h);
    const int32_t n = les_model_meta_str(m, k->c_str(), nullptr, 0);
    if (n < 0) return nullptr;  // absent key
    std::string buf(static_cast<size_t>(n) + 1, '\0');
    les_model_meta_str(m, k->c_str(), buf.data(), buf.size());
    buf.resize(static_cast<size_t>(n));
    return to_bytes(env, buf);
  });
}

JNIEXPORT jintArray JNICALL Java_org_les_Native_tokenize(JNIEnv* env, jclass, jlong h, jbyteArray text,
                                                         jboolean add_special, jboolean parse_special) {
  return guarded(env, jintArray{}, [&]() -> jintArray {
    auto t = from_bytes(env, text, "text");
    if (!t) return nullptr;
    std::vector<les_token> tokens(t->size() + 8);
    int32_t n = 0;
    les_status st = les_tokenize(as_model(h), t->data(), t->size(), add_special, parse_special, tokens.data(),
                                 static_cast<int32_t>(tokens.size()), &n);
    if (st == LES_ERR_INVALID_ARGUMENT && n > static_cast<int32_t>(tokens.size())) {  // too small: retry
      tokens.resize(static_cast<size_t>(n));
      st = les_tokenize(as_model(h), t->data(), t->size(), add_special, parse_special, tokens.data(), n, &n);
    }
    if (st != LES_OK) {
      throw_last_error(env, st);
      return nullptr;
    }
    jintArray out = env->NewIntArray(n);
    if (out != nullptr) env->SetIntArrayRegion(out, 0, n, tokens.data());
    return out;
  });
}

JNIEXPORT jbyteArray JNICALL Java_org_les_Native_tokenBytes(JNIEnv* env, jclass, jlong h, jint token) {
  return guarded(env, jbyteArray{}, [&]() -> jbyteArray {
    std::string piece;
    if (!append_piece(env, as_model(h), token, piece)) return nullptr;
    return to_bytes(env, piece);
  });
}

JNIEXPORT jbyteArray JNICALL Java_org_les_Native_detokenize(JNIEnv* env, jclass, jlong h, jintArray tokens) {
  return guarded(env, jbyteArray{}, [&]() -> jbyteArray {
    if (tokens == nullptr) {
      throw_les(env, LES_ERR_INVALID_ARGUMENT, "tokens is null");
      return nullptr;
    }
    std::vector<jint> ids(static_cast<size_t>(env->GetArrayLength(tokens)));
    env->GetIntArrayRegion(tokens, 0, static_cast<jsize>(ids.size()), ids.data());
    std::string text;
    for (jint id : ids)
      if (!append_piece(env, as_model(h), id, text)) return nullptr;
    return to_bytes(env, text);
  });
}

}  // extern "C"
