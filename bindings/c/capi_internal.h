// Internal to bindings/c: the structs behind the opaque handles of les.h and
// the helpers every exported function uses (exception guard, status mapping,
// versioned-struct copying). Nothing here is visible to C callers.
#pragma once

#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include <spdlog/logger.h>

#include "core/model/context.h"
#include "core/generate.h"
#include "core/model/model.h"
#include "core/tokenizer/tokenizer.h"
#include "sched/streaming_expert_source.h"
#include "last_error.h"
#include "les/les.h"
#include "util/status.h"

namespace les::capi {

// What a les_model handle and its contexts share. A context holds a
// shared_ptr, so les_model_free() while contexts live only drops the caller's
// reference; the weights go when the last context is freed.
struct ModelState {
  std::unique_ptr<Model> model;
  const Tokenizer* tokenizer = nullptr;  // the model's own (Model::tokenizer())
  std::shared_ptr<spdlog::logger> logger;
  les_model_params params{};
};

les_status to_c_status(StatusCode code) noexcept;

// Records `s` as the thread's last error (and the handle's, if given) and
// returns its C code.
les_status fail(const Status& s, std::string* handle_error = nullptr);

// Runs `fn` (returning les_status), turning any escaping exception into
// LES_ERR_OUT_OF_MEMORY / LES_ERR_INTERNAL with the message recorded.
template <typename Fn>
les_status guarded(const char* fn_name, Fn&& fn, std::string* handle_error = nullptr) noexcept {
  try {
    clear_last_error();
    return fn();
  } catch (const std::bad_alloc&) {
    return fail(out_of_memory_error(std::string(fn_name) + ": out of memory"), handle_error);
  } catch (const std::exception& e) {
    return fail(internal_error(std::string(fn_name) + ": " + e.what()), handle_error);
  } catch (...) {
    return fail(internal_error(std::string(fn_name) + ": unknown exception"), handle_error);
  }
}

// Copies a caller's versioned params struct (first field uint32_t struct_size)
// into `out`, which holds our defaults: fields the caller's older struct lacks
// keep their defaults. A struct_size smaller than the first version's size
// or larger than ours is invalid_argument.
template <typename T>
Status copy_versioned(const T* in, T& out, size_t first_version_size, const char* type_name) {
  if (in == nullptr) return Status();
  const uint32_t size = in->struct_size;
  if (size < first_version_size || size > sizeof(T))
    return invalid_argument_error(std::string(type_name) + ".struct_size is " + std::to_string(size) +
                                  "; this library accepts " + std::to_string(first_version_size) + ".." +
                                  std::to_string(sizeof(T)) + " (use " + type_name +
                                  " from les_*_default_params())");
  std::memcpy(static_cast<void*>(&out), static_cast<const void*>(in), size);
  out.struct_size = sizeof(T);
  return Status();
}

}  // namespace les::capi

struct les_model {
  std::shared_ptr<les::capi::ModelState> state;
};

struct les_context {
  std::shared_ptr<les::capi::ModelState> model;
  // Declared before ctx so it is destroyed after it (the Context borrows it).
  std::unique_ptr<les::sched::StreamingExpertSource> experts;  // null: experts resident
  std::unique_ptr<les::Context> ctx;
  std::string last_error;
  std::atomic<bool> cancel{false};
  les::GenerateStats last_stats;
  bool has_logits = false;
};
