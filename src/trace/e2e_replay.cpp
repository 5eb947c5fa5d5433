#include "trace/e2e_replay.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sched/context_factory.h"
#include "trace/process_usage.h"
#include "trace/trace_routing.h"

namespace les::trace {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Status check_trace_shape(const Model& model, const RouteTrace& trace) {
  const Hparams& hp = model.hparams();
  return TraceRouting::create(trace, hp.n_layer, hp.n_expert, hp.n_expert_used, -1, 1, 1).status();
}

Result<E2eResult> replay_end_to_end(const Model& model, const RouteTrace& trace, const E2eOptions& o) {
  const Hparams& hp = model.hparams();
  const bool lookahead = o.budget_bytes > 0 && o.prefetch_c != 0;
  if ((lookahead && !(o.recall >= 0 && o.recall <= 1)) || o.decode_tokens < 0 || o.n_threads <= 0 ||
      o.prefetch_c < -1)
    return invalid_argument_error("end-to-end replay: recall " + std::to_string(o.recall) + " (with lookahead: 0..1), " +
                                  "prefetch c " + std::to_string(o.prefetch_c) + ", decode tokens " +
                                  std::to_string(o.decode_tokens) + ", threads " + std::to_string(o.n_threads));
  // Shapes first (before a context is made), with no predictor model.
  LES_ASSIGN_OR_RETURN(std::unique_ptr<TraceRouting> probe,
                       TraceRouting::create(trace, hp.n_layer, hp.n_expert, hp.n_expert_used, -1, 1, o.seed));
  const int32_t n_prompt = probe->n_prompt_tokens();
  const int32_t n_decode =
      o.decode_tokens > 0 ? std::min(o.decode_tokens, probe->n_decode_tokens()) : probe->n_decode_tokens();

  std::unique_ptr<TraceRouting> routing;  // made once the context's c is known
  ContextParams cp;
  cp.n_threads = o.n_threads;
  cp.n_ctx = n_prompt + n_decode + 8;
  cp.n_batch = n_prompt;
  sched::StreamingParams sp;
  sp.budget_bytes = o.budget_bytes;
  sp.policy = o.policy;
  // LES's default c = k + 2, with k the top-k the forward pass computes
  // (the trace's), clamped to the engine's [k_model, 2 k_model].
  sp.prefetch_c = o.prefetch_c >= 0 ? o.prefetch_c
                                    : std::clamp(probe->n_expert_used() + 2, hp.n_expert_used,
                                                 std::min(2 * hp.n_expert_used, hp.n_expert));
  sp.use_direct_io = o.direct_io;
  sp.prefetch_gate = o.prefetch_gate;
  if (o.prefetch_c == 0) sp.layer0 = sched::Layer0Lookahead::none;
  sp.prediction_override = [&routing](int32_t layer, int64_t row0, int64_t n_rows, std::vector<int32_t>& ids) {
    if (routing) routing->predict(layer, row0, n_rows, ids);
  };
  LES_ASSIGN_OR_RETURN(std::unique_ptr<Context> ctx, sched::create_context(model, cp, sp));
  sched::StreamingExpertSource* src = sched::streaming_source(*ctx);
  const int32_t c = src ? src->prefetch_c() : 0;
  LES_ASSIGN_OR_RETURN(routing, TraceRouting::create(trace, hp.n_layer, hp.n_expert, hp.n_expert_used,
                                                     c > 0 ? o.recall : -1, std::max(c, 1), o.seed, o.fillers));
  TraceRouting* tr = routing.get();
  ctx->set_routing_override([tr](const RoutingOverrideRequest& r) { return tr->apply(r); });

  E2eResult res;
  res.prompt_tokens = n_prompt;
  res.decode_tokens = n_decode;
  res.prefetch_c = c;
  std::vector<int32_t> prompt(static_cast<size_t>(n_prompt));
  for (int32_t i = 0; i < n_prompt; ++i)
    prompt[static_cast<size_t>(i)] =
        static_cast<int32_t>((7919ull * static_cast<uint64_t>(i + 1)) % static_cast<uint64_t>(hp.n_vocab));
  tr->begin_prefill();
  auto t0 = std::chrono::steady_clock::now();
  LES_RETURN_IF_ERROR(ctx->decode(prompt));
  res.prefill_seconds = seconds_since(t0);
  if (src) src->reset_stats();

  std::mt19937 feed(777);
  const ProcessUsage u0 = process_usage_now();
  for (int32_t i = 0; i < n_decode; ++i) {
    tr->begin_decode(i);
    const int32_t one[1] = {static_cast<int32_t>(feed() % static_cast<uint32_t>(hp.n_vocab))};
    t0 = std::chrono::steady_clock::now();
    LES_RETURN_IF_ERROR(ctx->decode(one));
    res.decode_seconds += seconds_since(t0);
  }
  const ProcessUsage u1 = process_usage_now();
  res.user_cpu_seconds = u1.user - u0.user;
  res.sys_cpu_seconds = u1.sys - u0.sys;
  res.major_faults = u1.major_faults - u0.major_faults;
  res.involuntary_switches = u1.involuntary_switches - u0.involuntary_switches;
  res.run_queue_wait_seconds = std::max(0.0, u1.run_delay - u0.run_delay);
  res.other_cpu_seconds =
      std::max(0.0, (u1.machine_busy - u0.machine_busy) - res.user_cpu_seconds - res.sys_cpu_seconds);
  if (src) {
    const sched::SchedStats& st = src->stats();
    res.bytes_read = st.bytes_read;
    res.prefetch_experts = st.prefetch_experts;
    res.demand_experts = st.demand_experts;
    res.hits = st.hits();
    res.inflight_hits = st.inflight_hits();
    res.misses = st.misses();
    res.prefetch_unused_bytes = st.prefetch_unused_bytes;
    res.prefetch_gated = st.prefetch_gated;
    res.hit_rate = st.hit_rate();
    res.io_wait_seconds = st.io_wait_s;
    res.mean_recall = st.mean_recall(1);
  }
  return res;
}

}  // namespace les::trace
