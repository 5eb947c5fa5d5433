// See engine.h.
#include "serve/engine.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "common/chat_prompt.h"
#include "common/prompt_reuse.h"
#include "common/text_input.h"

namespace les::tool {
namespace {

// The request's sampling over the server's defaults.
SamplingOptions merged_sampling(const SamplingOptions& defaults, const CompletionRequest& r) {
  SamplingOptions s = defaults;
  if (r.max_tokens) s.n_predict = *r.max_tokens;
  if (r.temperature) s.sp.temperature = *r.temperature;
  if (r.top_p && *r.top_p == 0.0f) {
    // OpenAI accepts top_p 0: the nucleus is the most likely token alone,
    // which is greedy decoding (the sampler's own top_p must be > 0).
    s.sp.temperature = 0.0f;
    s.sp.top_p = 1.0f;
  } else if (r.top_p) {
    s.sp.top_p = *r.top_p;
  }
  if (r.min_p) s.sp.min_p = *r.min_p;
  if (r.top_k) s.sp.top_k = *r.top_k;
  if (r.presence_penalty) s.sp.presence_penalty = *r.presence_penalty;
  if (r.frequency_penalty) s.sp.frequency_penalty = *r.frequency_penalty;
  if (r.repeat_penalty) s.sp.repeat_penalty = *r.repeat_penalty;
  if (r.ignore_eos) s.ignore_eos = *r.ignore_eos;
  if (r.seed) s.sp.seed = *r.seed;
  s.stop.insert(s.stop.end(), r.stop.begin(), r.stop.end());
  return s;
}

// The sampler's "sampler: FIELD must ..." for the client: the request names
// its sampling fields as the sampler does (temperature, top_p, ...), so the
// message and `param` name the request's field. (The server's own defaults
// were checked at startup, so a failure here comes from the request.)
RequestError sampler_error(const Status& s) {
  std::string msg = s.message();
  if (msg.rfind("sampler: ", 0) == 0) msg.erase(0, 9);
  for (const char* field : {"temperature", "top_k", "top_p", "min_p", "repeat_penalty", "presence_penalty",
                            "frequency_penalty"})
    if (msg.rfind(std::string(field) + " ", 0) == 0) return {msg, field};
  return {msg, ""};
}

const char* finish_reason(les_stop_reason r) {
  return r == LES_STOP_EOS || r == LES_STOP_STOP_STRING ? "stop" : "length";
}

struct CallbackState {
  const std::function<bool(std::string_view)>* emit;
  const std::atomic<bool>* stop_flag;
  bool client_gone = false;
  bool stopped_by_server = false;
  std::string text;  // every piece sent, as sent (the answer a client sends back in its next request)
  std::vector<les_token> tokens;  // every token delivered
};

bool on_token(les_token token, const char* piece, size_t len, void* user_data) {
  auto* s = static_cast<CallbackState*>(user_data);
  if (s->stop_flag->load()) {
    s->stopped_by_server = true;
    return false;
  }
  const std::string text = valid_utf8(std::string_view(piece, len));
  if (!(*s->emit)(text)) {
    s->client_gone = true;
    return false;
  }
  s->text += text;
  if (token >= 0) s->tokens.push_back(token);
  return true;
}

// The generation's abort callback (les_generate_params): polled between the
// prompt's chunks and before each token, so a long prompt stops within one
// chunk when the server stops or the client goes away (an empty emit checks
// the connection).
bool abort_requested(void* user_data) {
  auto* s = static_cast<CallbackState*>(user_data);
  if (s->stop_flag->load()) {
    s->stopped_by_server = true;
    return true;
  }
  if (!(*s->emit)(std::string_view())) {
    s->client_gone = true;
    return true;
  }
  return false;
}

}  // namespace

ServeEngine::ServeEngine(les_model* model, les_context* ctx, EngineSettings settings, int max_waiting)
    : model_(model), ctx_(ctx), settings_(std::move(settings)), queue_(max_waiting) {
  n_ctx_ = les_context_n_ctx(ctx_);
  n_vocab_ = les_model_n_vocab(model_);
}

bool ServeEngine::prepare(const CompletionRequest& r, GenerationJob* job, RequestError* error,
                     std::string* error_code) const {
  std::lock_guard<std::mutex> lock(prepare_mu_);
  job->endpoint = r.endpoint;
  job->sampling = merged_sampling(settings_.sampling, r);
  job->sampling.sp.penalty_last_n = job->sampling.repeat_last_n;
  if (Status s = validate(job->sampling.sp); !s.ok()) {
    *error = sampler_error(s);
    return false;
  }
  job->text.clear();
  job->images.clear();
  if (r.endpoint == Endpoint::kChat && !r.images.empty()) {
    if (settings_.vision != nullptr && settings_.speculative.mtp) {
      *error = {r.images[0].param + ": images cannot be combined with this server's --mtp drafting", r.images[0].param};
      return false;
    }
    if (!encode_request_images(settings_.vision, r, &job->images, error, &image_cache_, &job->n_images_encoded))
      return false;
    std::string message;
    if (render_chat_text(model_, settings_.chat_template, r.messages, true, &job->text, &message) != LES_OK) {
      *error = {"messages: " + message, "messages"};
      return false;
    }
    job->ids.clear();
    job->n_prompt = prompt_positions(model_, job->text, job->images, error);
    if (job->n_prompt < 0) return false;
  } else if (r.endpoint == Endpoint::kChat) {
    std::string message;
    if (render_chat_text(model_, settings_.chat_template, r.messages, true, &job->text, &message) != LES_OK) {
      *error = {"messages: " + message, "messages"};
      return false;
    }
    les_status st = LES_OK;
    job->ids = tokenize_prompt(model_, job->text, true, &st);
    if (st != LES_OK) {
      *error = {std::string("tokenizing the conversation: ") + les_last_error(), "messages"};
      return false;
    }
  } else if (r.prompt_is_ids) {
    job->ids = r.prompt_ids;
    for (les_token id : job->ids)
      if (id >= n_vocab_) {
        *error = {"prompt: token id " + std::to_string(id) + " is out of range (the vocabulary has " +
                      std::to_string(n_vocab_) + " tokens)",
                  "prompt"};
        return false;
      }
  } else {
    les_status st = LES_OK;
    job->ids = tokenize_prompt(model_, r.prompt, true, &st);
    if (st != LES_OK) {
      *error = {std::string("tokenizing the prompt: ") + les_last_error(), "prompt"};
      return false;
    }
  }
  if (job->images.empty()) job->n_prompt = static_cast<int64_t>(job->ids.size());
  if (job->n_prompt == 0) {
    *error = {"the prompt is empty (no tokens)", r.endpoint == Endpoint::kChat ? "messages" : "prompt"};
    return false;
  }
  if (job->n_prompt >= n_ctx_) {
    *error = {"the prompt is " + std::to_string(job->n_prompt) + " tokens" +
                  (job->images.empty() ? "" : " (images included)") + "; the context holds " +
                  std::to_string(n_ctx_) + " (les serve -c) including at least one generated token",
              r.endpoint == Endpoint::kChat ? "messages" : "prompt"};
    *error_code = "context_length_exceeded";
    return false;
  }
  return true;
}

GenerationOutcome ServeEngine::run(const GenerationJob& job, const std::function<bool(std::string_view)>& emit) {
  GenerationOutcome out;
  const uint64_t n = ++n_requests_;
  std::vector<const char*> stops;  // point into job.sampling.stop
  les_generate_params gp = generate_params(job.sampling, stops);
  apply_speculative_options(settings_.speculative, settings_.draft, gp);
  CallbackState cb{&emit, &stop_flag_, false, false, {}, {}};
  gp.abort_callback = abort_requested;
  gp.abort_user_data = &cb;
  les_status st = LES_OK;
  // Whether the context holds exactly held_text_ with held_images_, which this
  // chat with images continues (see the top of engine.h).
  std::optional<std::string> rest;
  if (!job.images.empty() && held_images_.size() <= job.images.size() &&
      std::equal(held_images_.begin(), held_images_.end(), job.images.begin()) && les_context_n_past(ctx_) > 0)
    rest = continuation_rest(model_, held_, job.text);
  const bool continues = rest.has_value();
  const size_t first_image = continues ? held_images_.size() : 0;
  held_.clear();  // set again below when this request ends cleanly
  held_images_.clear();
  if (job.images.empty()) {
    out.reused = reuse_prefix(ctx_, job.ids);
    gp.prompt_tokens = job.ids.data() + out.reused;
    gp.n_prompt_tokens = static_cast<int32_t>(job.ids.size()) - out.reused;
    st = les_generate(ctx_, nullptr, &gp, on_token, &cb);
  } else {
    if (continues) {
      out.reused = les_context_n_past(ctx_);
    } else {
      les_context_reset(ctx_);  // the whole conversation again
    }
    gp.parse_special = true;
    std::vector<const les_image*> images;
    for (size_t i = first_image; i < job.images.size(); ++i) images.push_back(job.images[i].get());
    st = les_generate_with_images(ctx_, continues ? rest->c_str() : job.text.c_str(), images.data(),
                                  static_cast<int32_t>(images.size()), &gp, on_token, &cb);
  }
  les_generate_stats stats{};
  stats.struct_size = sizeof stats;
  les_context_generate_stats(ctx_, &stats);
  const int32_t n_prompt =
      job.images.empty() ? static_cast<int32_t>(job.ids.size()) : out.reused + stats.n_prompt_tokens;
  out.usage = {n_prompt, stats.n_generated};
  if (settings_.metrics != nullptr)
    settings_.metrics->count_generation(n_prompt, stats.n_generated, stats.decode_seconds,
                                        stats.decode_tokens_per_second);
  const char* kind = job.endpoint == Endpoint::kChat ? "chat" : "completion";
  if (st != LES_OK && st != LES_ERR_CANCELLED && !(st == LES_ERR_CONTEXT_FULL && stats.stop_reason == LES_STOP_CONTEXT_FULL)) {
    out.status = st;
    out.error = les_context_last_error(ctx_);
    les_context_reset(ctx_);  // start the next request from a clean state
    std::fprintf(stderr, "les serve: #%llu %s: generation failed: %s: %s\n", static_cast<unsigned long long>(n), kind,
                 les_status_name(st), out.error.c_str());
    return out;
  }
  out.client_gone = cb.client_gone;
  out.shutting_down = cb.stopped_by_server;
  // At EOS (not in the context) or max_tokens the context holds exactly the
  // rendered conversation and the answer; after a stop string, its tokens too.
  if (st == LES_OK && job.endpoint == Endpoint::kChat && !job.text.empty() &&
      (stats.stop_reason == LES_STOP_EOS || stats.stop_reason == LES_STOP_N_PREDICT)) {
    held_ = held_after_turn(model_, ctx_, job.text, cb.text, cb.tokens);
    held_images_ = job.images;
  }
  if (st == LES_ERR_CANCELLED && !out.client_gone) out.shutting_down = true;  // les_context_cancel at shutdown
  if (!out.client_gone && !out.shutting_down) out.finish_reason = finish_reason(stats.stop_reason);
  const char* why = out.client_gone ? "cancelled: the client went away"
                    : out.shutting_down ? "cancelled: the server is stopping"
                                        : les_stop_reason_name(stats.stop_reason);
  char images[64] = "";  // ", 1 image, 0 encoded" for a request with images
  if (!job.images.empty())
    std::snprintf(images, sizeof images, ", %zu image%s, %zu encoded", job.images.size(),
                  job.images.size() == 1 ? "" : "s", job.n_images_encoded);
  std::fprintf(stderr,
               "les serve: #%llu %s: prompt %d tokens (%d reused%s), generated %d (stop: %s), prefill %.2f tok/s, "
               "decode %.2f tok/s, seed %llu\n",
               static_cast<unsigned long long>(n), kind, n_prompt, out.reused, images, stats.n_generated, why,
               stats.prefill_tokens_per_second, stats.decode_tokens_per_second,
               static_cast<unsigned long long>(stats.seed));
  return out;
}

bool ServeEngine::stream_stats(les_stream_stats* out) const {
  *out = les_stream_stats{};
  out->struct_size = sizeof *out;
  return les_context_stream_stats(ctx_, out) == LES_OK;
}

void ServeEngine::shutdown() {
  stop_flag_.store(true);
  queue_.stop();
  les_context_cancel(ctx_);  // a long prompt stops at its next token too
}

}  // namespace les::tool
