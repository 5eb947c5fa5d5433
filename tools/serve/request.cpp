// See request.h.
#include "serve/request.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "serve/data_url.h"

namespace les::tool {
namespace {

using nlohmann::json;

constexpr size_t kMaxStops = 16;

// A request field that cannot be accepted; thrown inside this file only and
// caught by parse_completion_request().
struct Refusal {
  RequestError error;
};

[[noreturn]] void refuse(const std::string& param, const std::string& message) { throw Refusal{{message, param}}; }

const char* type_name(const json& v) { return v.type_name(); }

// The field, or nullptr when absent or null.
const json* field(const json& body, const char* key) {
  auto it = body.find(key);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::optional<float> number(const json& body, const char* key) {
  const json* v = field(body, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) refuse(key, std::string(key) + " must be a number, got " + type_name(*v));
  const double d = v->get<double>();
  // Finite but beyond float's range becomes inf, which the sampler's check names.
  return static_cast<float>(std::clamp(d, -1e38, 1e38));
}

// An integer in [lo, hi]; a number with a fraction, or out of range, is refused.
std::optional<int64_t> integer(const json& body, const char* key, int64_t lo, int64_t hi, const char* range) {
  const json* v = field(body, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) refuse(key, std::string(key) + " must be an integer, got " + type_name(*v));
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (!(d == std::floor(d)) || d < static_cast<double>(lo) || d > static_cast<double>(hi))
      refuse(key, std::string(key) + " must be an integer " + range + ", got " + v->dump());
    return static_cast<int64_t>(d);
  }
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi))
    refuse(key, std::string(key) + " must be an integer " + range + ", got " + v->dump());
  const int64_t i = v->get<int64_t>();
  if (i < lo || i > hi) refuse(key, std::string(key) + " must be an integer " + range + ", got " + v->dump());
  return i;
}

// seed: any 64-bit seed the command line's --seed takes (0..2^64-1), or a
// negative integer; negative and 2^64-1 (LES_SEED_RANDOM) mean random.
std::optional<uint64_t> seed(const json& body) {
  const json* v = field(body, "seed");
  if (v == nullptr) return std::nullopt;
  if (v->is_number_unsigned()) return v->get<uint64_t>();
  const auto i = integer(body, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                         "in -2^63..2^64-1 (< 0: random)");
  return *i < 0 ? LES_SEED_RANDOM : static_cast<uint64_t>(*i);
}

std::optional<bool> boolean(const json& body, const char* key) {
  const json* v = field(body, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) refuse(key, std::string(key) + " must be a boolean, got " + type_name(*v));
  return v->get<bool>();
}

// The image of content part `part` (type "image_url") at `p`.
RequestImage image_part(const json& part, const std::string& p, const ImageLimits& limits,
                        const std::vector<RequestImage>& so_far) {
  if (so_far.size() >= limits.max_images)
    refuse(p, p + ": more than " + std::to_string(limits.max_images) +
                  " images in one request (les serve --max-images)");
  auto iu = part.find("image_url");
  if (iu == part.end() || iu->is_null()) refuse(p, p + ".image_url is missing ({\"url\": \"data:image/png;base64,...\"})");
  const json* url = &*iu;
  if (iu->is_object()) {
    auto u = iu->find("url");
    if (u == iu->end()) refuse(p, p + ".image_url.url is missing");
    url = &*u;
  }
  if (!url->is_string()) refuse(p, p + ".image_url.url must be a string, got " + type_name(*url));
  std::string why;
  auto bytes = image_from_data_url(url->get_ref<const std::string&>(), limits.max_image_bytes, &why);
  if (!bytes) refuse(p, p + ": " + why);
  return {std::move(*bytes), p};
}

