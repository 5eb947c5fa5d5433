// Statistics output of run and chat; see run_report.h.
#include "common/run_report.h"

#include <cstdio>

namespace les::tool {

const char* io_backend_name(les_io_backend b) {
  switch (b) {
    case LES_IO_IO_URING: return "io_uring";
    case LES_IO_PREAD: return "pread";
    case LES_IO_DISPATCH_IO: return "dispatch_io";
    case LES_IO_AUTO: break;
  }
  return "unknown";
}

int print_stream_stats(const char* tool, const les_model* model, const les_context* ctx, const std::string& io) {
  les_stream_stats s{};
  s.struct_size = sizeof s;
  if (les_status st = les_context_stream_stats(ctx, &s); st != LES_OK) {
    std::fprintf(stderr, "les %s: streaming statistics: %s: %s\n", tool, les_status_name(st), les_last_error());
    return 1;
  }
  const double mib = 1024.0 * 1024.0;
  const double per_tok = s.tokens ? 1.0 / static_cast<double>(s.tokens) : 0.0;
  // Without lookahead (c = 0) there is no prediction to score.
  auto fmt3 = [&](double v) {
    char b[16];
    std::snprintf(b, sizeof b, "%.3f", v);
    return s.prefetch_candidates > 0 ? std::string(b) : std::string("-");
  };
  const std::string recall = fmt3(s.mean_recall);
  std::fprintf(stderr,
               "les %s: experts streamed (--io %s: %s reads, O_DIRECT %s), budget %.2f MiB = %d slots, "
               "prefetch c = %d\n"
               "les %s: bytes read %.2f MiB (%.1f KiB/token), reads %llu, experts demand-read %llu, prefetched %llu\n"
               "les %s: cache hits %llu, in-flight hits %llu, misses %llu (hit rate %.3f), prefetched never used "
               "%.2f MiB, read errors %llu, mean recall %s\n"
               "les %s: time in forward passes %.1f ms, compute waited on I/O %.1f ms (%.1f%%), I/O idle %.1f ms\n",
               tool, io.c_str(), io_backend_name(s.io_backend),
               s.direct_io ? "on" : "off (the file system refused it: reads go through the page cache)",
               static_cast<double>(s.budget_bytes) / mib, s.n_slots, s.prefetch_candidates, tool,
               static_cast<double>(s.bytes_read) / mib, static_cast<double>(s.bytes_read) * per_tok / 1024.0,
               static_cast<unsigned long long>(s.reads_issued), static_cast<unsigned long long>(s.demand_experts),
               static_cast<unsigned long long>(s.prefetch_experts), tool,
               static_cast<unsigned long long>(s.cache_hits), static_cast<unsigned long long>(s.inflight_hits),
               static_cast<unsigned long long>(s.cache_misses), s.hit_rate,
               static_cast<double>(s.prefetch_unused_bytes) / mib, static_cast<unsigned long long>(s.read_errors),
               recall.c_str(), tool, s.wall_seconds * 1e3, s.io_wait_seconds * 1e3,
               s.wall_seconds > 0 ? 100.0 * s.io_wait_seconds / s.wall_seconds : 0.0, s.io_idle_seconds * 1e3);
  std::fprintf(stderr, "les %s: layer | hits | in-flight | misses | recall | precision\n", tool);
  for (int32_t l = 0; l < les_model_n_layer(model); ++l) {
    les_stream_layer_stats L{};
    L.struct_size = sizeof L;
    if (les_context_stream_layer_stats(ctx, l, &L) != LES_OK) continue;  // a dense layer
    std::fprintf(stderr, "les %s: %5d | %4llu | %9llu | %6llu | %-6s | %s\n", tool, l,
                 static_cast<unsigned long long>(L.cache_hits), static_cast<unsigned long long>(L.inflight_hits),
                 static_cast<unsigned long long>(L.cache_misses), fmt3(L.recall).c_str(), fmt3(L.precision).c_str());
  }
  return 0;
}

nlohmann::json stream_stats_json(const les_model* model, const les_context* ctx) {
  les_stream_stats s{};
  s.struct_size = sizeof s;
  if (les_context_stream_stats(ctx, &s) != LES_OK) return nullptr;
  nlohmann::json j = {{"budget_bytes", s.budget_bytes},
                      {"io_backend", io_backend_name(s.io_backend)},
                      {"direct_io", s.direct_io != 0},
                      {"n_slots", s.n_slots},
                      {"prefetch_candidates", s.prefetch_candidates},
                      {"tokens", s.tokens},
                      {"bytes_read", s.bytes_read},
                      {"reads_issued", s.reads_issued},
                      {"demand_experts", s.demand_experts},
                      {"prefetch_experts", s.prefetch_experts},
                      {"cache_hits", s.cache_hits},
                      {"inflight_hits", s.inflight_hits},
                      {"cache_misses", s.cache_misses},
                      {"hit_rate", s.hit_rate},
                      {"prefetch_unused_bytes", s.prefetch_unused_bytes},
                      {"read_errors", s.read_errors},
                      {"mean_recall", s.prefetch_candidates > 0 ? nlohmann::json(s.mean_recall) : nullptr},
                      {"io_wait_seconds", s.io_wait_seconds},
                      {"io_idle_seconds", s.io_idle_seconds},
                      {"wall_seconds", s.wall_seconds}};
  nlohmann::json layers = nlohmann::json::array();
  for (int32_t l = 0; l < les_model_n_layer(model); ++l) {
    les_stream_layer_stats L{};
    L.struct_size = sizeof L;
    if (les_context_stream_layer_stats(ctx, l, &L) != LES_OK) continue;
    layers.push_back({{"layer", l},
                      {"cache_hits", L.cache_hits},
                      {"inflight_hits", L.inflight_hits},
                      {"cache_misses", L.cache_misses},
                      {"recall", L.recall},
                      {"precision", L.precision}});
  }
  j["layers"] = std::move(layers);
  return j;
}

nlohmann::json generate_stats_json(const les_generate_stats& s, double peak_rss) {
  return {{"prompt_tokens", s.n_prompt_tokens},
          {"generated", s.n_generated},
          {"stop", les_stop_reason_name(s.stop_reason)},
          {"prefill_tok_per_s", s.prefill_tokens_per_second},
          {"prefill_ms", s.prefill_seconds * 1e3},
          {"decode_tok_per_s", s.decode_tokens_per_second},
          {"decode_tokens", s.n_decoded},
          {"decode_ms", s.decode_seconds * 1e3},
          {"forward_tok_per_s", forward_tok_per_s(s)},
          {"forward_ms", s.forward_seconds * 1e3},
          {"peak_rss_mib", peak_rss}};
}

double forward_tok_per_s(const les_generate_stats& s) {
  return s.forward_seconds > 0 ? s.n_decoded / s.forward_seconds : 0.0;
}

void print_generate_summary(const char* tool, const les_generate_stats& s, double peak_rss) {
  std::fprintf(stderr,
               "les %s: prompt tokens %d, generated %d (stop: %s)\n"
               "les %s: prefill %.2f tok/s (%.1f ms), decode %.2f tok/s (%d tokens, %.1f ms; forward passes "
               "%.2f tok/s, %.1f ms)\n"
               "les %s: peak RSS %.1f MiB\n",
               tool, s.n_prompt_tokens, s.n_generated, les_stop_reason_name(s.stop_reason), tool,
               s.prefill_tokens_per_second, s.prefill_seconds * 1e3, s.decode_tokens_per_second, s.n_decoded,
               s.decode_seconds * 1e3, forward_tok_per_s(s), s.forward_seconds * 1e3, tool, peak_rss);
}

}  // namespace les::tool
