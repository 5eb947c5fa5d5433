// create_context: the one place that wires a Context to its expert source.
// With an expert budget (StreamingParams::budget_bytes > 0) and a model that
// has routed experts, it builds a StreamingExpertSource (expert cache, I/O
// reactor, lookahead predictor) and hands it to the Context, which owns it;
// otherwise the Context runs on the model's resident experts. The C API
// (bindings/c), the les tool, the benches and the tests all create streaming
// contexts here, so none of them re-learns the wiring or holds a pointer whose
// lifetime depends on declaration order.
//
// Usage:
//   sched::StreamingParams sp;  sp.budget_bytes = 2 << 30;  sp.prefetch_c = -1;
//   auto ctx = sched::create_context(model, ContextParams{}, sp);
//   ... (*ctx)->decode(ids) ...
//   if (auto* s = sched::streaming_source(**ctx)) print(s->stats());
//
// Thread-safety: create_context and min_expert_budget_bytes are thread-safe
// for distinct contexts (one Model may be shared); the Context they return is
// thread-compatible (context.h).
#pragma once

#include <cstddef>
#include <memory>

#include "core/model/context.h"
#include "core/model/model.h"
#include "io/io_backend.h"
#include "sched/streaming_expert_source.h"
#include "util/status.h"

namespace les::sched {

// True when a context with these settings streams experts: a positive budget
// and a model with routed experts (a dense model has nothing to stream and
// runs resident whatever the budget).
bool streams_experts(const Model& model, const StreamingParams& sp) noexcept;

// A Context over `model` with its expert source wired in. When
// streams_experts(model, sp), the source is a StreamingExpertSource built from
// `sp` with its scratch sized for cp.n_batch (sp.n_batch_max is ignored) and
// reading through `backend` when given (tests: fault injection), else through
// a new reactor of kind sp.io. Otherwise the model's resident experts.
// Errors: those of Context::check_params and Context::create; of
// StreamingExpertSource::create, with context "expert streaming" (budget below
// the minimum: invalid_argument naming it; c outside [k, 2k]; backend
// unavailable: unsupported; io); invalid_argument when `backend` is given but
// the context does not stream experts.
Result<std::unique_ptr<Context>> create_context(const Model& model, const ContextParams& cp,
                                                const StreamingParams& sp = {},
                                                std::unique_ptr<io::IoBackend> backend = nullptr);

// The smallest sp.budget_bytes create_context accepts for `model` with these
// context parameters (bytes). Errors: as SlotLayout::from_model (no routed experts).
Result<size_t> min_expert_budget_bytes(const Model& model, const ContextParams& cp, const StreamingParams& sp = {});

// The streaming source of a context made by create_context (its statistics,
// run-time budget), or null when the context's experts are resident. Valid as
// long as the context.
StreamingExpertSource* streaming_source(Context& ctx) noexcept;
const StreamingExpertSource* streaming_source(const Context& ctx) noexcept;

}  // namespace les::sched
