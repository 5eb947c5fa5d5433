#include "les/run_streaming.h"

#include <cstdio>
#include <memory>

#include "core/context.h"
#include "core/generate.h"
#include "core/model.h"
#include "io/io_factory.h"
#include "sched/streaming_expert_source.h"

namespace les::tool {
namespace {

int fail(const std::string& what, const Status& s, int code = 1) {
  std::fprintf(stderr, "les run: %s: %s\n", what.c_str(), s.to_string().c_str());
  return code;
}

void print_stats(const sched::StreamingExpertSource& src, const GenerateStats& g) {
  const sched::SchedStats& s = src.stats();
  const double mib = 1024.0 * 1024.0;
  const double per_tok = s.tokens ? 1.0 / static_cast<double>(s.tokens) : 0.0;
  std::fprintf(stderr,
               "les run: experts streamed via %s, budget %.2f MiB = %d slots of %zu bytes, prefetch c = %d\n"
               "les run: bytes read %.2f MiB (%.1f KiB/token), reads %llu, experts demand-read %llu, prefetched %llu (used %llu)\n"
               "les run: cache hits %llu, in-flight hits %llu, misses %llu (hit rate %.3f), prefetched never used "
               "%.2f MiB, read errors %llu\n"
               "les run: time in forward passes %.1f ms, compute waited on I/O %.1f ms (%.1f%%), I/O idle %.1f ms\n",
               src.backend_name().c_str(), static_cast<double>(src.budget_bytes()) / mib, src.n_slots(),
               src.layout().slot_bytes(), src.prefetch_c(), static_cast<double>(s.bytes_read) / mib,
               static_cast<double>(s.bytes_read) * per_tok / 1024.0, static_cast<unsigned long long>(s.reads_issued),
               static_cast<unsigned long long>(s.demand_experts), static_cast<unsigned long long>(s.prefetch_experts),
               static_cast<unsigned long long>(s.prefetch_hits()),
               static_cast<unsigned long long>(s.hits()), static_cast<unsigned long long>(s.inflight_hits()),
               static_cast<unsigned long long>(s.misses()), s.hit_rate(),
               static_cast<double>(s.prefetch_unused_bytes) / mib, static_cast<unsigned long long>(s.read_errors),
               s.wall_s * 1e3, s.io_wait_s * 1e3, s.wall_s > 0 ? 100.0 * s.io_wait_s / s.wall_s : 0.0,
               s.io_idle_s * 1e3);
  std::fprintf(stderr, "les run: layer | hits | in-flight | misses | recall | precision\n");
  for (size_t l = 0; l < s.layers.size(); ++l) {
    const sched::LayerSchedStats& L = s.layers[l];
    std::fprintf(stderr, "les run: %5zu | %4llu | %9llu | %6llu | %.3f  | %.3f\n", l,
                 static_cast<unsigned long long>(L.hits), static_cast<unsigned long long>(L.inflight_hits),
                 static_cast<unsigned long long>(L.misses), L.recall(), L.precision());
  }
  (void)g;
}

}  // namespace

int run_streaming(const StreamingRunOptions& o, const std::function<void(std::string_view)>& emit,
                  double (*peak_rss_mib)()) {
  auto io_kind = io::parse_io_backend_kind(o.io == "auto" ? "automatic" : o.io);
  if (!io_kind.ok()) return fail("--io", io_kind.status(), 2);
  auto policy = sched::parse_eviction_policy(o.eviction);
  if (!policy.ok()) return fail("--eviction", policy.status(), 2);
  ModelParams mp;
  mp.n_threads = o.n_threads;
  mp.stream_experts = true;
  auto model = Model::load(o.model, mp);
  if (!model.ok()) return fail("loading " + o.model, model.status());
  if (!(*model)->has_tokenizer()) return fail("tokenizer", unsupported_error(o.model + " has no tokenizer"));
  sched::StreamingParams sp;
  sp.budget_bytes = static_cast<size_t>(o.budget_mb * 1024.0 * 1024.0);
  sp.prefetch_c = o.prefetch_c;
  sp.io = *io_kind;
  sp.policy = *policy;
  // A dense model has nothing to stream: it runs resident, and says so.
  const bool has_experts = (*model)->hparams().n_expert > 0;
  std::unique_ptr<sched::StreamingExpertSource> src;
  if (has_experts) {
    auto s = sched::StreamingExpertSource::create(**model, sp);
    if (!s.ok()) return fail("expert streaming", s.status(), s.status().code() == StatusCode::invalid_argument ? 2 : 1);
    src = std::move(s).value();
  } else {
    std::fprintf(stderr, "les run: note: %s has no routed experts; --budget-mb ignored, all weights resident\n",
                 o.model.c_str());
  }
  ContextParams cp;
  cp.n_ctx = o.n_ctx;
  cp.n_threads = o.n_threads;
  auto ctx = Context::create(**model, cp);
  if (!ctx.ok()) return fail("creating the context", ctx.status());
  if (src) (*ctx)->set_expert_source(src.get());
  auto sampler = Sampler::create(o.sp);
  if (!sampler.ok()) return fail("sampler", sampler.status(), 2);
  char streamed[96] = "";
  if (src) std::snprintf(streamed, sizeof streamed, ", experts streamed (budget %.1f MiB)", o.budget_mb);
  std::fprintf(stderr, "les run: %s, n_ctx %d, seed %llu%s\n", (*model)->description().c_str(), (*ctx)->n_ctx(),
               static_cast<unsigned long long>(o.sp.seed), streamed);
  GenerateParams gp;
  gp.n_predict = o.n_predict;
  gp.ignore_eos = o.ignore_eos;
  gp.stop = o.stop;
  auto stats = generate(**ctx, (*model)->tokenizer(), *sampler, o.prompt, gp, [&](std::string_view piece) {
    emit(piece);
    return true;
  });
  std::fputc('\n', stderr);
  if (!stats.ok()) return fail("generation", stats.status());
  std::fprintf(stderr,
               "les run: prompt tokens %d, generated %d (stop: %s)\n"
               "les run: prefill %.2f tok/s (%.1f ms), decode %.2f tok/s (%d tokens, %.1f ms)\n"
               "les run: peak RSS %.1f MiB\n",
               stats->n_prompt_tokens, stats->n_generated, stop_reason_name(stats->stop_reason),
               stats->prefill_tok_per_s(), stats->prefill_seconds * 1e3, stats->decode_tok_per_s(), stats->n_decoded,
               stats->decode_seconds * 1e3, peak_rss_mib());
  if (o.stats && src) print_stats(*src, *stats);
  return 0;
}

}  // namespace les::tool
