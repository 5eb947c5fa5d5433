// C ABI: sampler parameters and the streaming generate call (les.h).
#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capi_internal.h"
#include "core/sampler.h"
#include "sampler_params.h"

using les::capi::Access;
using les::capi::ContextUse;
using les::capi::fail;
using les::capi::guarded;

namespace {
// The first les_generate_params ended at n_stop (sizeof included the tail
// padding where parse_special now sits; that byte is read only from callers
// whose struct_size reaches past it).
constexpr size_t kGenerateParamsV1 = offsetof(les_generate_params, prompt_tokens);
// 0.2's les_generate_params ended at n_prompt_tokens (callers before the
// speculative settings decode plainly: the defaults below).
static_assert(offsetof(les_generate_params, lookup_ngram) > kGenerateParamsV1);
constexpr size_t kSamplerParamsV1 = sizeof(les_sampler_params);
// les_generate_params before abort_callback was appended (older callers get none).
static_assert(offsetof(les_generate_params, abort_callback) > offsetof(les_generate_params, mtp));
// The first les_generate_stats ended at decode_tokens_per_second.
constexpr size_t kGenerateStatsV1 = offsetof(les_generate_stats, n_decoded);

les_stop_reason to_c_stop_reason(les::StopReason r) {
  switch (r) {
    case les::StopReason::eos: return LES_STOP_EOS;
    case les::StopReason::stop_string: return LES_STOP_STOP_STRING;
    case les::StopReason::n_predict: return LES_STOP_N_PREDICT;
    case les::StopReason::context_full: return LES_STOP_CONTEXT_FULL;
    case les::StopReason::cancelled: return LES_STOP_CANCELLED;
  }
  return LES_STOP_CANCELLED;
}
}  // namespace

extern "C" {

const char* les_stop_reason_name(les_stop_reason reason) {
  switch (reason) {
    case LES_STOP_EOS: return "eos";
    case LES_STOP_STOP_STRING: return "stop_string";
    case LES_STOP_N_PREDICT: return "n_predict";
    case LES_STOP_CONTEXT_FULL: return "context_full";
    case LES_STOP_CANCELLED: return "cancelled";
  }
  return "unknown";
}

les_generate_params les_generate_default_params(void) {
  les_generate_params p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = sizeof(les_generate_params);
  p.n_predict = 128;
  p.ignore_eos = false;
  p.sampler = les_sampler_default_params();
  p.stop = nullptr;
  p.n_stop = 0;
  p.parse_special = false;
  p.prompt_tokens = nullptr;
  p.n_prompt_tokens = 0;
  p.lookup_ngram = 0;
  p.draft_model = nullptr;
  p.draft_max = 8;
  p.draft_min = 0;
  p.mtp = false;
  p.abort_callback = nullptr;
  p.abort_user_data = nullptr;
  p.prompt_text = nullptr;
  p.prompt_text_len = 0;
  return p;
}

les_status les_generate(les_context* ctx, const char* prompt, const les_generate_params* params,
                        les_token_callback callback, void* user_data) {
  return les::capi::generate_common(ctx, "les_generate", prompt, params, callback, user_data, nullptr);
}

}  // extern "C"

