// Internal to bindings/c: the structs behind the opaque handles of les.h and
// the helpers every exported function uses (exception guard, status mapping,
// versioned-struct copying). Nothing here is visible to C callers.
#pragma once

#include <atomic>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include <spdlog/logger.h>

#include "core/model/context.h"
#include "core/generate.h"
#include "core/model/model.h"
#include "core/tokenizer/tokenizer.h"
#include "sched/context_factory.h"
#include "context_use.h"
#include "last_error.h"
#include "speculative_settings.h"
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
  std::atomic<bool> warned_chat_fallback{false};  // the ChatML fallback is logged once per model
};

les_status to_c_status(StatusCode code) noexcept;

// A handle's last error (les_context_last_error). Calls on the context from
// other threads (les_context_set_expert_budget during les_generate) write it
// too, so it is read as a copy. Thread-safe.
class HandleError {
 public:
  void set(std::string msg) {
    std::lock_guard<std::mutex> lk(mu_);
    msg_ = std::move(msg);
  }
  void clear() { set(std::string()); }
  std::string get() const {
    std::lock_guard<std::mutex> lk(mu_);
    return msg_;
  }

 private:
  mutable std::mutex mu_;
  std::string msg_;
};

// Records `s` as the thread's last error (and the handle's, if given) and
// returns its C code.
les_status fail(const Status& s, HandleError* handle_error = nullptr);

// Runs `fn` (returning les_status), turning any escaping exception into
// LES_ERR_OUT_OF_MEMORY / LES_ERR_INTERNAL with the message recorded.
template <typename Fn>
les_status guarded(const char* fn_name, Fn&& fn, HandleError* handle_error = nullptr) noexcept {
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

// Versioned structs (first field uint32_t struct_size): every struct of les.h
// that crosses the boundary, in or out, follows one rule: a struct_size from
// the struct's first version (`first_version_size`) up to this library's
// sizeof(T) is accepted, and exactly that many bytes are read or written, so
// a caller compiled against an older header keeps working. Anything else is
// invalid_argument naming the struct and the accepted range.
Status check_struct_size(uint32_t size, size_t first_version_size, size_t our_size, const char* type_name);

// In: copies a caller's struct into `out`, which holds our defaults (fields
// the caller's older struct lacks keep them). NULL `in` keeps the defaults.
template <typename T>
Status copy_versioned_in(const T* in, T& out, size_t first_version_size, const char* type_name) {
  if (in == nullptr) return Status();
  LES_RETURN_IF_ERROR(check_struct_size(in->struct_size, first_version_size, sizeof(T), type_name));
  std::memcpy(static_cast<void*>(&out), static_cast<const void*>(in), in->struct_size);
  out.struct_size = sizeof(T);
  return Status();
}

// Out: fills the caller's *out (whose struct_size it set) with the first
// out->struct_size bytes of `full`; struct_size stays the caller's.
template <typename T>
Status copy_versioned_out(const T& full, T* out, size_t first_version_size, const char* type_name) {
  if (out == nullptr) return invalid_argument_error(std::string(type_name) + " pointer is NULL");
  const uint32_t size = out->struct_size;
  LES_RETURN_IF_ERROR(check_struct_size(size, first_version_size, sizeof(T), type_name));
  std::memcpy(static_cast<void*>(out), static_cast<const void*>(&full), size);
  out->struct_size = size;
  return Status();
}

// An enum field read as a raw integer: a caller's out-of-range value must never
// be loaded as the enum type.
inline int32_t raw_enum(const void* field) {
  int32_t v = 0;
  std::memcpy(&v, field, sizeof v);
  return v;
}

// A prompt the caller evaluates itself (les_generate_with_images): `check`
// validates the copied params and the prompt text (the `prompt` argument or
// les_generate_params.prompt_text, resolved by generate_common; NULL data when
// neither is given) in place of les_generate's prompt checks;
// `prefill` (after the speculative setup and the cancel check) decodes the
// prompt into the context and returns the positions it filled; generation
// then continues from the context, and the stats count those positions and
// that time as the prefill.
struct CustomPrompt {
  std::function<Status(const les_generate_params&, const char* text, size_t text_len)> check;
  std::function<Result<int32_t>(Context&)> prefill;
};

// A vision encoder's peak memory (weights + encode scratch), bytes
// (les_context_params.vision; defined in les_vision.cpp).
uint64_t vision_memory_bytes(const les_vision& v);

// les_generate's body: `prompt` (text, or NULL with prompt_tokens) or, when
// `custom` is given, the caller's prompt. `fn_name` starts the messages.
les_status generate_common(les_context* ctx, const char* fn_name, const char* prompt, const les_generate_params* params,
                           les_token_callback callback, void* user_data, const CustomPrompt* custom);

}  // namespace les::capi

struct les_model {
  std::shared_ptr<les::capi::ModelState> state;
};

struct les_context {
  // The Context (built by sched::create_context, owning its expert source)
  // borrows the model: it is freed first, explicitly, whatever the order of
  // the members.
  ~les_context() {
    spec.decoder.reset();  // a draft model's context first, then the target's
    ctx.reset();
  }
  std::shared_ptr<les::capi::ModelState> model;
  std::unique_ptr<les::Context> ctx;
  // Every failing call on the context records its message here (const
  // calls too); les_context_decode* and les_generate clear it as they start.
  mutable les::capi::HandleError last_error;
  // One call at a time (context_use.h): every entry point but the any-thread
  // ones holds it for the call.
  mutable les::capi::InUse in_use;
  // les_context_cancel(): pending until a call consumes it (les_generate.h).
  std::atomic<bool> cancel{false};
  // The running les_generate()'s abort callback (les_generate_params), or NULL.
  les_abort_callback call_abort = nullptr;
  void* call_abort_user_data = nullptr;
  // What stopped the last call that poll_interrupt() stopped.
  enum class StoppedBy { nothing, cancel, abort_callback } stopped_by = StoppedBy::nothing;
  // The Context's interrupt hook (Context::set_interrupt, polled between
  // chunks and before each generated token): the running call's abort
  // callback, then a les_context_cancel() request, which it consumes. Called
  // only by the thread holding in_use.
  bool poll_interrupt() {
    if (call_abort != nullptr && call_abort(call_abort_user_data)) {
      stopped_by = StoppedBy::abort_callback;
      return true;
    }
    if (cancel.exchange(false, std::memory_order_relaxed)) {
      stopped_by = StoppedBy::cancel;
      return true;
    }
    return false;
  }
  les::GenerateStats last_stats;
  uint64_t last_seed = 0;  // the sampler seed of the last les_generate()
  les_memory_plan memory_plan{};  // les_context_params.memory_limit_bytes' split (zeros without a limit)
  // Speculative decoding: the decoder kept across les_generate() calls and
  // the last call's statistics (speculative_settings.h).
  les::capi::SpeculativeSlot spec;
};
