// `les serve`: the one model and context behind every request, and the queue
// in front of them. A request is first prepared on its own HTTP thread
// (sampling merged with the server's defaults and checked, the chat template
// applied, the prompt tokenized and measured against the context), then waits
// for its turn (first come, first served) and generates alone. The context is
// a conversation that each request replaces: the tokens it already holds that
// the new prompt starts with are kept (their KV cache reused:
// prompt_reuse.h), the rest is evaluated, so the text is that of a fresh
// context while a multi-turn chat pays only for its new turn.
//
// Thread-safety: prepare() is thread-safe; generate() may be called from any
// number of threads at once (they queue); shutdown() from any thread.
#pragma once

#include <les/les.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "les/model_options.h"
#include "les/serve_reply.h"
#include "les/serve_request.h"
#include "les/speculative_options.h"

namespace les::tool {

// What every request starts from: the command line's sampling options
// (sampling.sp.seed LES_SEED_RANDOM: a random seed per request; sampling.n_predict: the
// default max_tokens, -1 = until the end of text or a full context), its
// speculative decoding and the chat template name ("" = the model's own).
struct EngineSettings {
  SamplingOptions sampling;
  SpeculativeOptions speculative;
  const les_model* draft = nullptr;  // --draft's model, borrowed
  std::string chat_template;
};

// A prepared request: the whole prompt as token ids (BOS included) and the
// sampling (checked; sp.seed set, LES_SEED_RANDOM for a random one).
struct GenerationJob {
  Endpoint endpoint = Endpoint::kChat;
  std::vector<les_token> ids;
  SamplingOptions sampling;
};

// How a generation ended.
struct GenerationOutcome {
  les_status status = LES_OK;  // LES_OK, or an engine failure (error says what)
  std::string error;
  bool client_gone = false;    // the client went away (while queued or generating)
  bool shutting_down = false;  // the server is stopping: the generation was cut short
  const char* finish_reason = nullptr;  // "stop" or "length" when status is LES_OK and neither flag is set
  Usage usage;
  int32_t reused = 0;          // prompt tokens whose KV cache was kept from the previous request
};

class Engine {
 public:
  // Borrows `model` and `ctx` (they outlive the engine).
  Engine(les_model* model, les_context* ctx, EngineSettings settings);

  // Checks `request` against the model and the server's defaults and builds
  // its job. Returns false with *error set (the message for a 400 reply; the
  // code "context_length_exceeded" when the prompt does not fit n_ctx).
  bool prepare(const CompletionRequest& request, GenerationJob* job, RequestError* error,
               std::string* error_code) const;

  // Waits for the request's turn, polling `alive` (false: the client went
  // away; it leaves the queue) every 50 ms, then generates. Each piece of
  // text (valid UTF-8: stray bytes become U+FFFD) goes to `emit`, which
  // returns false when the client cannot take it any more: the generation
  // stops there (client_gone). `on_start` runs once the turn has come,
  // before the prompt is evaluated. Logs one line per request to stderr.
  GenerationOutcome generate(const GenerationJob& job, const std::function<bool()>& alive,
                             const std::function<void()>& on_start,
                             const std::function<bool(std::string_view)>& emit);

  // Stops the running generation after its current token and every queued
  // request; later generate() calls return shutting_down at once.
  void shutdown();

  int32_t n_ctx() const noexcept { return n_ctx_; }

 private:
  bool wait_turn(uint64_t ticket, const std::function<bool()>& alive, GenerationOutcome* out);
  void end_turn();
  GenerationOutcome run(const GenerationJob& job, const std::function<bool(std::string_view)>& emit);

  les_model* model_;
  les_context* ctx_;
  EngineSettings settings_;
  int32_t n_ctx_ = 0, n_vocab_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t next_ticket_ = 0, serving_ = 0;  // tickets in arrival order
  std::set<uint64_t> abandoned_;            // tickets whose client left the queue
  bool stopping_ = false;                   // guarded by mu_
  std::atomic<bool> stop_flag_{false};      // read by the token callback
  uint64_t n_requests_ = 0;
};

}  // namespace les::tool
