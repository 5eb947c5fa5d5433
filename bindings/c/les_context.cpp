// C ABI: contexts (KV cache, decode, logits, reset/trim, cancel) (les.h).
#include <cstddef>
#include <cstring>
#include <string>

#include "capi_internal.h"
#include "core/model/thread_count.h"
#include "kernels/thread_pool.h"
#include "sched/memory_plan.h"

using les::capi::Access;
using les::capi::ContextUse;
using les::capi::fail;
using les::capi::guarded;
using les::capi::raw_enum;

namespace {

// The first les_context_params ended before the streaming fields (0.2 moved
// them here from les_model_params); a caller of that size runs resident.
constexpr size_t kContextParamsV1 = offsetof(les_context_params, expert_budget_bytes);
// les_memory_plan before draft_bytes was appended.
constexpr size_t kMemoryPlanV1 = offsetof(les_memory_plan, draft_bytes);

// les_context_params' streaming fields as the scheduler's parameters.
// Errors: invalid_argument naming a field whose value is not one of its enum's
// or prefetch_candidates < -1 (c outside [k, 2k] is refused by create_context).
les::Result<les::sched::StreamingParams> streaming_params(const les_context_params& p) {
  static_assert(sizeof(p.io_backend) == sizeof(int32_t) && sizeof(p.eviction) == sizeof(int32_t));
  les::sched::StreamingParams sp;
  sp.budget_bytes = static_cast<size_t>(p.expert_budget_bytes);
  if (p.prefetch_candidates < -1)
    return les::invalid_argument_error("les_context_params.prefetch_candidates is " +
                                       std::to_string(p.prefetch_candidates) + "; use -1, 0 or k..2k");
  sp.prefetch_c = p.prefetch_candidates;
  switch (const int32_t io = raw_enum(&p.io_backend)) {
    case LES_IO_AUTO: sp.io = les::io::IoBackendKind::automatic; break;
    case LES_IO_IO_URING: sp.io = les::io::IoBackendKind::io_uring; break;
    case LES_IO_PREAD: sp.io = les::io::IoBackendKind::pread; break;
    case LES_IO_DISPATCH_IO: sp.io = les::io::IoBackendKind::dispatch_io; break;
    default:
      return les::invalid_argument_error("les_context_params.io_backend " + std::to_string(io) +
                                         " is not a les_io_backend");
  }
  switch (const int32_t ev = raw_enum(&p.eviction)) {
    case LES_EVICTION_LFU_AGED: sp.policy = les::sched::EvictionPolicy::lfu_aged; break;
    case LES_EVICTION_LRU: sp.policy = les::sched::EvictionPolicy::lru; break;
    case LES_EVICTION_NEXT_USE: sp.policy = les::sched::EvictionPolicy::next_use; break;
    case LES_EVICTION_ADAPTIVE: sp.policy = les::sched::EvictionPolicy::adaptive; break;
    default:
      return les::invalid_argument_error("les_context_params.eviction " + std::to_string(ev) +
                                         " is not a les_eviction_policy");
  }
  return sp;
}

les_memory_plan to_c(const les::sched::MemoryPlan& m) {
  les_memory_plan p{};
  p.struct_size = sizeof p;
  p.limit_bytes = m.limit_bytes;
  p.baseline_bytes = m.baseline_bytes;
  p.dense_bytes = m.dense_bytes;
  p.kv_bytes = m.kv_bytes;
  p.scratch_bytes = m.scratch_bytes;
  p.routed_bytes = m.routed_bytes;
  p.min_expert_bytes = m.min_expert_bytes;
  p.expert_budget_bytes = m.resident ? 0 : m.expert_budget_bytes;
  p.resident = m.resident ? 1 : 0;
  p.n_ctx = m.n_ctx;
  p.draft_bytes = m.draft_bytes;
  p.vision_bytes = m.vision_bytes;
  return p;
}

}  // namespace