namespace les::capi {
namespace {

// One les_generate call's settings, copied from the caller and checked.
struct GenerateRequest {
  les_generate_params p;
  const char* text = nullptr;  // the prompt's text: `prompt`, or prompt_text's bytes (NUL bytes included)
  size_t text_len = 0;
  std::optional<Sampler> sampler;
  GenerateParams gp;
};

// Copies and checks `params` (the prompt checks are `custom`'s when given),
// builds the sampler and the speculative decoder. Errors: invalid_argument
// naming the field, and the sampler's and the speculative setup's.
Result<GenerateRequest> read_request(les_context& ctx, const std::string& fn, const char* prompt,
                                     const les_generate_params* params, const CustomPrompt* custom) {
  GenerateRequest r;
  r.p = les_generate_default_params();
  les_generate_params& p = r.p;
  LES_RETURN_IF_ERROR(copy_versioned_in(params, p, kGenerateParamsV1, "les_generate_params"));
  if (params != nullptr && params->struct_size <= kGenerateParamsV1) p.parse_special = false;
  r.text = prompt;
  r.text_len = prompt != nullptr ? std::strlen(prompt) : 0;
  if (p.prompt_text != nullptr) {
    if ((prompt != nullptr && prompt[0] != '\0') || p.prompt_tokens != nullptr)
      return invalid_argument_error(
          fn + ": with les_generate_params.prompt_text set, prompt must be NULL or \"\" and prompt_tokens NULL");
    r.text = p.prompt_text;
    r.text_len = p.prompt_text_len;
  }
  if (custom != nullptr) {
    Status s = custom->check(p, r.text, r.text_len);
    if (!s.ok()) return s.with_context(fn);
  } else {
    if (p.prompt_tokens == nullptr && r.text == nullptr) return invalid_argument_error("les_generate: prompt is NULL");
    if (p.prompt_tokens != nullptr && ((prompt != nullptr && prompt[0] != '\0') || p.n_prompt_tokens < 0))
      return invalid_argument_error(
          "les_generate: with prompt_tokens set, prompt must be NULL or \"\" and n_prompt_tokens >= 0");
  }
  les_sampler_params sp = les_sampler_default_params();
  LES_RETURN_IF_ERROR(copy_versioned_in(&p.sampler, sp, kSamplerParamsV1, "les_sampler_params"));
  if (p.n_stop < 0 || (p.n_stop > 0 && p.stop == nullptr))
    return invalid_argument_error("les_generate_params: stop is NULL but n_stop > 0");
  LES_ASSIGN_OR_RETURN(Sampler sampler, Sampler::create(to_sampler_params(sp)));
  r.sampler.emplace(std::move(sampler));
  Result<SpeculativeDecoder*> speculative = prepare_speculative(ctx, p);
  if (!speculative.ok()) return speculative.status().with_context(fn);
  r.gp.n_predict = p.n_predict;
  r.gp.ignore_eos = p.ignore_eos;
  r.gp.parse_special = p.parse_special;
  r.gp.speculative = *speculative;
  for (int32_t i = 0; i < p.n_stop; ++i) {
    if (p.stop[i] == nullptr)
      return invalid_argument_error("les_generate_params: stop[" + std::to_string(i) + "] is NULL");
    r.gp.stop.emplace_back(p.stop[i]);
  }
  return r;
}

// The call's abort callback joins les_context_cancel() in the Context's
// interrupt hook (les_context::poll_interrupt) for the call's duration.
class AbortScope {
 public:
  AbortScope(les_context& ctx, les_abort_callback f, void* user_data) : ctx_(ctx) {
    ctx_.call_abort = f;
    ctx_.call_abort_user_data = user_data;
    ctx_.stopped_by = les_context::StoppedBy::nothing;
  }
  ~AbortScope() { ctx_.call_abort = nullptr; }
  AbortScope(const AbortScope&) = delete;
  AbortScope& operator=(const AbortScope&) = delete;

