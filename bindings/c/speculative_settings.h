// Internal to bindings/c: the speculative-decoding settings of
// les_generate_params (lookup_ngram, draft_model, mtp, draft_max, draft_min) turned
// into the SpeculativeDecoder a les_context keeps across les_generate() calls,
// and its statistics copied into les_generate_stats.
#pragma once

#include <cstdint>
#include <memory>

#include "core/speculative/speculative_decoder.h"
#include "core/speculative/speculative_stats.h"
#include "les/les.h"
#include "util/status.h"

namespace les::capi {

struct ModelState;

// What a context keeps between calls. The decoder (its drafter, a draft
// model's context, the draft-length policy's measurements) is reused while the
// settings stay the same; `draft` holds the draft model's weights alive for
// as long as its drafter exists (declared first: destroyed last).
struct SpeculativeSlot {
  std::shared_ptr<ModelState> draft;
  int32_t lookup_ngram = 0;
  bool mtp = false;  // the decoder's drafter is the model's MTP head (the context keeps its hidden rows)
  int32_t draft_max = 0;
  int32_t draft_min = 0;
  std::unique_ptr<SpeculativeDecoder> decoder;
  SpeculativeStats last;  // the last les_generate()'s statistics (empty without a drafter)
};

// Checks the settings in `p` (ranges, at most one drafter) and returns the
// decoder to use for this call: null when no drafter is set, the slot's one
// when the settings are unchanged (its statistics cleared), else a new one
// (a draft model's vocabulary checked against the target's, its context made
// with the target's n_ctx; an MTP head made from the target's model, the
// context switched to keeping its hidden rows while the MTP drafter is in
// use). Errors: unsupported (mtp on a model without an MTP block, naming
// it), invalid_argument naming the
// les_generate_params field, or the draft model's vocabulary difference;
// Context::create's errors for the draft context. On error the slot is left
// empty (no drafter).
Result<SpeculativeDecoder*> prepare_speculative(les_context& ctx, const les_generate_params& p);

// Fills the speculative fields of `out` from `s` (zeros when it is empty).
void fill_speculative_stats(const SpeculativeStats& s, les_generate_stats& out);

}  // namespace les::capi
