// Generation loop; see generate.h.
#include "core/generate.h"

#include <algorithm>
#include <chrono>

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
    return invalid_argument_error("generate: the prompt has " + std::to_string(st.n_prompt_tokens) +
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

  st.stop_reason = StopReason::n_predict;
  for (int32_t i = 0; params.n_predict < 0 || i < params.n_predict; ++i) {
    t0 = Clock::now();
    Result<int32_t> next = sampler.sample(ctx.logits());
    st.sample_seconds += seconds_since(t0);
    if (!next.ok()) return next.status().with_context("sampling token " + std::to_string(i));
    const int32_t tok = *next;
    sampler.accept(tok);
    if (!params.ignore_eos && std::find(eog.begin(), eog.end(), tok) != eog.end()) {
      st.stop_reason = StopReason::eos;
      break;
    }
    st.tokens.push_back(tok);
    ++st.n_generated;
    Result<std::string> piece = detok.push(tok);
    if (!piece.ok()) return piece.status().with_context("detokenizing token " + std::to_string(tok));
    const std::string text = stops.push(*piece);
    if (!emit(tok, text)) {
      st.stop_reason = StopReason::cancelled;
      return st;
    }
    if (stops.stopped()) {
      st.stop_reason = StopReason::stop_string;
      return st;
    }
    if (params.n_predict >= 0 && i + 1 == params.n_predict) break;  // the last token needs no forward pass
    if (ctx.n_past() >= ctx.n_ctx()) {
      st.stop_reason = StopReason::context_full;
      break;
    }
    const int32_t one[1] = {tok};
    t0 = Clock::now();
    s = ctx.decode(one);
    if (!s.ok()) return s.with_context("decode of generated token " + std::to_string(i));
    st.decode_seconds += seconds_since(t0);
    ++st.n_decoded;
  }
  // End of generation: release held-back bytes (incomplete UTF-8 and stop-string prefixes).
  std::string tail = stops.push(detok.flush());
  if (!stops.stopped()) tail += stops.flush();
  if (stops.stopped()) st.stop_reason = StopReason::stop_string;
  if (!tail.empty() && !emit(-1, tail)) st.stop_reason = StopReason::cancelled;
  return st;
}

}  // namespace les
