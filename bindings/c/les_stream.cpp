// C ABI: expert-streaming budget and statistics of a context (les.h).
#include <cstddef>
#include <cstring>
#include <string>

#include "capi_internal.h"
#include "sched/sched_stats.h"

using les::capi::fail;
using les::capi::guarded;

namespace {

// The context's streaming source, or an error naming `fn` when it has none.
les::Result<const les::sched::StreamingExpertSource*> streaming(const les_context* ctx, const char* fn) {
  if (ctx == nullptr) return les::invalid_argument_error(std::string(fn) + ": ctx is NULL");
  const les::sched::StreamingExpertSource* src = les::sched::streaming_source(*ctx->ctx);
  if (src == nullptr)
    return les::invalid_argument_error(std::string(fn) +
                                       ": this context does not stream experts (create it with "
                                       "les_context_params.expert_budget_bytes > 0 over a model with routed "
                                       "experts)");
  return src;
}

// Where a failing call on `ctx` records its message besides les_last_error().
les::capi::HandleError* handle_error(const les_context* ctx) { return ctx != nullptr ? &ctx->last_error : nullptr; }

// The les_io_backend of a backend's name ("io_uring", "pread", "dispatch_io",
// or a test's "fault_injecting(<inner>)").
les_io_backend io_backend_of(const std::string& name) {
  if (name.find("io_uring") != std::string::npos) return LES_IO_IO_URING;
  if (name.find("dispatch_io") != std::string::npos) return LES_IO_DISPATCH_IO;
  return LES_IO_PREAD;
}

// les_stream_stats v1 ends before one_token_budget_bytes (appended in 0.2.1).
constexpr size_t kStreamStatsV1 = offsetof(les_stream_stats, one_token_budget_bytes);
constexpr size_t kStreamLayerStatsV1 = sizeof(les_stream_layer_stats);

}  // namespace

extern "C" {

les_status les_context_set_expert_budget(les_context* ctx, uint64_t budget_bytes) {
  return guarded("les_context_set_expert_budget", [&]() -> les_status {
    auto src = streaming(ctx, "les_context_set_expert_budget");
    if (!src.ok()) return fail(src.status(), handle_error(ctx));
    les::Status s = les::sched::streaming_source(*ctx->ctx)->set_budget(static_cast<size_t>(budget_bytes));
    if (!s.ok()) return fail(s, &ctx->last_error);
    return LES_OK;
  });
}

les_status les_context_stream_stats(const les_context* ctx, les_stream_stats* out) {
  return guarded("les_context_stream_stats", [&]() -> les_status {
    auto src = streaming(ctx, "les_context_stream_stats");
    if (!src.ok()) return fail(src.status(), handle_error(ctx));
    const les::sched::SchedStats st = (*src)->stats();  // a copy taken under the source's lock
    les_stream_stats r;
    std::memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.budget_bytes = (*src)->budget_bytes();
    r.n_slots = (*src)->n_slots();
    r.prefetch_candidates = (*src)->prefetch_c();
    r.tokens = st.tokens;
    r.bytes_read = st.bytes_read;
    r.reads_issued = st.reads_issued;
    r.demand_experts = st.demand_experts;
    r.prefetch_experts = st.prefetch_experts;
    r.cache_hits = st.hits();
    r.inflight_hits = st.inflight_hits();
    r.cache_misses = st.misses();
    r.prefetch_unused_bytes = st.prefetch_unused_bytes;
    r.read_errors = st.read_errors;
    r.hit_rate = st.hit_rate();
    r.mean_recall = st.mean_recall(1);
    r.io_wait_seconds = st.io_wait_s;
    r.io_idle_seconds = st.io_idle_s;
    r.wall_seconds = st.wall_s;
    r.one_token_budget_bytes = (*src)->one_token_budget_bytes();
    r.io_backend = io_backend_of((*src)->backend_name());
    r.direct_io = (*src)->direct_io() ? 1 : 0;
    les::Status s = les::capi::copy_versioned_out(r, out, kStreamStatsV1, "les_stream_stats");
    if (!s.ok()) return fail(s, &ctx->last_error);
    return LES_OK;
  });
}

les_status les_context_stream_layer_stats(const les_context* ctx, int32_t layer, les_stream_layer_stats* out) {
  return guarded("les_context_stream_layer_stats", [&]() -> les_status {
    auto src = streaming(ctx, "les_context_stream_layer_stats");
    if (!src.ok()) return fail(src.status(), handle_error(ctx));
    const les::sched::SchedStats st = (*src)->stats();
    const auto& layers = st.layers;
    if (layer < 0 || static_cast<size_t>(layer) >= layers.size())
      return fail(les::invalid_argument_error("les_context_stream_layer_stats: layer " + std::to_string(layer) +
                                              " is outside [0, " + std::to_string(layers.size()) + ")"),
                  &ctx->last_error);
    const les::sched::LayerSchedStats& L = layers[static_cast<size_t>(layer)];
    les_stream_layer_stats r;
    std::memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.cache_hits = L.hits;
    r.inflight_hits = L.inflight_hits;
    r.cache_misses = L.misses;
    r.recall = L.recall();
    r.precision = L.precision();
    les::Status s = les::capi::copy_versioned_out(r, out, kStreamLayerStatsV1, "les_stream_layer_stats");
    if (!s.ok()) return fail(s, &ctx->last_error);
    return LES_OK;
  });
}

}  // extern "C"
