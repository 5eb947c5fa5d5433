// Generation loop; see generate.h.
#include "core/generate.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <optional>

#include "core/token_supply.h"

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

namespace {

// The prompt fits and can be generated from. Errors: as generate_from_ids.
Status check_prompt(const Context& ctx, const Vocab& vocab, const std::vector<int32_t>& prompt_tokens) {
  for (size_t i = 0; i < prompt_tokens.size(); ++i)
    if (!vocab.is_valid_id(prompt_tokens[i]))
      return invalid_argument_error("generate: prompt token " + std::to_string(i) + " has id " +
                                    std::to_string(prompt_tokens[i]) + ", outside the vocabulary [0, " +
                                    std::to_string(vocab.n_tokens()) + ")");
  if (prompt_tokens.empty() && ctx.pending() < 0 && !ctx.has_logits())
    return invalid_argument_error(ctx.n_tokens() == 0
                                      ? "generate: the prompt is empty and the vocabulary adds no BOS token"
                                      : "generate: the prompt is empty and the context has no logits to continue "
                                        "from (a restored state keeps none): give a prompt, or call "
                                        "les_context_trim(ctx, les_context_n_past(ctx)) to have the last token "
                                        "evaluated again");
  const int32_t n = static_cast<int32_t>(prompt_tokens.size());
  if (ctx.n_tokens() + n > ctx.n_ctx())
    return context_full_error("generate: the prompt has " + std::to_string(n) + " tokens but the context has room for " +
                              std::to_string(ctx.n_ctx() - ctx.n_tokens()));
  return Status();
}

// The penalty window sees what a single long generation would have seen:
// the context's last tokens, its pending one and the prompt.
void prime_sampler(Sampler& sampler, const Context& ctx, const std::vector<int32_t>& prompt_tokens) {
  const auto history = ctx.tokens();
  const size_t window = static_cast<size_t>(std::max(sampler.params().penalty_last_n, 0));
  for (size_t i = history.size() - std::min(history.size(), window); i < history.size(); ++i) sampler.accept(history[i]);
  if (ctx.pending() >= 0) sampler.accept(ctx.pending());
  for (int32_t t : prompt_tokens) sampler.accept(t);
}

}  // namespace

Result<GenerateStats> generate_from_ids(Context& ctx, const Tokenizer& tokenizer, Sampler& sampler,
                                        std::vector<int32_t> prompt_tokens, const GenerateParams& params,
                                        const TokenTextCallback& on_token) {
  LES_RETURN_IF_ERROR(check_prompt(ctx, tokenizer.vocab(), prompt_tokens));
  GenerateStats st;
  st.n_prompt_tokens = static_cast<int32_t>(prompt_tokens.size());
  const bool has_pending = ctx.pending() >= 0;
  prime_sampler(sampler, ctx, prompt_tokens);

  PlainTokenSupply plain;
  std::optional<SpeculativeTokenSupply> speculative;
  if (params.speculative) speculative.emplace(*params.speculative);
  TokenSupply& supply = speculative ? static_cast<TokenSupply&>(*speculative) : plain;

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
  supply.prefill(ctx);
  st.prefill_seconds = seconds_since(t0);

  const std::vector<int32_t> eog = end_of_generation_tokens(tokenizer.vocab());
  // The text continues the prompt, so its first piece keeps its leading space.
  StreamingDetokenizer detok(tokenizer, /*strip_space_prefix=*/false);
  StopStringFilter stops(params.stop);
  auto emit = [&](int32_t tok, const std::string& text) { return !on_token || on_token(tok, text); };
  // The last delivered token while it is not evaluated; it stays pending in
  // the context when generation ends (if there is room for it).
  int32_t unevaluated = -1;
  bool flush = true;  // false after a cancel or a stop string: nothing more is emitted

  const auto decode_t0 = Clock::now();
  st.stop_reason = StopReason::n_predict;
  for (int32_t i = 0; params.n_predict < 0 || i < params.n_predict; ++i) {
    // An interrupt (Context::set_interrupt) stops here, before the next token
    // is committed: every token counted and kept was delivered.
    if (ctx.interrupt_requested()) {
      st.stop_reason = StopReason::cancelled;
      LES_RETURN_IF_ERROR(supply.drop_undelivered(ctx));
      break;
    }
    LES_ASSIGN_OR_RETURN(const TokenSupply::Next next, supply.next(ctx, sampler, i, &st.sample_seconds));
    const int32_t tok = next.token;
    if (!params.ignore_eos && std::find(eog.begin(), eog.end(), tok) != eog.end()) {
      st.stop_reason = StopReason::eos;
      break;
    }
    st.tokens.push_back(tok);
    ++st.n_generated;
    if (i > 0) ++st.n_decoded;  // the first token comes from the prefill's logits
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
    if (!next.evaluated) {
      if (ctx.n_tokens() >= ctx.n_ctx()) {
        st.stop_reason = StopReason::context_full;
        break;
      }
      const int32_t left = params.n_predict < 0 ? INT32_MAX : params.n_predict - i - 1;
      t0 = Clock::now();
      Status s = supply.advance(ctx, sampler, tok, i, left);
      st.forward_seconds += seconds_since(t0);
      if (!s.ok()) return s;
    }
    unevaluated = -1;
  }
  LES_RETURN_IF_ERROR(supply.finish(ctx));
  st.decode_seconds = seconds_since(decode_t0);
  auto finish = [&]() -> Result<GenerateStats> {
    if (unevaluated >= 0 && ctx.n_tokens() < ctx.n_ctx()) LES_RETURN_IF_ERROR(ctx.set_pending(unevaluated));
    return st;
  };
  if (!flush) return finish();
  // End of generation: release held-back bytes (incomplete UTF-8 and stop-string prefixes).
  std::string tail = stops.push(detok.flush());
  if (!stops.stopped()) tail += stops.flush();
  if (stops.stopped()) st.stop_reason = StopReason::stop_string;
  if (!tail.empty() && !emit(-1, tail)) st.stop_reason = StopReason::cancelled;
  return finish();
}

}  // namespace les
