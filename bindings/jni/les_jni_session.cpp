// JNI natives of org.les.Native for a context as a conversation (les_session.h):
// the tokens it holds, and its state saved to / restored from a byte array or a
// file. Each is a thin call of the les.h function; errors become LesException.
#include <algorithm>
#include <string>
#include <vector>

#include "jni_util.h"

using les_jni::as_context;
using les_jni::from_bytes;
using les_jni::guarded;
using les_jni::throw_last_error;
using les_jni::throw_les;

namespace {

// The JVM's arrays are indexed by jsize (int32): larger states cannot cross.
constexpr size_t kMaxJavaArray = 0x7ffffff7u;

}  // namespace

extern "C" {

JNIEXPORT jintArray JNICALL Java_org_les_Native_contextTokens(JNIEnv* env, jclass, jlong h) {
  return guarded(env, jintArray{}, [&]() -> jintArray {
    const les_context* ctx = as_context(h);
    std::vector<les_token> ids(static_cast<size_t>(std::max(les_context_n_past(ctx), 1)));
    int32_t n = 0;
    les_status st = les_context_tokens(ctx, ids.data(), static_cast<int32_t>(ids.size()), &n);
    if (st == LES_ERR_INVALID_ARGUMENT && n > static_cast<int32_t>(ids.size())) {  // grew meanwhile: n is the count
      ids.resize(static_cast<size_t>(n));
      st = les_context_tokens(ctx, ids.data(), n, &n);
    }
    if (st != LES_OK) {
      throw_last_error(env, st, ctx);
      return nullptr;
    }
    jintArray out = env->NewIntArray(n);
    if (out != nullptr) env->SetIntArrayRegion(out, 0, n, ids.data());
    return out;
  });
}

JNIEXPORT jlong JNICALL Java_org_les_Native_contextStateSize(JNIEnv* env, jclass, jlong h) {
  size_t n = 0;
  const les_context* ctx = as_context(h);
  const les_status st = les_context_state_size(ctx, &n);
  if (st != LES_OK) {
    throw_last_error(env, st, ctx);
    return 0;
  }
  return static_cast<jlong>(n);
}

JNIEXPORT jbyteArray JNICALL Java_org_les_Native_contextStateSave(JNIEnv* env, jclass, jlong h) {
  return guarded(env, jbyteArray{}, [&]() -> jbyteArray {
    const les_context* ctx = as_context(h);
    size_t n = 0;
    les_status st = les_context_state_size(ctx, &n);
    if (st != LES_OK) {
      throw_last_error(env, st, ctx);
      return nullptr;
    }
    if (n > kMaxJavaArray) {
      throw_les(env, LES_ERR_OUT_OF_MEMORY,
                "the state is " + std::to_string(n) + " bytes, more than a Java array holds: use saveStateFile()");
      return nullptr;
    }
    std::vector<char> buf(n);
    st = les_context_state_save(ctx, buf.data(), buf.size(), &n);
    if (st != LES_OK) {
      throw_last_error(env, st, ctx);
      return nullptr;
    }
    return les_jni::to_bytes(env, std::string_view(buf.data(), n));
  });
}

JNIEXPORT void JNICALL Java_org_les_Native_contextStateLoad(JNIEnv* env, jclass, jlong h, jbyteArray state) {
  guarded(env, 0, [&] {
    auto bytes = from_bytes(env, state, "state");
    if (!bytes) return 0;
    les_context* ctx = as_context(h);
    const les_status st = les_context_state_load(ctx, bytes->data(), bytes->size());
    if (st != LES_OK) throw_last_error(env, st, ctx);
    return 0;
  });
}

JNIEXPORT void JNICALL Java_org_les_Native_contextStateSaveFile(JNIEnv* env, jclass, jlong h, jbyteArray path) {
  guarded(env, 0, [&] {
    auto p = from_bytes(env, path, "path");
    if (!p) return 0;
    const les_context* ctx = as_context(h);
    const les_status st = les_context_state_save_file(ctx, p->c_str());
    if (st != LES_OK) throw_last_error(env, st, ctx);
    return 0;
  });
}

JNIEXPORT void JNICALL Java_org_les_Native_contextStateLoadFile(JNIEnv* env, jclass, jlong h, jbyteArray path) {
  guarded(env, 0, [&] {
    auto p = from_bytes(env, path, "path");
    if (!p) return 0;
    les_context* ctx = as_context(h);
    const les_status st = les_context_state_load_file(ctx, p->c_str());
    if (st != LES_OK) throw_last_error(env, st, ctx);
    return 0;
  });
}

}  // extern "C"
