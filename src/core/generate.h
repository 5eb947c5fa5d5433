// Text generation over a Context: tokenize the prompt, prefill, then decode
// token by token, streaming each piece of text through a callback.
//
// Loop (one stream):
//   tokens = tokenize(prompt, add BOS iff the vocab says so and the context is
//            empty; control-token texts parsed iff parse_special)
//   ctx.decode(tokens)                                   <- prefill (batched; evaluates
//                                                           a pending token first)
//   repeat: stop if ctx.interrupt_requested()            <- before a token is committed
//           t = sampler.sample(ctx.logits()); sampler.accept(t)
//           stop if t is end-of-generation (EOS/EOG) and !ignore_eos (t not emitted)
//           text = detokenizer.push(t)   (incomplete UTF-8 held back)
//           emit text, holding back any tail that could begin a stop string
//           stop at a stop string (its text and what follows are not emitted),
//           at n_predict tokens, on a full context, or when the callback returns false
//           ctx.decode({t})                              <- decode
// Cancellation (Context::set_interrupt; les_context_cancel in the C ABI): the
// prefill stops between its chunks and keeps nothing of the prompt
// (n_prompt_tokens 0); the decode phase stops before the next token is
// committed, so every token counted (n_generated) and kept in the context was
// delivered to the callback first; held-back text is still flushed. Both end
// with StopReason::cancelled (success, as every stop). A callback returning
// false stops after its token, which it was given: that token is kept.
// The context's last tokens (as many as the penalty window holds) and the
// prompt's are accepted into the sampler first, so a continuation samples as
// one long generation would.
//
// Sessions: a context is a conversation. A later call continues it: no BOS,
// and the last token the previous call delivered (left pending in the
// context, see context.h) is evaluated with the new prompt. At the end the
// last delivered token stays pending unless it was evaluated (a stop at EOS
// leaves nothing pending: the EOS token is not part of the context) or the
// context is full (then it is delivered but dropped). An empty prompt
// continues from the pending token or the current logits.
// The loop takes its tokens from a TokenSupply (core/token_supply.h): plain
// decoding samples and decodes as above; with GenerateParams::speculative the
// decode is a speculative step instead (core/speculative/speculative_decoder.h):
// it evaluates t with drafted tokens in one verify pass and returns several
// tokens at once, which the loop then delivers one by one as above (the
// verifier already sampled and accepted them; the context remembers the
// accepted ones and drops the rejected ones). A stop in the middle of them
// rolls the context back so it ends exactly as plain decoding would leave it:
// the same token ids, the last delivered token pending; an interrupt drops
// the accepted tokens not delivered yet.
//
// Timing (std::chrono::steady_clock): prefill = the prompt's decode call;
// decode = the whole decode phase, from the end of the prefill to the last
// token (forward passes, drafting, verifying, sampling, detokenizing and the
// callback); sampling outside verify passes is also timed on its own.
//
// Thread-safety: runs on the caller's thread; uses ctx, tokenizer and sampler
// exclusively for its duration.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/context.h"
#include "core/sampler.h"
#include "core/stop_strings.h"
#include "core/tokenizer/tokenizer.h"
#include "util/status.h"

namespace les {

class SpeculativeDecoder;

struct GenerateParams {
  int32_t n_predict = 128;          // max tokens to generate; < 0 = until EOS / full context
  bool ignore_eos = false;          // keep generating past EOS/EOG tokens (they emit no text)
  std::vector<std::string> stop;    // stop strings (empty strings are ignored)
  bool parse_special = false;       // control-token texts in the prompt become their ids (chat prompts)
  // Speculative decoding (drafter, draft-length policy, statistics), or null
  // for plain decoding. Borrowed; used exclusively for the call.
  SpeculativeDecoder* speculative = nullptr;
};

enum class StopReason { eos, stop_string, n_predict, context_full, cancelled };
const char* stop_reason_name(StopReason r) noexcept;  // "eos", "stop_string", ...

struct GenerateStats {
  int32_t n_prompt_tokens = 0;      // tokens of this call's prompt (BOS included when added)
  int32_t n_generated = 0;          // tokens sampled and accepted (an EOS that stopped the loop excluded)
  int32_t n_decoded = 0;            // generated tokens that decode-phase passes produced (all but the
                                    // first, which the prefill's logits give)
  double prefill_seconds = 0;
  double decode_seconds = 0;
  double sample_seconds = 0;
  double forward_seconds = 0;       // of decode_seconds, the time inside the decode phase's forward
                                    // passes (Context::decode of each generated token, or a whole
                                    // speculative step with its drafting); sampling, detokenizing,
                                    // stop strings and the callback are the rest
  StopReason stop_reason = StopReason::n_predict;
  bool prefill_cancelled = false;   // interrupted while evaluating the prompt (nothing of it kept)
  std::vector<int32_t> tokens;      // the generated token ids

  double prefill_tok_per_s() const { return prefill_seconds > 0 ? n_prompt_tokens / prefill_seconds : 0; }
  double decode_tok_per_s() const { return decode_seconds > 0 ? n_decoded / decode_seconds : 0; }
  // n_decoded / forward_seconds: the rate of the forward passes alone.
  double forward_tok_per_s() const { return forward_seconds > 0 ? n_decoded / forward_seconds : 0; }
};

// Tokens that end generation: Vocab::eog(), the vocab's EOS plus every
// end-of-turn marker llama.cpp recognises (core/tokenizer/token_rules.h).
std::vector<int32_t> end_of_generation_tokens(const Vocab& vocab);

// Receives each piece of generated text (complete UTF-8 unless the model
// produced invalid bytes); return false to stop (StopReason::cancelled).
using TextCallback = std::function<bool(std::string_view text)>;

// Receives every generated token with the text its arrival released (possibly
// empty while bytes are held back); token is -1 for the final flush of
// held-back text. Return false to stop (StopReason::cancelled).
using TokenTextCallback = std::function<bool(int32_t token, std::string_view text)>;

// Runs the loop above on `ctx` from its current position. Errors:
// invalid_argument (an empty prompt with nothing to continue from),
// context_full (the prompt does not fit in the room left: as Context::decode;
// nothing is decoded), the errors of tokenize/decode/sample (with context).
// Stopping for any StopReason is success.
Result<GenerateStats> generate(Context& ctx, const Tokenizer& tokenizer, Sampler& sampler, std::string_view prompt,
                               const GenerateParams& params, const TextCallback& on_text);

// The same loop, reporting token ids too (the C ABI's callback).
Result<GenerateStats> generate_tokens(Context& ctx, const Tokenizer& tokenizer, Sampler& sampler,
                                      std::string_view prompt, const GenerateParams& params,
                                      const TokenTextCallback& on_token);

// The same loop from prompt ids the caller tokenized (BOS included by the
// caller where wanted; parse_special does not apply). Errors as above, plus
// invalid_argument for an id out of the vocabulary.
Result<GenerateStats> generate_from_ids(Context& ctx, const Tokenizer& tokenizer, Sampler& sampler,
                                        std::vector<int32_t> prompt_tokens, const GenerateParams& params,
                                        const TokenTextCallback& on_token);

}  // namespace les
