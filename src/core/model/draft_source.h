// DraftSource: where speculative decoding gets its draft tokens. A small
// interface for the speculative-decoding work (issue 13) to adopt or replace;
// the MTP head of qwen35moe (mtp_drafter.h) is its first implementation.
//
// Protocol with a target Context that keeps its final hidden rows
// (ContextParams::output_hidden) and decodes greedily:
//  1. After the target decoded tokens at positions pos0 .. pos0 + m - 1 (the
//     prompt, or the accepted part of a verify batch), accept(pos0, tokens,
//     hidden) with the target's hidden rows of those positions
//     (Context::hidden_all).
//  2. The target picks `next`, the token of position pos0 + m.
//     draft(next, n_draft) proposes tokens for positions pos0 + m + 1, ...
//  3. The target checkpoints, decodes [next, drafts...] as one verify batch,
//     keeps next plus the longest prefix of drafts equal to its own greedy
//     choices, rolls back (Context::trim) to that length and calls accept()
//     from position pos0 + m with the kept tokens and their hidden rows.
// Verification decides every token, so drafts never change the output.
//
// Thread-safety: thread-compatible (the caller's decode thread).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "util/status.h"

namespace les {

class DraftSource {
 public:
  virtual ~DraftSource() = default;
  // The target accepted `tokens` at positions pos0 .. and computed `hidden`
  // (tokens.size() x n_embd final hidden rows after output_norm). pos0 must be
  // the end of the previous accept() (or 0 after reset()). Errors:
  // invalid_argument (a gap or overlap in positions, sizes), errors of the
  // draft model; the source is then reset.
  virtual Status accept(int32_t pos0, std::span<const int32_t> tokens, std::span<const float> hidden) = 0;
  // Up to n_draft tokens that follow `next` (the target's token at the
  // position after the last accepted one, not yet decoded by the target).
  // Errors: invalid_argument (n_draft < 1, next out of range), context_full.
  virtual Result<std::vector<int32_t>> draft(int32_t next, int32_t n_draft) = 0;
  // Back to an empty sequence.
  virtual void reset() noexcept = 0;
};

}  // namespace les
