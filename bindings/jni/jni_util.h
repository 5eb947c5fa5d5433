// Helpers shared by the JNI shim (libles_jni): throwing org.les.LesException with
// les.h's error messages, UTF-8 byte arrays in and out, handle casts, and the
// guard that keeps C++ exceptions from crossing into the JVM. Uses only les.h.
#pragma once

#include <jni.h>

#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "les/les.h"

namespace les_jni {

// Class and method ids resolved once in JNI_OnLoad (immutable afterwards).
struct JavaRefs {
  jclass exception_class = nullptr;  // org.les.LesException (global ref)
  jmethodID exception_ctor = nullptr; // LesException(int, byte[])
  jclass native_class = nullptr;      // org.les.Native (global ref)
  jmethodID deliver = nullptr;        // static boolean deliver(TokenListener, int, byte[])
};
const JavaRefs& refs();

// Throws LesException(status, message) unless a Java exception is already pending.
void throw_les(JNIEnv* env, les_status status, std::string_view message);

// Throws LesException(status, les_last_error()), falling back to the context's
// last error (ctx may be null) and then to the status name.
void throw_last_error(JNIEnv* env, les_status status, const les_context* ctx = nullptr);

// A new byte[] holding `bytes` (null with OutOfMemoryError pending on failure).
jbyteArray to_bytes(JNIEnv* env, std::string_view bytes);

// The contents of a byte[]; null array -> LesException(INVALID_ARGUMENT, "<what> is null").
std::optional<std::string> from_bytes(JNIEnv* env, jbyteArray array, const char* what);

inline les_model* as_model(jlong h) { return reinterpret_cast<les_model*>(static_cast<intptr_t>(h)); }
inline les_context* as_context(jlong h) { return reinterpret_cast<les_context*>(static_cast<intptr_t>(h)); }
inline les_vision* as_vision(jlong h) { return reinterpret_cast<les_vision*>(static_cast<intptr_t>(h)); }
inline les_image* as_image(jlong h) { return reinterpret_cast<les_image*>(static_cast<intptr_t>(h)); }
inline jlong as_jlong(const void* p) { return static_cast<jlong>(reinterpret_cast<intptr_t>(p)); }

// Runs fn() and returns its value; a C++ exception escaping it becomes a
// LesException (OUT_OF_MEMORY / INTERNAL) and `fallback` is returned.
template <typename R, typename Fn>
R guarded(JNIEnv* env, R fallback, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    throw_les(env, LES_ERR_OUT_OF_MEMORY, "out of memory in the JNI shim");
  } catch (...) {
    throw_les(env, LES_ERR_INTERNAL, "unexpected C++ exception in the JNI shim");
  }
  return fallback;
}

}  // namespace les_jni
