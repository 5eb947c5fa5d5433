// C ABI: speculative decoding settings of les_generate (les_generate.h) and
// les_model_check_draft.
#include <algorithm>
#include <string>

#include "capi_internal.h"
#include "core/model/forward.h"
#include "core/speculative/draft_model.h"
#include "core/speculative/mtp_drafter.h"
#include "core/speculative/prompt_lookup.h"
#include "speculative_settings.h"

using les::capi::fail;
using les::capi::guarded;

namespace les::capi {
namespace {

constexpr int32_t kMaxLookupNgram = kPromptLookupMaxNgram;  // PromptLookupParams' bound
constexpr int32_t kMaxDraftMax = kMaxDraftTokens;           // SpeculativeParams' bound

Status check_ranges(const les_generate_params& p) {
  if (p.lookup_ngram < 0 || p.lookup_ngram > kMaxLookupNgram)
    return invalid_argument_error("les_generate_params.lookup_ngram is " + std::to_string(p.lookup_ngram) +
                                  ": 0 (off) or 1.." + std::to_string(kMaxLookupNgram) + " expected");
  const int n_drafters = (p.lookup_ngram > 0 ? 1 : 0) + (p.draft_model != nullptr ? 1 : 0) + (p.mtp ? 1 : 0);
  if (n_drafters > 1) {
    std::string set = p.lookup_ngram > 0 ? "lookup_ngram" : "";
    if (p.draft_model != nullptr) set += std::string(set.empty() ? "" : " and ") + "draft_model";
    if (p.mtp) set += " and mtp";
    return invalid_argument_error("les_generate_params: " + set +
                                  " are both set; speculative decoding uses one drafter");
  }
  if (p.draft_max < 1 || p.draft_max > kMaxDraftMax)
    return invalid_argument_error("les_generate_params.draft_max is " + std::to_string(p.draft_max) + ": 1.." +
                                  std::to_string(kMaxDraftMax) + " expected");
  if (p.draft_min < 0 || p.draft_min > p.draft_max)
    return invalid_argument_error("les_generate_params.draft_min is " + std::to_string(p.draft_min) +
                                  ": 0..draft_max (" + std::to_string(p.draft_max) + ") expected");
  return Status();
}

// A slot's MTP drafter is going: the context stops keeping hidden rows.
void drop_mtp(les_context& ctx) {
  SpeculativeSlot& slot = ctx.spec;
  if (!slot.mtp) return;
  slot.decoder.reset();
  slot.mtp = false;
  ctx.ctx->set_output_hidden(false);
}

}  // namespace

Result<SpeculativeDecoder*> prepare_speculative(les_context& ctx, const les_generate_params& p) {
  LES_RETURN_IF_ERROR(check_ranges(p));
  SpeculativeSlot& slot = ctx.spec;
  slot.last.clear();
  if (p.lookup_ngram == 0 && p.draft_model == nullptr && !p.mtp) {
    drop_mtp(ctx);
    return static_cast<SpeculativeDecoder*>(nullptr);
  }
  if (p.mtp) {
    const auto held = ctx.ctx->tokens();
    if (std::find(held.begin(), held.end(), kEmbeddingToken) != held.end())
      return unsupported_error(
          "les_generate_params.mtp: the context holds image positions (filled from embedding rows) and the MTP "
          "head reads a token id at every position; use lookup_ngram or draft_model, or no drafter");
  }
  if (p.draft_model != nullptr && p.draft_model->state == nullptr)
    return invalid_argument_error("les_generate_params.draft_model is not a loaded model");
  const ModelState* draft = p.draft_model != nullptr ? p.draft_model->state.get() : nullptr;
  if (slot.decoder && slot.draft.get() == draft && slot.lookup_ngram == p.lookup_ngram &&
      slot.mtp == p.mtp && slot.draft_max == p.draft_max && slot.draft_min == p.draft_min) {
    slot.decoder->reset_stats();
    return slot.decoder.get();
  }
  drop_mtp(ctx);
  slot.decoder.reset();  // before its draft model's reference goes
  slot.draft.reset();
  std::unique_ptr<Drafter> drafter;
  if (p.mtp) {
    // The head reads the target's final hidden rows: keep them from now on
    // (a fresh context's prefill gives the head the prompt's rows).
    ctx.ctx->set_output_hidden(true);
    auto d = MtpDrafter::create(*ctx.ctx);
    if (!d.ok()) {
      ctx.ctx->set_output_hidden(false);
      return d.status().with_context("les_generate_params.mtp");
    }
    drafter = std::move(d).value();
  } else if (draft != nullptr) {
    DraftModelParams dp;
    dp.n_ctx = ctx.ctx->n_ctx();
    auto d = DraftModelDrafter::create(ctx.model->tokenizer->vocab(), *draft->model, dp);
    if (!d.ok()) return d.status();
    drafter = std::move(d).value();
  } else {
    PromptLookupParams lp;
    lp.ngram_max = p.lookup_ngram;
    auto d = PromptLookupDrafter::create(lp);
    if (!d.ok()) return d.status();
    drafter = std::move(d).value();
  }
  SpeculativeParams sp;
  sp.draft_max = p.draft_max;
  sp.draft_min = p.draft_min;
  auto dec = SpeculativeDecoder::create(std::move(drafter), sp);
  if (!dec.ok()) return dec.status();
  if (draft != nullptr) slot.draft = p.draft_model->state;
  slot.lookup_ngram = p.lookup_ngram;
  slot.mtp = p.mtp;
  slot.draft_max = p.draft_max;
  slot.draft_min = p.draft_min;
  slot.decoder = std::move(dec).value();
  return slot.decoder.get();
}

void fill_speculative_stats(const SpeculativeStats& s, les_generate_stats& out) {
  out.n_target_passes = static_cast<int32_t>(s.passes.size());
  out.n_verify_passes = s.n_spec_passes;
  out.n_drafted = s.total.n_drafted;
  out.n_draft_verified = s.total.n_verified;
  out.n_draft_accepted = s.total.n_accepted;
  out.n_pass_tokens = s.total.n_emitted;
  out.union_experts = s.total.union_experts;
  out.union_bytes = s.total.union_bytes;
  out.expert_bytes_read = s.total.bytes_read;
  out.draft_seconds = s.total.draft_seconds;
}

}  // namespace les::capi

extern "C" {

les_status les_model_check_draft(const les_model* target, const les_model* draft) {
  return guarded("les_model_check_draft", [&]() -> les_status {
    if (target == nullptr || draft == nullptr || target->state == nullptr || draft->state == nullptr)
      return fail(les::invalid_argument_error("les_model_check_draft: target or draft is NULL"));
    les::Status s = les::check_same_vocab(target->state->tokenizer->vocab(), draft->state->tokenizer->vocab());
    if (!s.ok()) return fail(s);
    if (draft->state->model->hparams().n_vocab != target->state->tokenizer->vocab().n_tokens())
      return fail(les::invalid_argument_error(
          "draft model: its output has " + std::to_string(draft->state->model->hparams().n_vocab) +
          " logits for a vocabulary of " + std::to_string(target->state->tokenizer->vocab().n_tokens())));
    return LES_OK;
  });
}

}  // extern "C"