 private:
  les_context& ctx_;
};

// Who interrupted the call, for the message.
std::string stopped_by(const les_context& ctx) {
  return ctx.stopped_by == les_context::StoppedBy::abort_callback ? "the abort callback" : "les_context_cancel()";
}

// A cancelled call's statistics and error: before the prefill started, or
// during the prompt's evaluation (nothing of it kept).
Status cancelled_early(les_context& ctx, const std::string& fn, bool in_prefill, double prefill_seconds) {
  ctx.last_stats = GenerateStats();
  ctx.last_stats.stop_reason = StopReason::cancelled;
  ctx.last_stats.prefill_cancelled = in_prefill;
  ctx.last_stats.prefill_seconds = prefill_seconds;
  return cancelled_error(fn + ": cancelled by " + stopped_by(ctx) +
                         (in_prefill ? " during the prompt's evaluation (nothing of it kept)" : " before it started"));
}

// What a finished generation returns: OK, or the stop that is an error in
// the C API (a cancel, a full context) with its message.
Status outcome(const les_context& ctx, const std::string& fn, const GenerateStats& st) {
  if (st.stop_reason == StopReason::cancelled && ctx.stopped_by != les_context::StoppedBy::nothing)
    return cancelled_error(fn + ": cancelled by " + stopped_by(ctx) +
                           (st.prefill_cancelled ? std::string(" during the prompt's evaluation (nothing of it kept)")
                                                 : " after " + std::to_string(st.n_generated) + " generated tokens"));
  if (st.stop_reason == StopReason::cancelled)
    return cancelled_error(fn + ": the token callback returned false after " + std::to_string(st.n_generated) +
                           " generated tokens");
  if (st.stop_reason == StopReason::context_full) {
    // The last delivered token had no position left: it was not kept.
    const int32_t n = st.n_generated;
    return context_full_error(fn + ": the context is full (n_ctx " + std::to_string(ctx.ctx->n_ctx()) + "): " +
                              std::to_string(n) + (n == 1 ? " token" : " tokens") + " generated, " +
                              (n == 1 ? "not kept" : "the last not kept") +
                              " (no position left); les_context_trim or les_context_reset makes room");
  }
  return Status();
}

// les_generate's work, every failure a Status (generate_common records it).
Status generate_checked(les_context& ctx, const std::string& fn, const char* prompt, const les_generate_params* params,
                        les_token_callback callback, void* user_data, const CustomPrompt* custom) {
  LES_ASSIGN_OR_RETURN(GenerateRequest req, read_request(ctx, fn, prompt, params, custom));
  const AbortScope abort_scope(ctx, req.p.abort_callback, req.p.abort_user_data);
  // A cancel is pending until a call consumes it (les_generate.h): one
  // issued before this call started stops it here, before the prefill.
  if (ctx.poll_interrupt()) return cancelled_early(ctx, fn, false, 0.0);
  const TokenTextCallback on_token = [&](int32_t tok, std::string_view text) {
    return callback == nullptr || callback(tok, text.data(), text.size(), user_data);
  };
  Context& c = *ctx.ctx;
  const Tokenizer& tokenizer = *ctx.model->tokenizer;
  Result<GenerateStats> stats = GenerateStats();
  if (custom != nullptr) {  // the caller's prefill, then generation continues from the context
    const auto t0 = std::chrono::steady_clock::now();
    Result<int32_t> n = custom->prefill(c);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (n.status().code() == StatusCode::cancelled) return cancelled_early(ctx, fn, true, secs);  // between chunks
    if (!n.ok()) return n.status().with_context(fn + ": prefill");
    stats = generate_from_ids(c, tokenizer, *req.sampler, {}, req.gp, on_token);
    if (stats.ok()) {
      stats->n_prompt_tokens = *n;
      stats->prefill_seconds += secs;
    }
  } else if (req.p.prompt_tokens != nullptr) {
    std::vector<int32_t> ids(req.p.prompt_tokens, req.p.prompt_tokens + req.p.n_prompt_tokens);
    stats = generate_from_ids(c, tokenizer, *req.sampler, std::move(ids), req.gp, on_token);
  } else {
    stats = generate_tokens(c, tokenizer, *req.sampler, std::string_view(req.text, req.text_len), req.gp, on_token);
  }
  if (req.gp.speculative != nullptr) ctx.spec.last = req.gp.speculative->stats();
  LES_RETURN_IF_ERROR(stats.status());
  ctx.last_stats = *stats;
  ctx.last_seed = req.sampler->params().seed;
  ctx.model->logger->info("generated {} tokens: prefill {:.1f} tok/s, decode {:.1f} tok/s ({})", stats->n_generated,
                          stats->prefill_tok_per_s(), stats->decode_tok_per_s(), stop_reason_name(stats->stop_reason));
  return outcome(ctx, fn, *stats);
}

}  // namespace

les_status generate_common(les_context* ctx, const char* fn_name, const char* prompt, const les_generate_params* params,
                           les_token_callback callback, void* user_data, const CustomPrompt* custom) {
  const std::string fn = fn_name;
  if (ctx == nullptr) {
    return guarded(fn_name, [&] { return fail(invalid_argument_error(fn + ": ctx is NULL")); });
  }
  return guarded(
      fn_name,
      [&]() -> les_status {
        ContextUse use(ctx->in_use, fn_name, Access::write);
        if (!use.ok()) return fail(use.status());
        ctx->last_error.clear();
        const Status s = generate_checked(*ctx, fn, prompt, params, callback, user_data, custom);
        return s.ok() ? LES_OK : fail(s, &ctx->last_error);
      },
      &ctx->last_error);
}

}  // namespace les::capi

extern "C" {

les_status les_context_generate_stats(const les_context* ctx, les_generate_stats* out) {
  return guarded("les_context_generate_stats", [&]() -> les_status {
    if (ctx == nullptr || out == nullptr)
      return fail(les::invalid_argument_error("les_context_generate_stats: ctx or out is NULL"),
                  ctx != nullptr ? &ctx->last_error : nullptr);
    ContextUse use(ctx->in_use, "les_context_generate_stats", Access::read);
    if (!use.ok()) return fail(use.status());
    const les::GenerateStats& s = ctx->last_stats;
    les_generate_stats r;
    std::memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.n_prompt_tokens = s.n_prompt_tokens;
    r.n_generated = s.n_generated;
    r.prefill_seconds = s.prefill_seconds;
    r.decode_seconds = s.decode_seconds;
    r.prefill_tokens_per_second = s.prefill_tok_per_s();
    r.decode_tokens_per_second = s.decode_tok_per_s();
    r.n_decoded = s.n_decoded;
    r.forward_seconds = s.forward_seconds;
    r.stop_reason = to_c_stop_reason(s.stop_reason);
    r.seed = ctx->last_seed;
    les::capi::fill_speculative_stats(ctx->spec.last, r);
    les::Status st = les::capi::copy_versioned_out(r, out, kGenerateStatsV1, "les_generate_stats");
    if (!st.ok()) return fail(st, &ctx->last_error);
    return LES_OK;
  });
}

}  // extern "C"
