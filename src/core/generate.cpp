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
  GenerateStats st;
  LES_ASSIGN_OR_RETURN(std::vector<int32_t> prompt_tokens,
                       tokenizer.tokenize(prompt, /*add_special=*/true, /*parse_special=*/false));
  if (prompt_tokens.empty())
    return invalid_argument_error("generate: the prompt is empty and the vocabulary adds no BOS token");
  st.n_prompt_tokens = static_cast<int32_t>(prompt_tokens.size());
  if (ctx.n_past() + st.n_prompt_tokens > ctx.n_ctx())
    return context_full_error("generate: the prompt has " + std::to_string(st.n_prompt_tokens) +
                                  " tokens but the context has room for " +
                                  std::to_string(ctx.n_ctx() - ctx.n_past()));
  for (int32_t t : prompt_tokens) sampler.accept(t);

  auto t0 = Clock::now();
  Status s = ctx.decode(prompt_tokens);
  if (!s.ok()) return s.with_context("prefill");
  st.prefill_seconds = seconds_since(t0);

  const std::vector<int32_t> eog = end_of_generation_tokens(tokenizer.vocab());
  // The text continues the prompt, so its first piece keeps its leading space.
  StreamingDetokenizer detok(tokenizer, /*strip_space_prefix=*/false);
  StopStringFilter stops(params.stop);
  auto emit = [&](int32_t tok, const std::string& text) { return !on_token || on_token(tok, text); };

  // Tokens a speculative step produced and not yet delivered: ready[j] for
  // j < n_evaluated are accepted drafts whose positions (first_pos + j) the
  // verify pass kept; the last one is not evaluated (as a sampled token).
  std::vector<int32_t> ready;
  size_t next_ready = 0;
  int32_t n_evaluated = 0, first_pos = 0;
  std::vector<int32_t> seq;  // the sequence so far (drafters search it)
  if (params.speculative) seq = prompt_tokens;
  bool from_decode = false;    // the current token came out of a decode-phase pass
  int32_t evaluated_pos = -1;  // the current token's position when a verify pass evaluated it, else -1
  bool flush = true;           // false after a cancel or a stop string: nothing more is emitted

  const auto decode_t0 = Clock::now();
  st.stop_reason = StopReason::n_predict;
  for (int32_t i = 0; params.n_predict < 0 || i < params.n_predict; ++i) {
    int32_t tok;
    evaluated_pos = -1;
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
    if (params.n_predict >= 0 && i + 1 == params.n_predict) break;  // the last token needs no forward pass
    from_decode = true;
    if (evaluated_pos >= 0) continue;  // the verify pass already evaluated it
    if (ctx.n_past() >= ctx.n_ctx()) {
      st.stop_reason = StopReason::context_full;
      break;
    }
    if (params.speculative) {
      const int32_t left = params.n_predict < 0 ? INT32_MAX : params.n_predict - i - 1;
      first_pos = ctx.n_past() + 1;
      Result<std::vector<int32_t>> r = params.speculative->step(ctx, sampler, seq, left);
      if (!r.ok()) return r.status().with_context("speculative decode after generated token " + std::to_string(i));
      ready = std::move(r).value();
      next_ready = 0;
      n_evaluated = static_cast<int32_t>(ready.size()) - 1;
      continue;
    }
    const int32_t one[1] = {tok};
    s = ctx.decode(one);
    if (!s.ok()) return s.with_context("decode of generated token " + std::to_string(i));
  }
  // A stop at a token a verify pass evaluated: drop it and the accepted
  // drafts after it, so the sequence ends as plain decoding leaves it (the
  // last delivered token, or a stopping EOS, not evaluated).
  if (evaluated_pos >= 0) LES_RETURN_IF_ERROR(ctx.trim(evaluated_pos));
  st.decode_seconds = seconds_since(decode_t0);
  if (!flush) return st;
  // End of generation: release held-back bytes (incomplete UTF-8 and stop-string prefixes).
  std::string tail = stops.push(detok.flush());
  if (!stops.stopped()) tail += stops.flush();
  if (stops.stopped()) st.stop_reason = StopReason::stop_string;
  if (!tail.empty() && !emit(-1, tail)) st.stop_reason = StopReason::cancelled;
  return st;
}

}  // namespace les
