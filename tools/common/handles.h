// Owners of les.h handles for the tool's subcommands (freed in reverse order
// of creation by scope), and small queries over them.
#pragma once

#include <les/les.h>

#include <algorithm>
#include <string>

namespace les::tool {

struct ModelHandle {
  les_model* p = nullptr;
  ModelHandle() = default;
  ModelHandle(const ModelHandle&) = delete;
  ModelHandle& operator=(const ModelHandle&) = delete;
  ~ModelHandle() { les_model_free(p); }
};

struct ContextHandle {
  les_context* p = nullptr;
  ContextHandle() = default;
  ContextHandle(const ContextHandle&) = delete;
  ContextHandle& operator=(const ContextHandle&) = delete;
  ~ContextHandle() { les_context_free(p); }
};

// les_model_desc() as a string ("qwen3moe 8L 256d 32x4 experts Q4_K").
inline std::string model_desc(const les_model* m) {
  std::string desc(static_cast<size_t>(std::max(les_model_desc(m, nullptr, 0), 0)) + 1, '\0');
  desc.resize(static_cast<size_t>(std::max(les_model_desc(m, desc.data(), desc.size()), 0)));
  return desc;
}

// les_model_meta_str() as a string; false if the key is absent.
inline bool model_meta(const les_model* m, const char* key, std::string* out) {
  const int32_t n = les_model_meta_str(m, key, nullptr, 0);
  if (n < 0) return false;
  out->assign(static_cast<size_t>(n) + 1, '\0');
  les_model_meta_str(m, key, out->data(), out->size());
  out->resize(static_cast<size_t>(n));
  return true;
}

}  // namespace les::tool
