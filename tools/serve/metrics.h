// `les serve`: the counters behind GET /metrics, in Prometheus' text
// exposition format (version 0.0.4: "# HELP", "# TYPE", then
// `name{label="value"} number` lines).
//   les_http_requests_total{route, status}  replies sent, by route (the
//       routes of routes.h; /v1/models/ID as "/v1/models/{id}", any other
//       path "other", so the label set stays small) and HTTP status
//   les_prompt_tokens_total        prompt tokens of finished generations
//                                  (reused ones included: usage.prompt_tokens)
//   les_generated_tokens_total     tokens generated (usage.completion_tokens)
//   les_decode_seconds_total       wall time of the decode phases
//   les_decode_tokens_per_second   the last generation's decode speed
//                                  (les_generate_stats.decode_tokens_per_second)
//   les_requests_running / les_requests_waiting / les_requests_max_waiting
//                                  the queue now (queue.h)
// With experts streamed (--budget-mb), the context's totals since it was
// made (les_stream_stats): les_expert_cache_hits_total (cache and in-flight
// hits), les_expert_cache_lookups_total (hits and misses),
// les_expert_bytes_read_total.
//
// Thread-safety: every member is thread-safe (one mutex).
#pragma once

#include <les/les.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "serve/queue.h"

namespace les::tool {

class ServeMetrics {
 public:
  // One reply to a request for `path` with HTTP status `status`.
  void count_reply(const std::string& path, int status);

  // One finished generation: its usage and decode phase.
  void count_generation(int64_t prompt_tokens, int64_t generated, double decode_seconds, double decode_tok_s);

  // The exposition text. `stream`: the context's streaming totals, or null
  // when experts are not streamed (their lines are then left out).
  std::string render(const RequestQueue::Counts& queue, const les_stream_stats* stream) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> replies_;  // (route, status) -> count
  uint64_t prompt_tokens_ = 0, generated_ = 0;
  double decode_seconds_ = 0, last_decode_tok_s_ = 0;
};

// The route label of a request path (see above).
std::string metrics_route(const std::string& path);

}  // namespace les::tool
