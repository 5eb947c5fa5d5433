// JNI shim helpers (see jni_util.h) and JNI_OnLoad, which resolves the Java
// classes the shim calls back into.
#include "jni_util.h"

#include <cstring>

namespace les_jni {
namespace {
JavaRefs g_refs;  // written once by JNI_OnLoad before any native method can run

jclass global_class(JNIEnv* env, const char* name) {
  jclass local = env->FindClass(name);
  if (local == nullptr) return nullptr;
  auto global = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  return global;
}
}  // namespace

const JavaRefs& refs() { return g_refs; }

jbyteArray to_bytes(JNIEnv* env, std::string_view bytes) {
  jbyteArray array = env->NewByteArray(static_cast<jsize>(bytes.size()));
  if (array == nullptr) return nullptr;
  env->SetByteArrayRegion(array, 0, static_cast<jsize>(bytes.size()), reinterpret_cast<const jbyte*>(bytes.data()));
  return array;
}

std::optional<std::string> from_bytes(JNIEnv* env, jbyteArray array, const char* what) {
  if (array == nullptr) {
    throw_les(env, LES_ERR_INVALID_ARGUMENT, std::string(what) + " is null");
    return std::nullopt;
  }
  std::string out(static_cast<size_t>(env->GetArrayLength(array)), '\0');
  env->GetByteArrayRegion(array, 0, static_cast<jsize>(out.size()), reinterpret_cast<jbyte*>(out.data()));
  return out;
}

void throw_les(JNIEnv* env, les_status status, std::string_view message) {
  if (env->ExceptionCheck()) return;
  jbyteArray msg = to_bytes(env, message);
  if (msg == nullptr) return;  // OutOfMemoryError pending
  auto ex = static_cast<jthrowable>(
      env->NewObject(g_refs.exception_class, g_refs.exception_ctor, static_cast<jint>(status), msg));
  env->DeleteLocalRef(msg);
  if (ex == nullptr) return;  // the constructor's exception is pending
  env->Throw(ex);
  env->DeleteLocalRef(ex);
}

void throw_last_error(JNIEnv* env, les_status status, const les_context* ctx) {
  const char* msg = les_last_error();
  if ((msg == nullptr || *msg == '\0') && ctx != nullptr) msg = les_context_last_error(ctx);
  if (msg == nullptr || *msg == '\0') msg = les_status_name(status);
  throw_les(env, status, msg);
}

}  // namespace les_jni

extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* /*reserved*/) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  les_jni::JavaRefs r;
  r.exception_class = les_jni::global_class(env, "org/les/LesException");
  if (r.exception_class == nullptr) return JNI_ERR;
  r.exception_ctor = env->GetMethodID(r.exception_class, "<init>", "(I[B)V");
  r.native_class = les_jni::global_class(env, "org/les/Native");
  if (r.exception_ctor == nullptr || r.native_class == nullptr) return JNI_ERR;
  r.deliver = env->GetStaticMethodID(r.native_class, "deliver", "(Lorg/les/TokenListener;I[B)Z");
  if (r.deliver == nullptr) return JNI_ERR;
  les_jni::g_refs = r;
  return JNI_VERSION_1_6;
}
