// JNI natives of org.les.Native for chat templates (les_chat.h), the draft
// model check (les_generate.h) and the library-wide queries les_max_threads()
// and les_version_at_least(). Each is a thin call of the les.h function.
#include <string>
#include <vector>

#include "jni_util.h"

using les_jni::as_model;
using les_jni::from_bytes;
using les_jni::guarded;
using les_jni::throw_last_error;
using les_jni::throw_les;
using les_jni::to_bytes;

namespace {

// The strings of a byte[][] (each non-null), or nullopt with LesException pending.
std::optional<std::vector<std::string>> strings(JNIEnv* env, jobjectArray array, const char* what) {
  if (array == nullptr) {
    throw_les(env, LES_ERR_INVALID_ARGUMENT, std::string(what) + " is null");
    return std::nullopt;
  }
  std::vector<std::string> out;
  const jsize n = env->GetArrayLength(array);
  for (jsize i = 0; i < n; ++i) {
    auto element = static_cast<jbyteArray>(env->GetObjectArrayElement(array, i));
    auto s = from_bytes(env, element, (std::string(what) + "[" + std::to_string(i) + "]").c_str());
    env->DeleteLocalRef(element);
    if (!s) return std::nullopt;
    out.push_back(std::move(*s));
  }
  return out;
}

// A template name argument: null (the model's own) or its UTF-8 text.
std::optional<std::string> template_name(JNIEnv* env, jbyteArray tmpl) {
  if (tmpl == nullptr) return std::string();
  return from_bytes(env, tmpl, "template");
}

}  // namespace

extern "C" {

JNIEXPORT jbyteArray JNICALL Java_org_les_Native_chatApplyTemplate(JNIEnv* env, jclass, jlong model, jbyteArray tmpl,
                                                                  jobjectArray roles, jobjectArray contents,
                                                                  jboolean add_assistant_prefix) {
  return guarded(env, jbyteArray{}, [&]() -> jbyteArray {
    auto name = template_name(env, tmpl);
    if (!name) return nullptr;
    auto r = strings(env, roles, "roles");
    if (!r) return nullptr;
    auto c = strings(env, contents, "contents");
    if (!c) return nullptr;
    if (r->size() != c->size()) {
      throw_les(env, LES_ERR_INVALID_ARGUMENT, "roles and contents differ in length");
      return nullptr;
    }
    std::vector<les_chat_message> messages;
    for (size_t i = 0; i < r->size(); ++i) messages.push_back({(*r)[i].c_str(), (*c)[i].c_str()});
    std::string buf(4096, '\0');
    size_t n = 0;
    for (int attempt = 0; attempt < 2; ++attempt) {
      const les_status st = les_chat_apply_template(as_model(model), name->c_str(), messages.data(), messages.size(),
                                                    add_assistant_prefix == JNI_TRUE, buf.data(), buf.size(), &n);
      if (st == LES_OK) return to_bytes(env, std::string_view(buf.data(), n));
      if (st != LES_ERR_INVALID_ARGUMENT || n < buf.size() || attempt == 1) {
        throw_last_error(env, st);
        return nullptr;
      }
      buf.assign(n + 1, '\0');  // too small: n is the length needed
    }
    return nullptr;
  });
}

JNIEXPORT jbyteArray JNICALL Java_org_les_Native_chatTemplateResolve(JNIEnv* env, jclass, jlong model,
                                                                    jbyteArray tmpl, jintArray source) {
  return guarded(env, jbyteArray{}, [&]() -> jbyteArray {
    auto name = template_name(env, tmpl);
    if (!name) return nullptr;
    if (source == nullptr || env->GetArrayLength(source) < 1) {
      throw_les(env, LES_ERR_INVALID_ARGUMENT, "chatTemplateResolve: an int[1] for the source expected");
      return nullptr;
    }
    const char* resolved = nullptr;
    les_chat_template_source src = LES_CHAT_TEMPLATE_NAMED;
    const les_status st = les_chat_template_resolve(as_model(model), name->c_str(), &resolved, &src);
    if (st != LES_OK) {
      throw_last_error(env, st);
      return nullptr;
    }
    const jint s = static_cast<jint>(src);
    env->SetIntArrayRegion(source, 0, 1, &s);
    return to_bytes(env, resolved != nullptr ? resolved : "");
  });
}

JNIEXPORT jint JNICALL Java_org_les_Native_chatTemplateCount(JNIEnv*, jclass) { return les_chat_template_count(); }

JNIEXPORT jbyteArray JNICALL Java_org_les_Native_chatTemplateName(JNIEnv* env, jclass, jint i) {
  const char* name = les_chat_template_name(i);
  return name != nullptr ? to_bytes(env, name) : nullptr;
}

JNIEXPORT void JNICALL Java_org_les_Native_modelCheckDraft(JNIEnv* env, jclass, jlong target, jlong draft) {
  const les_status st = les_model_check_draft(as_model(target), as_model(draft));
  if (st != LES_OK) throw_last_error(env, st);
}

JNIEXPORT jint JNICALL Java_org_les_Native_maxThreads(JNIEnv*, jclass) { return les_max_threads(); }

JNIEXPORT jboolean JNICALL Java_org_les_Native_versionAtLeast(JNIEnv*, jclass, jint major, jint minor) {
  return les_version_at_least(major, minor) ? JNI_TRUE : JNI_FALSE;
}

}  // extern "C"
