#include "sched/sched_stats.h"

#include <algorithm>

namespace les::sched {

uint64_t SchedStats::sum(uint64_t LayerSchedStats::*field) const noexcept {
  uint64_t n = 0;
  for (const LayerSchedStats& l : layers) n += l.*field;
  return n;
}

uint64_t SchedStats::hits() const noexcept { return sum(&LayerSchedStats::hits); }
uint64_t SchedStats::inflight_hits() const noexcept { return sum(&LayerSchedStats::inflight_hits); }
uint64_t SchedStats::misses() const noexcept { return sum(&LayerSchedStats::misses); }
uint64_t SchedStats::prefetch_hits() const noexcept { return sum(&LayerSchedStats::prefetch_hits); }

double SchedStats::hit_rate() const noexcept {
  const uint64_t h = hits() + inflight_hits(), all = h + misses();
  return all ? static_cast<double>(h) / static_cast<double>(all) : 0.0;
}
double SchedStats::mean_recall(int32_t first_layer) const noexcept {
  double s = 0;
  int n = 0;
  for (size_t i = static_cast<size_t>(std::max(first_layer, 0)); i < layers.size(); ++i)
    if (layers[i].pred_actual > 0) {
      s += layers[i].recall();
      ++n;
    }
  return n ? s / n : 0.0;
}
void SchedStats::add(const SchedStats& o) {
  batches += o.batches;
  tokens += o.tokens;
  bytes_read += o.bytes_read;
  reads_issued += o.reads_issued;
  demand_experts += o.demand_experts;
  prefetch_experts += o.prefetch_experts;
  prefetch_unused_bytes += o.prefetch_unused_bytes;
  prefetch_gated += o.prefetch_gated;
  read_errors += o.read_errors;
  io_wait_s += o.io_wait_s;
  io_idle_s += o.io_idle_s;
  wall_s += o.wall_s;
  if (layers.size() < o.layers.size()) layers.resize(o.layers.size());
  for (size_t i = 0; i < o.layers.size(); ++i) {
    LayerSchedStats& a = layers[i];
    const LayerSchedStats& b = o.layers[i];
    a.hits += b.hits;
    a.inflight_hits += b.inflight_hits;
    a.misses += b.misses;
    a.prefetch_hits += b.prefetch_hits;
    a.pred_hits += b.pred_hits;
    a.pred_actual += b.pred_actual;
    a.pred_predicted += b.pred_predicted;
  }
}

}  // namespace les::sched
