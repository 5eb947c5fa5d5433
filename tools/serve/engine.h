// `les serve`: the one model and context behind every request, and the queue
// in front of them (queue.h). A request is first prepared on its own
// HTTP thread (sampling merged with the server's defaults and checked, the
// chat template applied, the prompt tokenized and measured against the
// context; one request at a time, so the memory a long body takes while it is
// tokenized is paid once, not once per connection), then takes a place in
// the queue, waits for its turn (first come, first served) and generates
// alone. The context is
// a conversation that each request replaces: the tokens it already holds that
// the new prompt starts with are kept (their KV cache reused:
// prompt_reuse.h), the rest is evaluated, so the text is that of a fresh
// context while a multi-turn chat pays only for its new turn. Token prefixes
// cannot see image positions, so a chat with images is continued by text
// (chat_continuation.h): when the last chat request ended at an
// end-of-generation token or max_tokens (the context then holds exactly its
// rendered conversation and answer), the new rendered conversation starts
// with that text and sends those images again first (the same bytes:
// ImageCache gives the same encoded image), and the held answer's tokens are
// how its text tokenizes, only the rest is evaluated (the answer is a fresh
// context's); otherwise the context starts over.
//
// Thread-safety: prepare(), enter(), wait_turn(), queue_counts() and
// shutdown() are thread-safe; run() only by the request whose turn it is.
#pragma once

#include <les/les.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/chat_continuation.h"
#include "common/model_options.h"
#include "common/speculative_options.h"
#include "serve/images.h"
#include "serve/metrics.h"
#include "serve/queue.h"
#include "serve/reply.h"
#include "serve/request.h"

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
  les_vision* vision = nullptr;      // --mmproj's encoder, borrowed (nullptr: requests with images get 400)
  ServeMetrics* metrics = nullptr;   // counts each finished generation (metrics.h), borrowed; may be null
};


// A prepared request: the whole prompt as token ids (BOS included) and the
// sampling (checked; sp.seed set, LES_SEED_RANDOM for a random one).
// A chat request's `text` is its rendered conversation (kept for the next
// request's continuation). With images, `ids` is empty and `text` holds one
// LES_MEDIA_MARKER per image (les_generate_with_images), `n_prompt` counts
// every position it takes (text tokens and each image's les_image_n_tokens).
struct GenerationJob {
  Endpoint endpoint = Endpoint::kChat;
  std::vector<les_token> ids;
  std::string text;
  std::vector<ImageRef> images;
  size_t n_images_encoded = 0;  // images encoded for this request (the rest came from the cache)
  int64_t n_prompt = 0;
  SamplingOptions sampling;
};

// How a generation ended.
struct GenerationOutcome {
  les_status status = LES_OK;  // LES_OK, or an engine failure (error says what)
  std::string error;
  bool client_gone = false;    // the client went away (emit returned false)
  bool shutting_down = false;  // the server is stopping: the generation was cut short
  const char* finish_reason = nullptr;  // "stop" or "length" when status is LES_OK and neither flag is set
  Usage usage;
  int32_t reused = 0;          // prompt tokens whose KV cache was kept from the previous request
};

class ServeEngine {
 public:
  // Borrows `model` and `ctx` (they outlive the engine). `max_waiting`:
  // requests that may wait behind the running one (RequestQueue).
  ServeEngine(les_model* model, les_context* ctx, EngineSettings settings, int max_waiting);

  // Checks `request` against the model and the server's defaults and builds
  // its job. Returns false with *error set (the message for a 400 reply; the
  // code "context_length_exceeded" when the prompt does not fit n_ctx).
  // Images are encoded here (les_vision_encode_memory; one prepare() at a
  // time, so one decoded image's pixels are in memory at once): refused
  // without --mmproj, with --mtp, when one cannot be decoded (the message
  // names its content part), or when the text already holds the media marker.
  bool prepare(const CompletionRequest& request, GenerationJob* job, RequestError* error,
               std::string* error_code) const;

  // A place in the queue (RequestQueue::enter).
  std::shared_ptr<Turn> enter(RequestQueue::Refusal* why) { return queue_.enter(why); }

  // Waits for `turn` to come (RequestQueue::wait): `alive` is polled every
  // 50 ms (false: the client went away).
  RequestQueue::Wait wait_turn(Turn& turn, const std::function<bool()>& alive) { return queue_.wait(turn, alive); }

  // Generates `job`; only by the request whose wait_turn() returned kReady,
  // before its Turn goes. Each piece of text (valid UTF-8: stray bytes
  // become U+FFFD) goes to `emit`, which returns false when the client cannot
  // take it any more: the generation stops there (client_gone). Logs one
  // line per request to stderr.
  GenerationOutcome run(const GenerationJob& job, const std::function<bool(std::string_view)>& emit);

  // Stops the running generation after its current token and refuses or
  // wakes every queued request (RequestQueue::stop).
  void shutdown();

  RequestQueue::Counts queue_counts() const { return queue_.counts(); }

  int32_t n_ctx() const noexcept { return n_ctx_; }

  // The model (its vocabulary is thread-safe to use: les_token.h).
  const les_model* model() const noexcept { return model_; }

  // The context's streaming totals (les_context_stream_stats: any thread,
  // any time); false when experts are not streamed.
  bool stream_stats(les_stream_stats* out) const;

 private:
  les_model* model_;
  les_context* ctx_;
  EngineSettings settings_;
  int32_t n_ctx_ = 0, n_vocab_ = 0;

  RequestQueue queue_;
  mutable std::mutex prepare_mu_;       // one prepare() at a time
  mutable ImageCache image_cache_;      // the last prepared request's images (under prepare_mu_)
  // What the context holds as text after the last chat request (its rendered
  // conversation and answer) and the images in it; empty: not known. Only the
  // running request touches them.
  HeldChat held_;
  std::vector<ImageRef> held_images_;
  std::atomic<bool> stop_flag_{false};  // read by the token callback
  uint64_t n_requests_ = 0;             // only the running request touches it
};

}  // namespace les::tool