extern "C" {

les_context_params les_context_default_params(void) {
  les_context_params p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = sizeof(les_context_params);
  p.n_ctx = 0;
  p.n_batch = 0;
  p.n_threads = 0;
  p.kv_type = LES_KV_F16;
  p.expert_budget_bytes = 0;
  p.prefetch_candidates = -1;
  p.io_backend = LES_IO_AUTO;
  p.eviction = LES_EVICTION_ADAPTIVE;
  p.memory_limit_bytes = 0;
  p.progress_callback = nullptr;
  p.progress_user_data = nullptr;
  p.draft_model = nullptr;
  p.vision = nullptr;
  return p;
}

les_status les_context_create(les_model* model, const les_context_params* params, les_context** out_ctx) {
  return guarded("les_context_create", [&]() -> les_status {
    if (out_ctx == nullptr) return fail(les::invalid_argument_error("les_context_create: out_ctx is NULL"));
    *out_ctx = nullptr;
    if (model == nullptr || !model->state)
      return fail(les::invalid_argument_error("les_context_create: model is NULL"));
    les_context_params p = les_context_default_params();
    les::Status s = les::capi::copy_versioned_in(params, p, kContextParamsV1, "les_context_params");
    if (!s.ok()) return fail(s);
    if (p.n_ctx < 0 || p.n_batch < 0)
      return fail(les::invalid_argument_error("les_context_params: n_ctx and n_batch must be >= 0"));
    s = les::check_thread_count(p.n_threads, "les_context_params.n_threads");
    if (!s.ok()) return fail(s);
    les::ContextParams cp;
    cp.n_ctx = p.n_ctx;
    cp.n_batch = p.n_batch > 0 ? p.n_batch : 512;
    cp.n_threads = p.n_threads > 0 ? p.n_threads : model->state->params.n_threads;
    switch (const int32_t kv_raw = raw_enum(&p.kv_type)) {
      case LES_KV_F16: cp.kv_type = les::GgmlType::F16; break;
      case LES_KV_Q8_0: cp.kv_type = les::GgmlType::Q8_0; break;
      default:
        return fail(les::invalid_argument_error("les_context_params.kv_type " + std::to_string(kv_raw) +
                                                " is not a les_kv_type"));
    }
    auto sp = streaming_params(p);
    if (!sp.ok()) return fail(sp.status());
    les_memory_plan plan{};
    if (p.memory_limit_bytes > 0) {
      // Measured before anything of the context exists: everything the process holds now.
      if (p.draft_model != nullptr && !p.draft_model->state)
        return fail(les::invalid_argument_error("les_context_params.draft_model is not a loaded model"));
      const uint64_t vision_bytes = p.vision != nullptr ? les::capi::vision_memory_bytes(*p.vision) : 0;
      auto mp = les::sched::plan_memory(*model->state->model, cp, *sp, p.memory_limit_bytes,
                                        les::sched::process_rss_bytes(),
                                        p.draft_model != nullptr ? p.draft_model->state->model.get() : nullptr,
                                        vision_bytes);
      if (!mp.ok()) return fail(mp.status().with_context("les_context_params.memory_limit_bytes"));
      sp->budget_bytes = mp->resident ? 0 : static_cast<size_t>(mp->expert_budget_bytes);
      plan = to_c(*mp);
    }
    sp->background_prefault = p.progress_callback == nullptr;  // a watched prefault stays on this thread
    if (p.progress_callback != nullptr) {
      const les_progress_callback cb = p.progress_callback;
      void* const ud = p.progress_user_data;
      sp->prefault_progress = [cb, ud](size_t done, size_t total) {
        return cb(total > 0 ? static_cast<float>(static_cast<double>(done) / static_cast<double>(total)) : 1.0f, ud);
      };
    }
    auto ctx = les::sched::create_context(*model->state->model, cp, *sp);
    if (!ctx.ok()) return fail(ctx.status());
    auto* handle = new les_context;
    handle->model = model->state;
    handle->ctx = std::move(ctx).value();
    handle->memory_plan = plan;
    handle->ctx->set_interrupt([handle] { return handle->poll_interrupt(); });
    model->state->logger->debug("context created: n_ctx {}", handle->ctx->n_ctx());
    *out_ctx = handle;
    return LES_OK;
  });
}

int32_t les_max_threads(void) { return les::kernels::ThreadPool::max_threads(); }

les_status les_context_memory_plan(const les_context* ctx, les_memory_plan* out) {
  return guarded("les_context_memory_plan", [&]() -> les_status {
    if (ctx == nullptr) return fail(les::invalid_argument_error("les_context_memory_plan: ctx is NULL"));
    les_memory_plan full = ctx->memory_plan;
    full.struct_size = sizeof full;
    les::Status s = les::capi::copy_versioned_out(full, out, kMemoryPlanV1, "les_memory_plan");
    if (!s.ok()) return fail(s, &ctx->last_error);
    return LES_OK;
  });
}

void les_context_free(les_context* ctx) { delete ctx; }

const char* les_context_last_error(const les_context* ctx) {
  // A copy per calling thread: another thread may record an error meanwhile.
  thread_local std::string copy;
  copy = ctx != nullptr ? ctx->last_error.get() : std::string();
  return copy.c_str();
}

namespace {

// les_context_decode and les_context_decode_all_logits.
les_status decode(const char* fn, les_context* ctx, const les_token* tokens, int32_t n, bool all_logits) {
  if (ctx == nullptr) {
    return guarded(fn, [fn] { return fail(les::invalid_argument_error(std::string(fn) + ": ctx is NULL")); });
  }
  return guarded(
      fn,
      [&]() -> les_status {
        ContextUse use(ctx->in_use, fn, Access::write);
        if (!use.ok()) return fail(use.status());
        ctx->last_error.clear();
        if (tokens == nullptr || n <= 0)
          return fail(les::invalid_argument_error(std::string(fn) + ": tokens is NULL or n <= 0"), &ctx->last_error);
        if (ctx->poll_interrupt())  // a cancel pending since before this call (les_context_cancel)
          return fail(les::cancelled_error(std::string(fn) + ": cancelled by les_context_cancel() before it started"),
                      &ctx->last_error);
        les::Status s = ctx->ctx->decode(std::span<const int32_t>(tokens, static_cast<size_t>(n)), all_logits);
        if (s.code() == les::StatusCode::cancelled)
          return fail(les::cancelled_error(std::string(fn) + ": cancelled by les_context_cancel() (" + s.message() + ")"),
                      &ctx->last_error);
        if (!s.ok()) return fail(s, &ctx->last_error);
        return LES_OK;
      },
      &ctx->last_error);
}

}  // namespace

les_status les_context_decode(les_context* ctx, const les_token* tokens, int32_t n) {
  return decode("les_context_decode", ctx, tokens, n, false);
}

les_status les_context_decode_all_logits(les_context* ctx, const les_token* tokens, int32_t n) {
  return decode("les_context_decode_all_logits", ctx, tokens, n, true);
}

namespace {

// Enters ctx for a call without a status (context_use.h): false, with the
// thread's last error set, while another thread's call runs on it.
bool enter_for_read(const ContextUse& use) {
  les::capi::clear_last_error();
  if (use.ok()) return true;
  les::capi::set_last_error(use.status().message());
  return false;
}

}  // namespace

const float* les_context_logits(const les_context* ctx) {
  if (ctx == nullptr) return nullptr;
  ContextUse use(ctx->in_use, "les_context_logits", Access::read);
  if (!enter_for_read(use) || !ctx->ctx->has_logits()) return nullptr;
  auto l = ctx->ctx->logits();
  return l.empty() ? nullptr : l.data();
}

const float* les_context_logits_ith(const les_context* ctx, int32_t i) {
  if (ctx == nullptr) return nullptr;
  ContextUse use(ctx->in_use, "les_context_logits_ith", Access::read);
  if (!enter_for_read(use) || !ctx->ctx->has_logits()) return nullptr;
  const std::span<const float> all = ctx->ctx->logits_all();
  if (all.empty()) {
    if (i != -1) return nullptr;
    auto l = ctx->ctx->logits();
    return l.empty() ? nullptr : l.data();
  }
  const int64_t n_vocab = ctx->ctx->model().hparams().n_vocab;
  const int64_t n = static_cast<int64_t>(all.size()) / n_vocab;
  const int64_t k = i < 0 ? n + i : i;
  return k >= 0 && k < n ? all.data() + k * n_vocab : nullptr;
}

les_status les_context_set_activation_callback(les_context* ctx, les_activation_callback callback,
                                               void* user_data) {
  return guarded("les_context_set_activation_callback", [&]() -> les_status {
    if (ctx == nullptr)
      return fail(les::invalid_argument_error("les_context_set_activation_callback: ctx is NULL"));
    ContextUse use(ctx->in_use, "les_context_set_activation_callback", Access::write);
    if (!use.ok()) return fail(use.status());
    if (callback == nullptr) {
      ctx->ctx->set_activation_observer({});
    } else {
      ctx->ctx->set_activation_observer([callback, user_data](const les::ActivationObservation& o) {
        callback(o.tensor, o.expert, o.x, o.n_rows, o.n_cols, user_data);
      });
    }
    return LES_OK;
  });
}

les_status les_context_set_route_callback(les_context* ctx, les_route_callback callback, void* user_data) {
  return guarded("les_context_set_route_callback", [&]() -> les_status {
    if (ctx == nullptr) return fail(les::invalid_argument_error("les_context_set_route_callback: ctx is NULL"));
    ContextUse use(ctx->in_use, "les_context_set_route_callback", Access::write);
    if (!use.ok()) return fail(use.status());
    if (callback == nullptr) {
      ctx->ctx->set_router_observer({});
    } else {
      // During a forward chunk the sequence has not advanced yet: n_past() is
      // the position of the chunk's first row.
      const les::Context* c = ctx->ctx.get();
      ctx->ctx->set_router_observer([callback, user_data, c](const les::RouterObservation& o) {
        callback(o.layer, c->n_past() + o.first_token, o.n_tokens, o.n_expert_used, o.selected, o.weights,
                 user_data);
      });
    }
    return LES_OK;
  });
}

int32_t les_context_n_past(const les_context* ctx) {
  if (ctx == nullptr) return 0;
  ContextUse use(ctx->in_use, "les_context_n_past", Access::read);
  return enter_for_read(use) ? ctx->ctx->n_tokens() : -1;
}

int32_t les_context_n_ctx(const les_context* ctx) { return ctx ? ctx->ctx->n_ctx() : 0; }

les_status les_context_reset(les_context* ctx) {
  return guarded("les_context_reset", [&]() -> les_status {
    if (ctx == nullptr) return fail(les::invalid_argument_error("les_context_reset: ctx is NULL"));
    ContextUse use(ctx->in_use, "les_context_reset", Access::write);
    if (!use.ok()) return fail(use.status());
    ctx->ctx->reset();
    return LES_OK;
  });
}

les_status les_context_trim(les_context* ctx, int32_t n_keep) {
  return guarded("les_context_trim", [&]() -> les_status {
    if (ctx == nullptr) return fail(les::invalid_argument_error("les_context_trim: ctx is NULL"));
    ContextUse use(ctx->in_use, "les_context_trim", Access::write);
    if (!use.ok()) return fail(use.status());
    les::Context& c = *ctx->ctx;
    les::Status s = c.trim(n_keep);
    if (!s.ok()) return fail(s, &ctx->last_error);
    // The kept last token becomes pending when its logits went with the trim,
    // so the next decode re-evaluates it and les_generate(ctx, "") continues.
    // A recurrent state cannot go back one position: it stays without logits.
    // (Not for a position filled from an embedding row: no token to re-evaluate.)
    if (n_keep > 0 && !c.has_logits() && c.pending() < 0) {
      const int32_t last = c.tokens()[static_cast<size_t>(n_keep) - 1];
      if (last >= 0 && c.trim(n_keep - 1).ok()) {
        s = c.set_pending(last);
        if (!s.ok()) return fail(s, &ctx->last_error);
      }
    }
    return LES_OK;
  });
}

// Async-signal-safe (les_context.h): a lock-free atomic store and nothing else.
static_assert(std::atomic<bool>::is_always_lock_free);

void les_context_cancel(les_context* ctx) {
  if (ctx != nullptr) ctx->cancel.store(true, std::memory_order_relaxed);
}

}  // extern "C"
