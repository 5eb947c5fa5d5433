// What `les run` (and `les chat`'s /stats) print after a generation: the
// streaming statistics as `les TOOL:` lines on stderr, and the same figures as
// JSON for --json.
//
// Thread-safety: single-threaded (reads one context).
#pragma once

#include <les/les.h>

#include <nlohmann/json.hpp>
#include <string>

namespace les::tool {

// "io_uring", "pread", "dispatch_io" ("unknown" otherwise).
const char* io_backend_name(les_io_backend b);

// Prints les_context_stream_stats (with the read backend in effect and
// whether O_DIRECT is) and the per-layer figures; 0, or 1 when the statistics
// cannot be read.
int print_stream_stats(const char* tool, const les_model* model, const les_context* ctx, const std::string& io);

// The streaming totals and per-layer figures as a JSON object (null when the
// context does not stream experts).
nlohmann::json stream_stats_json(const les_model* model, const les_context* ctx);

// The figures of the `prompt tokens`, `prefill`/`decode` and `peak RSS`
// summary lines as a JSON object.
nlohmann::json generate_stats_json(const les_generate_stats& s, double peak_rss_mib);

// n_decoded / forward_seconds: the decode phase's forward passes alone (the
// scope of llama.cpp's "eval time"), 0 when nothing was decoded.
double forward_tok_per_s(const les_generate_stats& s);

// Prints the stable summary lines that scripts read:
//   les TOOL: prompt tokens N, generated N (stop: REASON)
//   les TOOL: prefill X tok/s (X ms), decode X tok/s (N tokens, X ms; forward passes X tok/s, X ms)
//   les TOOL: peak RSS X MiB
// decode counts the whole decode loop (sampling, detokenizing, printing);
// forward passes only the time inside them.
void print_generate_summary(const char* tool, const les_generate_stats& s, double peak_rss_mib);

}  // namespace les::tool
