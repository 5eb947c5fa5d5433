#include "sched/context_factory.h"

#include <algorithm>
#include <utility>

namespace les::sched {
namespace {

// The streaming parameters as they apply to a context with these parameters:
// the scheduler's scratch is sized for the context's prefill chunk.
StreamingParams for_context(const ContextParams& cp, StreamingParams sp) {
  sp.n_batch_max = std::max(cp.n_batch, 1);
  return sp;
}

}  // namespace

bool streams_experts(const Model& model, const StreamingParams& sp) noexcept {
  return sp.budget_bytes > 0 && model.hparams().n_expert > 0;
}

Result<std::unique_ptr<Context>> create_context(const Model& model, const ContextParams& cp,
                                                const StreamingParams& sp, std::unique_ptr<io::IoBackend> backend) {
  LES_RETURN_IF_ERROR(Context::check_params(cp));
  if (!streams_experts(model, sp)) {
    if (backend)
      return invalid_argument_error("create_context: an I/O backend was given but the context does not stream "
                                    "experts (budget 0 or a model without routed experts)");
    return Context::create(model, cp);
  }
  auto src = StreamingExpertSource::create(model, for_context(cp, sp), std::move(backend));
  if (!src.ok()) return src.status().with_context("expert streaming");
  return Context::create(model, cp, std::move(src).value());
}

Result<size_t> min_expert_budget_bytes(const Model& model, const ContextParams& cp, const StreamingParams& sp) {
  return StreamingExpertSource::min_budget_bytes(model, for_context(cp, sp));
}

StreamingExpertSource* streaming_source(Context& ctx) noexcept {
  return dynamic_cast<StreamingExpertSource*>(&ctx.expert_source());
}

const StreamingExpertSource* streaming_source(const Context& ctx) noexcept {
  return dynamic_cast<const StreamingExpertSource*>(&ctx.expert_source());
}

}  // namespace les::sched
