// C ABI: contexts (KV cache, decode, logits, reset/trim, cancel) (les.h).
#include <cstring>
#include <string>

#include "capi_internal.h"

using les::capi::fail;
using les::capi::guarded;

namespace {
constexpr size_t kContextParamsV1 = sizeof(les_context_params);
}

extern "C" {

les_context_params les_context_default_params(void) {
  les_context_params p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = sizeof(les_context_params);
  p.n_ctx = 0;
  p.n_batch = 0;
  p.n_threads = 0;
  p.kv_type = LES_KV_F16;
  return p;
}

les_status les_context_create(les_model* model, const les_context_params* params, les_context** out_ctx) {
  return guarded("les_context_create", [&]() -> les_status {
    if (out_ctx == nullptr) return fail(les::invalid_argument_error("les_context_create: out_ctx is NULL"));
    *out_ctx = nullptr;
    if (model == nullptr || !model->state)
      return fail(les::invalid_argument_error("les_context_create: model is NULL"));
    les_context_params p = les_context_default_params();
    les::Status s = les::capi::copy_versioned(params, p, kContextParamsV1, "les_context_params");
    if (!s.ok()) return fail(s);
    if (p.n_ctx < 0 || p.n_batch < 0 || p.n_threads < 0)
      return fail(les::invalid_argument_error("les_context_params: n_ctx, n_batch and n_threads must be >= 0"));
    les::ContextParams cp;
    cp.n_ctx = p.n_ctx;
    cp.n_batch = p.n_batch > 0 ? p.n_batch : 512;
    cp.n_threads = p.n_threads > 0 ? p.n_threads : model->state->params.n_threads;
    int32_t kv_raw = 0;  // read raw: an out-of-range value must not be loaded as the enum
    std::memcpy(&kv_raw, &p.kv_type, sizeof kv_raw);
    switch (kv_raw) {
      case LES_KV_F16: cp.kv_type = les::GgmlType::F16; break;
      case LES_KV_Q8_0: cp.kv_type = les::GgmlType::Q8_0; break;
      default:
        return fail(les::invalid_argument_error("les_context_params.kv_type " + std::to_string(kv_raw) +
                                                " is not a les_kv_type"));
    }
    std::unique_ptr<les::sched::StreamingExpertSource> experts;
    const les_model_params& mp = model->state->params;
    // A dense model has no routed experts: nothing to stream, it runs resident.
    if (mp.expert_budget_bytes > 0 && model->state->model->hparams().n_expert > 0) {
      les::sched::StreamingParams sp;
      sp.budget_bytes = static_cast<size_t>(mp.expert_budget_bytes);
      sp.prefetch_c = mp.prefetch_candidates;
      sp.policy = mp.eviction == LES_EVICTION_LRU ? les::sched::EvictionPolicy::lru
                                                  : les::sched::EvictionPolicy::lfu_aged;
      switch (mp.io_backend) {
        case LES_IO_IO_URING: sp.io = les::io::IoBackendKind::io_uring; break;
        case LES_IO_PREAD: sp.io = les::io::IoBackendKind::pread; break;
        case LES_IO_DISPATCH_IO: sp.io = les::io::IoBackendKind::dispatch_io; break;
        default: sp.io = les::io::IoBackendKind::automatic; break;
      }
      sp.n_batch_max = cp.n_batch;
      auto src = les::sched::StreamingExpertSource::create(*model->state->model, sp);
      if (!src.ok()) return fail(src.status().with_context("expert streaming"));
      experts = std::move(src).value();
    }
    auto ctx = les::Context::create(*model->state->model, cp);
    if (!ctx.ok()) return fail(ctx.status());
    auto* handle = new les_context;
    handle->model = model->state;
    handle->experts = std::move(experts);
    handle->ctx = std::move(ctx).value();
    if (handle->experts) handle->ctx->set_expert_source(handle->experts.get());
    model->state->logger->debug("context created: n_ctx {}", handle->ctx->n_ctx());
    *out_ctx = handle;
    return LES_OK;
  });
}

void les_context_free(les_context* ctx) { delete ctx; }

const char* les_context_last_error(const les_context* ctx) { return ctx ? ctx->last_error.c_str() : ""; }

les_status les_context_decode(les_context* ctx, const les_token* tokens, int32_t n) {
  if (ctx == nullptr) {
    return guarded("les_context_decode",
                   [] { return fail(les::invalid_argument_error("les_context_decode: ctx is NULL")); });
  }
  return guarded(
      "les_context_decode",
      [&]() -> les_status {
        ctx->last_error.clear();
        if (tokens == nullptr || n <= 0)
          return fail(les::invalid_argument_error("les_context_decode: tokens is NULL or n <= 0"), &ctx->last_error);
        les::Status s = ctx->ctx->decode(std::span<const int32_t>(tokens, static_cast<size_t>(n)));
        if (!s.ok()) return fail(s, &ctx->last_error);
        ctx->has_logits = true;
        return LES_OK;
      },
      &ctx->last_error);
}

const float* les_context_logits(const les_context* ctx) {
  if (ctx == nullptr || !ctx->has_logits) return nullptr;
  auto l = ctx->ctx->logits();
  return l.empty() ? nullptr : l.data();
}

int32_t les_context_n_past(const les_context* ctx) { return ctx ? ctx->ctx->n_past() : 0; }
int32_t les_context_n_ctx(const les_context* ctx) { return ctx ? ctx->ctx->n_ctx() : 0; }

les_status les_context_reset(les_context* ctx) {
  return guarded("les_context_reset", [&]() -> les_status {
    if (ctx == nullptr) return fail(les::invalid_argument_error("les_context_reset: ctx is NULL"));
    ctx->ctx->reset();
    ctx->has_logits = false;
    return LES_OK;
  });
}

les_status les_context_trim(les_context* ctx, int32_t n_keep) {
  return guarded("les_context_trim", [&]() -> les_status {
    if (ctx == nullptr) return fail(les::invalid_argument_error("les_context_trim: ctx is NULL"));
    les::Status s = ctx->ctx->trim(n_keep);
    if (!s.ok()) return fail(s, &ctx->last_error);
    ctx->has_logits = false;  // the logits belonged to a dropped position
    return LES_OK;
  });
}

void les_context_cancel(les_context* ctx) {
  if (ctx != nullptr) ctx->cancel.store(true, std::memory_order_relaxed);
}

}  // extern "C"
