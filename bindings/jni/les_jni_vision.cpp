// JNI natives of org.les.Native for image input (les_vision.h): loading and
// freeing a vision encoder, encoding an image from RGB bytes, a file or
// encoded bytes in memory, the image's positions, appending an image to a
// context and the encoder's statistics. Each is a thin call of the les.h
// function; errors become LesException with les_last_error()'s message.
// les_generate_with_images is reached through Native.generate (an images
// argument, les_jni_generate.cpp).
#include <string>

#include "jni_util.h"

using les_jni::as_context;
using les_jni::as_image;
using les_jni::as_jlong;
using les_jni::as_model;
using les_jni::as_vision;
using les_jni::from_bytes;
using les_jni::guarded;
using les_jni::throw_last_error;
using les_jni::throw_les;

namespace {

// Native.visionStats' arrays (VisionStats lists the fields).
constexpr jsize kStatInts = 7;
constexpr jsize kStatReals = 2;

// The new image's handle, or 0 with a LesException pending.
jlong image_or_throw(JNIEnv* env, les_status st, les_image* img) {
  if (st != LES_OK) {
    throw_last_error(env, st);
    return 0;
  }
  return as_jlong(img);
}

}  // namespace

extern "C" {

JNIEXPORT jint JNICALL Java_org_les_Native_visionDefaultThreads(JNIEnv*, jclass) {
  return les_vision_default_params().n_threads;
}

JNIEXPORT jlong JNICALL Java_org_les_Native_visionLoad(JNIEnv* env, jclass, jlong model, jbyteArray path,
                                                       jint n_threads, jboolean release_after_encode) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    auto p = from_bytes(env, path, "mmprojPath");
    if (!p) return 0;
    les_vision_params vp = les_vision_default_params();
    vp.n_threads = n_threads;
    vp.release_after_encode = release_after_encode == JNI_TRUE;
    les_vision* v = nullptr;
    const les_status st = les_vision_load(as_model(model), p->c_str(), &vp, &v);
    if (st != LES_OK) {
      throw_last_error(env, st);
      return 0;
    }
    return as_jlong(v);
  });
}

JNIEXPORT void JNICALL Java_org_les_Native_visionFree(JNIEnv*, jclass, jlong h) { les_vision_free(as_vision(h)); }

JNIEXPORT jlong JNICALL Java_org_les_Native_visionEncodeRgb(JNIEnv* env, jclass, jlong h, jbyteArray rgb, jint width,
                                                            jint height) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    auto px = from_bytes(env, rgb, "rgb");
    if (!px) return 0;
    // The C call reads width * height * 3 bytes: check the Java array holds them.
    if (width > 0 && height > 0 &&
        px->size() != static_cast<size_t>(width) * static_cast<size_t>(height) * 3u) {
      throw_les(env, LES_ERR_INVALID_ARGUMENT,
                "rgb holds " + std::to_string(px->size()) + " bytes, " + std::to_string(width) + " x " +
                    std::to_string(height) + " x 3 expected");
      return 0;
    }
    les_image* img = nullptr;
    const les_status st = les_vision_encode_rgb(as_vision(h), reinterpret_cast<const uint8_t*>(px->data()), width,
                                                height, &img);
    return image_or_throw(env, st, img);
  });
}

JNIEXPORT jlong JNICALL Java_org_les_Native_visionEncodeFile(JNIEnv* env, jclass, jlong h, jbyteArray path) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    auto p = from_bytes(env, path, "path");
    if (!p) return 0;
    les_image* img = nullptr;
    const les_status st = les_vision_encode_file(as_vision(h), p->c_str(), &img);
    return image_or_throw(env, st, img);
  });
}

JNIEXPORT jlong JNICALL Java_org_les_Native_visionEncodeMemory(JNIEnv* env, jclass, jlong h, jbyteArray data) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    auto d = from_bytes(env, data, "data");
    if (!d) return 0;
    les_image* img = nullptr;
    const les_status st =
        les_vision_encode_memory(as_vision(h), reinterpret_cast<const uint8_t*>(d->data()), d->size(), &img);
    return image_or_throw(env, st, img);
  });
}

JNIEXPORT void JNICALL Java_org_les_Native_visionStats(JNIEnv* env, jclass, jlong h, jlongArray ints,
                                                       jdoubleArray reals) {
  if (ints == nullptr || reals == nullptr || env->GetArrayLength(ints) < kStatInts ||
      env->GetArrayLength(reals) < kStatReals) {
    throw_les(env, LES_ERR_INVALID_ARGUMENT, "visionStats: arrays of 7 longs and 2 doubles expected");
    return;
  }
  les_vision_stats s{};
  s.struct_size = sizeof s;
  const les_status st = les_vision_get_stats(as_vision(h), &s);
  if (st != LES_OK) {
    throw_last_error(env, st);
    return;
  }
  const jlong iv[kStatInts] = {s.n_images_encoded,
                               s.n_chunks_encoded,
                               s.n_image_tokens,
                               static_cast<jlong>(s.weight_bytes),
                               static_cast<jlong>(s.weight_bytes_resident),
                               s.n_weight_loads,
                               static_cast<jlong>(s.memory_bytes)};
  const jdouble rv[kStatReals] = {s.encode_ms_total, s.last_encode_ms};
  env->SetLongArrayRegion(ints, 0, kStatInts, iv);
  env->SetDoubleArrayRegion(reals, 0, kStatReals, rv);
}

JNIEXPORT jint JNICALL Java_org_les_Native_imageNTokens(JNIEnv*, jclass, jlong h) {
  return les_image_n_tokens(as_image(h));
}

JNIEXPORT void JNICALL Java_org_les_Native_imageFree(JNIEnv*, jclass, jlong h) { les_image_free(as_image(h)); }

JNIEXPORT void JNICALL Java_org_les_Native_contextAppendImage(JNIEnv* env, jclass, jlong ctx_h, jlong image_h) {
  les_context* ctx = as_context(ctx_h);
  const les_status st = les_context_append_image(ctx, as_image(image_h));
  if (st != LES_OK) throw_last_error(env, st, ctx);
}

}  // extern "C"
