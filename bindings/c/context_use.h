// Internal to bindings/c: one call at a time per context, enforced.
//
// les_context.h makes a context thread-compatible: one thread at a time. A
// second thread entering while a call runs used to race on the KV cache, the
// scratch and the logits (crashes, livelocks, heap corruption, or LES_OK with
// meaningless text). Every entry point that reads or writes a context's state
// now holds the context's InUse flag for the whole call (a ContextUse on its
// stack): a call from another thread meanwhile touches nothing and returns
// LES_ERR_INVALID_ARGUMENT "<fn>: the context is in use by another thread".
//
// A call made from inside a callback of a running call on the same thread (a
// token or activation callback) may read (les_context_tokens, _n_past,
// _logits...: the state between two steps) but not change the context (decode,
// generate, reset, trim, load, set a callback): the running call would go on
// over a context changed under it. Those are refused naming the callback.
//
// Calls documented as callable from any thread at any time take no flag:
// les_context_cancel, les_context_set_expert_budget, les_context_stream_stats,
// les_context_stream_layer_stats, les_context_last_error,
// les_context_memory_plan, les_context_n_ctx (and les_context_free cannot be
// guarded: freeing a context another thread uses is the caller's bug).
//
// Thread-safety: InUse is one lock-free atomic (compare-exchange to enter, a
// release store to leave), so entering costs a few nanoseconds and never waits.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "util/status.h"

namespace les::capi {

// A context's "in use" flag: the id of the thread inside a call on it, or
// the default id (none).
class InUse {
 public:
  InUse() = default;
  InUse(const InUse&) = delete;
  InUse& operator=(const InUse&) = delete;

 private:
  friend class ContextUse;
  std::atomic<std::thread::id> owner_{};
};
static_assert(std::atomic<std::thread::id>::is_always_lock_free);

// What a call does with the context.
enum class Access {
  read,   // reads state (tokens, logits, stats, saves): allowed from a callback of this thread's running call
  write,  // changes it (decode, generate, reset, trim, load, set a callback)
};

// Holds `flag` for the lifetime of this object (one call). ok() is false when
// the call must not run: status() then is invalid_argument naming `fn` and why.
class ContextUse {
 public:
  ContextUse(InUse& flag, const char* fn, Access access) : flag_(flag) {
    const std::thread::id me = std::this_thread::get_id();
    std::thread::id expected{};
    if (flag_.owner_.compare_exchange_strong(expected, me, std::memory_order_acquire, std::memory_order_relaxed)) {
      entered_ = true;
      return;
    }
    if (expected == me) {  // a callback of this thread's running call
      if (access == Access::read) return;
      status_ = invalid_argument_error(std::string(fn) +
                                       ": called from a callback of a call running on this context (a context "
                                       "takes one call at a time; it cannot change while that call runs)");
      return;
    }
    status_ = invalid_argument_error(std::string(fn) +
                                     ": the context is in use by another thread (a context takes one call at a "
                                     "time: les_context.h)");
  }
  ~ContextUse() {
    if (entered_) flag_.owner_.store(std::thread::id{}, std::memory_order_release);
  }
  ContextUse(const ContextUse&) = delete;
  ContextUse& operator=(const ContextUse&) = delete;

  bool ok() const noexcept { return status_.ok(); }
  const Status& status() const noexcept { return status_; }

 private:
  InUse& flag_;
  bool entered_ = false;
  Status status_;
};

}  // namespace les::capi