// A message's content: a string, null (an assistant turn that only called
// tools), or text and image parts (images: their marker into the text, their
// bytes onto `images`).
std::string message_content(const json& msg, size_t i, const ImageLimits& limits, std::vector<RequestImage>& images) {
  const std::string param = "messages[" + std::to_string(i) + "].content";
  auto it = msg.find("content");
  if (it == msg.end()) refuse(param, param + " is missing");
  if (it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array())
    refuse(param, param + " must be a string or an array of content parts, got " + type_name(*it));
  std::string text;
  for (size_t k = 0; k < it->size(); ++k) {
    const json& part = (*it)[k];
    const std::string p = param + "[" + std::to_string(k) + "]";
    if (!part.is_object()) refuse(p, p + " must be an object {\"type\": \"text\", \"text\": ...}");
    auto type = part.find("type");
    if (type == part.end() || !type->is_string()) refuse(p, p + ".type must be a string");
    if (*type == "image_url") {
      images.push_back(image_part(part, p, limits, images));
      text += LES_MEDIA_MARKER;
      continue;
    }
    if (*type != "text")
      refuse(p, p + ": content parts of type " + type->dump() + " are not supported (text and image_url are)");
    auto t = part.find("text");
    if (t == part.end() || !t->is_string()) refuse(p, p + ".text must be a string");
    text += t->get<std::string>();
  }
  return text;
}

std::vector<ChatTurn> messages(const json& body, const ImageLimits& limits, std::vector<RequestImage>& images) {
  const json* v = field(body, "messages");
  if (v == nullptr) refuse("messages", "messages is missing (an array of {\"role\", \"content\"} objects)");
  if (!v->is_array()) refuse("messages", std::string("messages must be an array, got ") + type_name(*v));
  if (v->empty()) refuse("messages", "messages must not be empty");
  std::vector<ChatTurn> turns;
  for (size_t i = 0; i < v->size(); ++i) {
    const json& msg = (*v)[i];
    const std::string param = "messages[" + std::to_string(i) + "]";
    if (!msg.is_object()) refuse(param, param + " must be an object, got " + type_name(msg));
    auto role = msg.find("role");
    if (role == msg.end() || !role->is_string()) refuse(param + ".role", param + ".role must be a string");
    std::string r = role->get<std::string>();
    if (r == "developer") r = "system";  // OpenAI's newer name for the system message
    if (r != "system" && r != "user" && r != "assistant")
      refuse(param + ".role",
             param + ".role " + role->dump() + " is not supported (system, developer, user or assistant)");
    turns.push_back({r, message_content(msg, i, limits, images)});
  }
  return turns;
}

void prompt(const json& body, CompletionRequest& r) {
  const json* v = field(body, "prompt");
  if (v == nullptr) refuse("prompt", "prompt is missing (a string)");
  if (v->is_string()) {
    r.prompt = v->get<std::string>();
    return;
  }
  if (!v->is_array()) refuse("prompt", std::string("prompt must be a string, got ") + type_name(*v));
  if (v->size() == 1 && (*v)[0].is_string()) {
    r.prompt = (*v)[0].get<std::string>();
    return;
  }
  if (!v->empty() && (*v)[0].is_string()) refuse("prompt", "one prompt per request (got an array of several)");
  for (const json& id : *v) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int32_t>::max())
      refuse("prompt", "prompt must be a string or an array of token ids (integers >= 0), got an element " + id.dump());
    r.prompt_ids.push_back(static_cast<les_token>(id.get<int64_t>()));
  }
  if (r.prompt_ids.empty()) refuse("prompt", "prompt must not be empty");
  r.prompt_is_ids = true;
}

// A stop string goes to les_generate as a C string: a NUL would cut it short.
void refuse_nul_stop(const std::string& s) {
  if (s.find('\0') != std::string::npos)
    refuse("stop", "a stop string holds a NUL character (U+0000), which a stop string cannot hold");
}

std::vector<std::string> stops(const json& body) {
  const json* v = field(body, "stop");
  std::vector<std::string> out;
  if (v == nullptr) return out;
  if (v->is_string()) {
    refuse_nul_stop(v->get<std::string>());
    if (!v->get<std::string>().empty()) out.push_back(v->get<std::string>());
    return out;
  }
  if (!v->is_array()) refuse("stop", std::string("stop must be a string or an array of strings, got ") + type_name(*v));
  if (v->size() > kMaxStops)
    refuse("stop", "stop holds " + std::to_string(v->size()) + " strings; at most " + std::to_string(kMaxStops));
  for (const json& s : *v) {
    if (!s.is_string()) refuse("stop", std::string("stop must be an array of strings, got an element ") + s.dump());
    refuse_nul_stop(s.get<std::string>());
    if (!s.get<std::string>().empty()) out.push_back(s.get<std::string>());
  }
  return out;
}

