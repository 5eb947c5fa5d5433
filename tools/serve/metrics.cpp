// See metrics.h.
#include "serve/metrics.h"

#include <cstdio>

namespace les::tool {
namespace {

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const char* name, double value) {
  char b[64];
  std::snprintf(b, sizeof b, " %.10g\n", value);
  out += name;
  out += b;
}

}  // namespace

std::string metrics_route(const std::string& path) {
  for (const char* known : {"/health", "/metrics", "/tokenize", "/detokenize", "/v1/models", "/v1/chat/completions",
                            "/v1/completions"})
    if (path == known) return known;
  if (path.rfind("/v1/models/", 0) == 0) return "/v1/models/{id}";
  return "other";
}

void ServeMetrics::count_reply(const std::string& path, int status) {
  const std::string route = metrics_route(path);
  std::lock_guard<std::mutex> lock(mu_);
  ++replies_[{route, status}];
}

void ServeMetrics::count_generation(int64_t prompt_tokens, int64_t generated, double decode_seconds,
                                    double decode_tok_s) {
  std::lock_guard<std::mutex> lock(mu_);
  prompt_tokens_ += static_cast<uint64_t>(prompt_tokens > 0 ? prompt_tokens : 0);
  generated_ += static_cast<uint64_t>(generated > 0 ? generated : 0);
  decode_seconds_ += decode_seconds;
  if (generated > 0) last_decode_tok_s_ = decode_tok_s;
}

std::string ServeMetrics::render(const RequestQueue::Counts& queue, const les_stream_stats* stream) const {
  std::string out;
  std::lock_guard<std::mutex> lock(mu_);
  family(out, "les_http_requests_total", "counter", "HTTP replies sent, by route and status.");
  for (const auto& [key, n] : replies_) {
    char b[160];
    std::snprintf(b, sizeof b, "les_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n", key.first.c_str(),
                  key.second, static_cast<unsigned long long>(n));
    out += b;
  }
  family(out, "les_prompt_tokens_total", "counter", "Prompt tokens of finished generations (reused ones included).");
  sample(out, "les_prompt_tokens_total", static_cast<double>(prompt_tokens_));
  family(out, "les_generated_tokens_total", "counter", "Tokens generated.");
  sample(out, "les_generated_tokens_total", static_cast<double>(generated_));
  family(out, "les_decode_seconds_total", "counter", "Wall time of the decode phases, in seconds.");
  sample(out, "les_decode_seconds_total", decode_seconds_);
  family(out, "les_decode_tokens_per_second", "gauge", "Decode speed of the last generation, tokens per second.");
  sample(out, "les_decode_tokens_per_second", last_decode_tok_s_);
  family(out, "les_requests_running", "gauge", "Requests generating now.");
  sample(out, "les_requests_running", static_cast<double>(queue.running));
  family(out, "les_requests_waiting", "gauge", "Requests waiting in the queue.");
  sample(out, "les_requests_waiting", static_cast<double>(queue.waiting));
  family(out, "les_requests_max_waiting", "gauge", "Requests the queue takes (les serve --max-queue).");
  sample(out, "les_requests_max_waiting", static_cast<double>(queue.max_waiting));
  if (stream != nullptr) {
    const uint64_t hits = stream->cache_hits + stream->inflight_hits;
    family(out, "les_expert_cache_hits_total", "counter", "Expert lookups served from the cache (in-flight included).");
    sample(out, "les_expert_cache_hits_total", static_cast<double>(hits));
    family(out, "les_expert_cache_lookups_total", "counter", "Expert lookups (hits and misses).");
    sample(out, "les_expert_cache_lookups_total", static_cast<double>(hits + stream->cache_misses));
    family(out, "les_expert_bytes_read_total", "counter", "Expert bytes read from the model file.");
    sample(out, "les_expert_bytes_read_total", static_cast<double>(stream->bytes_read));
  }
  return out;
}

}  // namespace les::tool
