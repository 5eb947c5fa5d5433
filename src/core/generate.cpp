// Generation loop; see generate.h.
#include "core/generate.h"

#include <algorithm>
#include <chrono>
#include <climits>

#include "core/speculative/speculative_decoder.h"

namespace les {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

std::vector<int32_t> end_of_generation_tokens(const Vocab& vocab) { return vocab.eog(); }

const char* stop_reason_name(StopReason r) noexcept {
  switch (r) {
    case StopReason::eos: return "eos";
    case StopReason::stop_string: return "stop_string";
    case StopReason::n_predict: return "n_predict";
    case StopReason::context_full: return "context_full";
    case StopReason::cancelled: return "cancelled";
  }
  return "?";
}

Result<GenerateStats> generate(Context& ctx, const Tokenizer& tokenizer, Sampler& sampler, std::string_view prompt,
                               const GenerateParams& params, const TextCallback& on_text) {
  TokenTextCallback adapter;
  if (on_text) adapter = [&on_text](int32_t, std::string_view text) { return text.empty() || on_text(text); };
  return generate_tokens(ctx, tokenizer, sampler, prompt, params, adapter);
}

Result<GenerateStats> generate_tokens(Context& ctx, const Tokenizer& tokenizer, Sampler& sampler,
                                      std::string_view prompt, const GenerateParams& params,
                                      const TokenTextCallback& on_token) {
  LES_ASSIGN_OR_RETURN(std::vector<int32_t> prompt_tokens,
                       tokenizer.tokenize(prompt, /*add_special=*/ctx.n_tokens() == 0, params.parse_special));
  return generate_from_ids(ctx, tokenizer, sampler, std::move(prompt_tokens), params, on_token);
}

Result<GenerateStats> generate_from_ids(Context& ctx, const Tokenizer& tokenizer, Sampler& sampler,
                                        std::vector<int32_t> prompt_tokens, const GenerateParams& params,
                                        const TokenTextCallback& on_token) {
  GenerateStats st;
  const bool fresh = ctx.n_tokens() == 0;
  for (size_t i = 0; i < prompt_tokens.size(); ++i)
    if (!tokenizer.vocab().is_valid_id(prompt_tokens[i]))
      return invalid_argument_error("generate: prompt token " + std::to_string(i) + " has id " +
                                    std::to_string(prompt_tokens[i]) + ", outside the vocabulary [0, " +
                                    std::to_string(tokenizer.vocab().n_tokens()) + ")");
  const bool has_pending = ctx.pending() >= 0;
  if (prompt_tokens.empty() && !has_pending && !ctx.has_logits())
    return invalid_argument_error(fresh ? "generate: the prompt is empty and the vocabulary adds no BOS token"
                                        : "generate: the prompt is empty and the context has no logits to continue "
                                          "from (a restored state keeps none): give a prompt, or call "
                                          "les_context_trim(ctx, les_context_n_past(ctx)) to have the last token "
                                          "evaluated again");
  st.n_prompt_tokens = static_cast<int32_t>(prompt_tokens.size());
  if (ctx.n_tokens() + st.n_prompt_tokens > ctx.n_ctx())
    return context_full_error("generate: the prompt has " + std::to_string(st.n_prompt_tokens) +
                                  " tokens but the context has room for " +
                                  std::to_string(ctx.n_ctx() - ctx.n_tokens()));
  // The penalty window sees what a single long generation would have seen.
  const auto history = ctx.tokens();
  const size_t window = static_cast<size_t>(std::max(sampler.params().penalty_last_n, 0));
  for (size_t i = history.size() - std::min(history.size(), window); i < history.size(); ++i) sampler.accept(history[i]);
  if (has_pending) sampler.accept(ctx.pending());
  for (int32_t t : prompt_tokens) sampler.accept(t);

  auto t0 = Clock::now();
  if (!prompt_tokens.empty() || has_pending) {
    Status s = ctx.decode(prompt_tokens);
    if (s.code() == StatusCode::cancelled) {  // interrupted between chunks: nothing of the prompt kept
      st.n_prompt_tokens = 0;
      st.prefill_seconds = seconds_since(t0);
      st.stop_reason = StopReason::cancelled;
      st.prefill_cancelled = true;
      return st;
    }
    if (!s.ok()) return s.with_context("prefill");
  }
  std::vector<int32_t> seq;  // the whole sequence so far, the conversation's earlier turns too (drafters search it)
  if (params.speculative) {
    seq.assign(ctx.tokens().begin(), ctx.tokens().end());
    // A drafter with its own state (a draft model) reads the prompt now, in
    // the prefill phase, not on its first draft inside the decode phase.
    params.speculative->prefill(ctx, seq);
  }
  st.prefill_seconds = seconds_since(t0);

  const std::vector<int32_t> eog = end_of_generation_tokens(tokenizer.vocab());
  // The text continues the prompt, so its first piece keeps its leading space.
  StreamingDetokenizer detok(tokenizer, /*strip_space_prefix=*/false);
  StopStringFilter stops(params.stop);
  auto emit = [&](int32_t tok, const std::string& text) { return !on_token || on_token(tok, text); };
  // The last delivered token while it is not evaluated; it stays pending in
  // the context when generation ends (if there is room for it).
  int32_t unevaluated = -1;
  auto finish = [&]() -> Result<GenerateStats> {
    if (unevaluated >= 0 && ctx.n_tokens() < ctx.n_ctx()) LES_RETURN_IF_ERROR(ctx.set_pending(unevaluated));
    return st;
  };

  // Tokens a speculative step produced and not yet delivered: ready[j] for
  // j < n_evaluated are accepted drafts whose positions (first_pos + j) the
  // verify pass kept; the last one is not evaluated (as a sampled token).
  std::vector<int32_t> ready;
  size_t next_ready = 0;
  int32_t n_evaluated = 0, first_pos = 0;
  bool from_decode = false;    // the current token came out of a decode-phase pass
  int32_t evaluated_pos = -1;  // the current token's position when a verify pass evaluated it, else -1
  bool flush = true;           // false after a cancel or a stop string: nothing more is emitted

  const auto decode_t0 = Clock::now();
  st.stop_reason = StopReason::n_predict;
  for (int32_t i = 0; params.n_predict < 0 || i < params.n_predict; ++i) {
    int32_t tok;
    evaluated_pos = -1;
    // An interrupt (Context::set_interrupt) stops here, before the next token
    // is committed: every token counted and kept was delivered. Accepted
    // drafts not delivered yet leave the context (their positions go).
    if (ctx.interrupt_requested()) {
      st.stop_reason = StopReason::cancelled;
      if (next_ready < ready.size()) {
        const int32_t keep = first_pos + std::min(static_cast<int32_t>(next_ready), n_evaluated);
        if (keep < ctx.n_past()) LES_RETURN_IF_ERROR(ctx.trim(keep));
      }
      break;
    }
    if (next_ready < ready.size()) {  // already sampled (and accepted) by the verifier
      const int32_t j = static_cast<int32_t>(next_ready++);
      tok = ready[static_cast<size_t>(j)];
      if (j < n_evaluated) evaluated_pos = first_pos + j;
    } else {
      t0 = Clock::now();
      Result<int32_t> next = sampler.sample(ctx.logits());
      st.sample_seconds += seconds_since(t0);
      if (!next.ok()) return next.status().with_context("sampling token " + std::to_string(i));
      tok = *next;
      sampler.accept(tok);
    }
    if (!params.ignore_eos && std::find(eog.begin(), eog.end(), tok) != eog.end()) {
      st.stop_reason = StopReason::eos;
      break;
    }
    st.tokens.push_back(tok);
    ++st.n_generated;
    if (from_decode) ++st.n_decoded;
    if (params.speculative) seq.push_back(tok);
    unevaluated = tok;
    Result<std::string> piece = detok.push(tok);
    if (!piece.ok()) return piece.status().with_context("detokenizing token " + std::to_string(tok));
    const std::string text = stops.push(*piece);
    if (!emit(tok, text)) {
      st.stop_reason = StopReason::cancelled;
      flush = false;
      break;
    }
    if (stops.stopped()) {
      st.stop_reason = StopReason::stop_string;
      flush = false;
      break;
    }
    if (params.n_predict >= 0 && i + 1 == params.n_predict) break;  // the last token needs no forward pass yet
    from_decode = true;
    if (evaluated_pos >= 0) {  // the verify pass already evaluated it
      unevaluated = -1;
      continue;
    }
    if (ctx.n_tokens() >= ctx.n_ctx()) {
      st.stop_reason = StopReason::context_full;
      break;
    }
    if (params.speculative) {
      const int32_t left = params.n_predict < 0 ? INT32_MAX : params.n_predict - i - 1;
      first_pos = ctx.n_past() + 1;
      t0 = Clock::now();
      Result<std::vector<int32_t>> r = params.speculative->step(ctx, sampler, seq, left);
      st.forward_seconds += seconds_since(t0);
      if (!r.ok()) return r.status().with_context("speculative decode after generated token " + std::to_string(i));
      unevaluated = -1;  // the pass evaluated tok; its last returned token is not evaluated
      ready = std::move(r).value();
      next_ready = 0;
      n_evaluated = static_cast<int32_t>(ready.size()) - 1;
      continue;
    }
    const int32_t one[1] = {tok};
    t0 = Clock::now();
    Status s = ctx.decode(one);
    st.forward_seconds += seconds_since(t0);
    if (!s.ok()) return s.with_context("decode of generated token " + std::to_string(i));
    unevaluated = -1;
  }
  // A stop at a token a verify pass evaluated: drop it and the accepted
  // drafts after it, so the sequence ends as plain decoding leaves it (the
  // last delivered token pending, a stopping EOS not in the context).
  if (evaluated_pos >= 0) LES_RETURN_IF_ERROR(ctx.trim(evaluated_pos));
  // The last verify pass's checkpoint of a recurrent state is of no further
  // use: later decodes would journal into it for nothing.
  if (params.speculative && ctx.sequence().has_recurrent()) ctx.drop_checkpoint();
  st.decode_seconds = seconds_since(decode_t0);
  if (!flush) return finish();
  // End of generation: release held-back bytes (incomplete UTF-8 and stop-string prefixes).
  std::string tail = stops.push(detok.flush());
  if (!stops.stopped()) tail += stops.flush();
  if (stops.stopped()) st.stop_reason = StopReason::stop_string;
  if (!tail.empty() && !emit(-1, tail)) st.stop_reason = StopReason::cancelled;
  return finish();
}

}  // namespace les