// Fields that ask for what this server cannot do are refused rather than
// ignored, so a client never takes an answer for what it did not ask.
void refuse_unsupported(const json& body) {
  (void)integer(body, "n", 1, 1, "equal to 1 (one choice per request)");
  (void)integer(body, "best_of", 1, 1, "equal to 1 (one choice per request)");
  for (const char* key : {"tools", "functions"}) {
    const json* v = field(body, key);
    if (v != nullptr && !(v->is_array() && v->empty()))
      refuse(key, std::string(key) + ": tool and function calling are not supported by this server");
  }
  for (const char* key : {"tool_choice", "function_call"}) {
    const json* v = field(body, key);
    if (v != nullptr && !(v->is_string() && (*v == "none" || *v == "auto")))
      refuse(key, std::string(key) + " " + v->dump() + ": tool and function calling are not supported by this server");
  }
  if (const json* v = field(body, "response_format")) {
    const json* type = v->is_object() ? field(*v, "type") : nullptr;
    if (type == nullptr || *type != "text")
      refuse("response_format", "response_format " + v->dump() +
                                    ": only {\"type\": \"text\"} is supported (no JSON mode or schemas)");
  }
  // logprobs: a boolean (chat) or a count (completions); top_logprobs a count.
  for (const char* key : {"logprobs", "top_logprobs"}) {
    const json* v = field(body, key);
    if (v != nullptr && !(*v == false || *v == 0))
      refuse(key, std::string(key) + " " + v->dump() + ": log probabilities are not supported by this server");
  }
  if (const json* v = field(body, "echo"); v != nullptr && *v != false)
    refuse("echo", "echo " + v->dump() + ": echoing the prompt is not supported by this server");
  if (const json* v = field(body, "suffix"); v != nullptr && *v != "")
    refuse("suffix", "suffix: insertion (text after the completion) is not supported by this server");
  if (const json* v = field(body, "logit_bias"); v != nullptr && !(v->is_object() && v->empty()))
    refuse("logit_bias", "logit_bias: biasing tokens is not supported by this server");
}

CompletionRequest parse(const json& body, Endpoint endpoint, const ImageLimits& limits) {
  if (!body.is_object()) refuse("", std::string("the request body must be a JSON object, got ") + type_name(body));
  CompletionRequest r;
  r.endpoint = endpoint;
  if (endpoint == Endpoint::kChat)
    r.messages = messages(body, limits, r.images);
  else
    prompt(body, r);
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  constexpr const char* kRange = "in 0..2147483647 (0: evaluate the prompt, generate nothing)";
  auto max_tokens = integer(body, "max_tokens", 0, kInt32Max, kRange);
  if (!max_tokens) max_tokens = integer(body, "max_completion_tokens", 0, kInt32Max, kRange);
  if (max_tokens) r.max_tokens = static_cast<int32_t>(*max_tokens);
  r.temperature = number(body, "temperature");
  r.top_p = number(body, "top_p");
  r.min_p = number(body, "min_p");
  r.presence_penalty = number(body, "presence_penalty");
  r.frequency_penalty = number(body, "frequency_penalty");
  r.repeat_penalty = number(body, "repeat_penalty");
  if (auto k = integer(body, "top_k", 0, kInt32Max, ">= 0")) r.top_k = static_cast<int32_t>(*k);
  r.seed = seed(body);
  r.stop = stops(body);
  r.ignore_eos = boolean(body, "ignore_eos");
  r.stream = boolean(body, "stream").value_or(false);
  refuse_unsupported(body);
  if (const json* so = field(body, "stream_options")) {
    if (!so->is_object()) refuse("stream_options", std::string("stream_options must be an object, got ") + type_name(*so));
    r.include_usage = boolean(*so, "include_usage").value_or(false);
  }
  return r;
}

}  // namespace

std::optional<CompletionRequest> parse_completion_request(const std::string& body, Endpoint endpoint,
                                                          RequestError* error, const ImageLimits& limits) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {
    *error = {std::string("the request body is not valid JSON: ") + e.what(), ""};
    return std::nullopt;
  }
  try {
    return parse(j, endpoint, limits);
  } catch (const Refusal& r) {
    *error = r.error;
  } catch (const json::exception& e) {  // a conversion this file did not foresee: still the client's request
    *error = {std::string("the request could not be read: ") + e.what(), ""};
  }
  return std::nullopt;
}

}  // namespace les::tool
