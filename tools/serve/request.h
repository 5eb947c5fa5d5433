// `les serve`: an OpenAI API request body (/v1/chat/completions,
// /v1/completions) read into a CompletionRequest, every field checked.
//
// Accepted fields (a null value counts as absent):
//   messages (chat)    non-empty array of {role, content}; role system,
//                      developer (= system), user or assistant; content a
//                      string, null, or an array of content parts:
//                      {type: "text", text} and {type: "image_url",
//                      image_url: {url: "data:image/png;base64,..."}} (or
//                      image_url given as the URL string itself; detail
//                      ignored). An image part becomes LES_MEDIA_MARKER at
//                      its place in the message's text and its bytes join
//                      `images` (data_url.h: data URLs only, never
//                      fetched; at most ImageLimits::max_image_bytes each,
//                      at most ImageLimits::max_images per request). Whether
//                      the server takes images at all (--mmproj) is the
//                      engine's check (engine.h).
//   prompt (completions) a string, an array of one string, or an array of
//                      token ids
//   max_tokens / max_completion_tokens  integer in 0..2^31-1 (absent: the
//                      server's -n; 0, like `-n 0`: the prompt is evaluated,
//                      nothing is generated, finish_reason "length")
//   temperature, top_p, min_p, presence_penalty, frequency_penalty,
//   repeat_penalty  numbers; top_k an integer >= 0; seed an integer in
//   -2^63..2^64-1 (< 0 or 2^64-1: random); stop a string or an array of
//   at most 16 strings (empty ones ignored); stream a boolean;
//   stream_options.include_usage a boolean; ignore_eos a boolean
//   (llama.cpp's extension).
// Refused (400 naming the field) when they ask for what the server cannot
// do: n or best_of other than 1; non-empty tools / functions; tool_choice /
// function_call other than "none" or "auto"; response_format other than
// {"type": "text"}; logprobs / top_logprobs other than false or 0; echo;
// a non-empty suffix; a non-empty logit_bias.
// Every other field (model, user, metadata, store, parallel_tool_calls, ...)
// is ignored.
// Ranges the sampler checks (top_p in (0, 1], ...) are checked when the
// request is merged with the server's defaults (engine.h); top_p 0, which
// OpenAI accepts, is greedy decoding (temperature 0) there.
//
// Thread-safety: pure functions.
#pragma once

#include <les/les.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/chat_prompt.h"

namespace les::tool {

enum class Endpoint { kChat, kCompletion };

// An image of a request: its encoded bytes (PNG, JPEG or PNM) and where it
// was given ("messages[0].content[1]"), for error messages.
struct RequestImage {
  std::vector<uint8_t> bytes;
  std::string param;
};

// Bounds on a request's images (les serve --max-images, --max-image-mb).
struct ImageLimits {
  size_t max_images = 4;                   // per request
  size_t max_image_bytes = 4u << 20;       // encoded bytes per image
};

struct CompletionRequest {
  Endpoint endpoint = Endpoint::kChat;
  std::vector<ChatTurn> messages;      // kChat
  std::vector<RequestImage> images;    // kChat: in the order of their markers in `messages`
  std::string prompt;                  // kCompletion, as text
  std::vector<les_token> prompt_ids;   // kCompletion, given as token ids (then `prompt` is empty)
  bool prompt_is_ids = false;
  std::optional<int32_t> max_tokens;   // >= 0
  std::optional<float> temperature, top_p, min_p, presence_penalty, frequency_penalty, repeat_penalty;
  std::optional<int32_t> top_k;
  std::optional<uint64_t> seed;        // LES_SEED_RANDOM: random
  std::vector<std::string> stop;       // non-empty strings
  std::optional<bool> ignore_eos;
  bool stream = false;
  bool include_usage = false;          // stream_options.include_usage: a last chunk with usage
};

// A request that cannot be served as sent: the message for the client and
// the field it names ("" when none), for the OpenAI error object.
struct RequestError {
  std::string message;
  std::string param;
};

// Parses and checks `body` (JSON) for `endpoint`. Returns the request, or
// fills *error (invalid JSON with the parser's position, a missing field, a
// wrong type, a value out of range, an unknown role; an image part that is
// not a data URL of an image, bad base64, an image over limits.max_image_bytes,
// more than limits.max_images images) and returns nullopt.
std::optional<CompletionRequest> parse_completion_request(const std::string& body, Endpoint endpoint,
                                                          RequestError* error, const ImageLimits& limits = {});

}  // namespace les::tool
