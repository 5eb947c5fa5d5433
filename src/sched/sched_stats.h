// Statistics of the streaming expert scheduler, per decode batch and in total.
//
// Units: bytes, counts, seconds (steady clock). "Hit" = a selected expert was
// ready in the cache when its layer asked; "in-flight hit" = a prefetch for it
// was still reading (compute may wait, but no new read); "miss" = a demand read.
// Predictor recall/precision per layer compare, token by token, the top-c
// prediction for that layer with the router's real top-k:
//   recall = sum |P_t ∩ A_t| / sum |A_t|,  precision = sum |P_t ∩ A_t| / sum |P_t|.
// Layer 0's prediction comes from the previous step (see StreamingParams::layer0).
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <vector>

namespace les::sched {

struct LayerSchedStats {
  uint64_t hits = 0, inflight_hits = 0, misses = 0;
  // Of hits + in-flight hits: experts whose slot a prefetch filled and that
  // this use is the first of (bytes read for an expert that was then used).
  uint64_t prefetch_hits = 0;
  uint64_t pred_hits = 0, pred_actual = 0, pred_predicted = 0;
  double recall() const noexcept { return pred_actual ? static_cast<double>(pred_hits) / pred_actual : 0.0; }
  double precision() const noexcept {
    return pred_predicted ? static_cast<double>(pred_hits) / pred_predicted : 0.0;
  }
};

struct SchedStats {
  uint64_t batches = 0;          // decode() calls (forward batches) finished
  uint64_t tokens = 0;           // tokens in those batches
  uint64_t bytes_read = 0;       // bytes requested from the file (incl. O_DIRECT padding)
  uint64_t reads_issued = 0;     // read requests (3 per expert, 1 in a repacked file)
  uint64_t demand_experts = 0;   // experts read because compute needed them now
  uint64_t prefetch_experts = 0; // experts read ahead by the predictor
  uint64_t prefetch_unused_bytes = 0;  // expert bytes prefetched and evicted before any use
  uint64_t prefetch_gated = 0;   // uncached candidates the PrefetchGate did not read ahead
  uint64_t read_errors = 0;      // experts whose read failed
  double io_wait_s = 0;          // compute blocked waiting for expert bytes
  double io_idle_s = 0;          // no read in flight while a batch ran
  double wall_s = 0;             // time inside batches (first embedding to final hidden)
  std::vector<LayerSchedStats> layers;

  uint64_t hits() const noexcept;
  uint64_t inflight_hits() const noexcept;
  uint64_t misses() const noexcept;
  uint64_t prefetch_hits() const noexcept;
  // (hits + in-flight hits) / all expert uses; 0 when nothing was used.
  double hit_rate() const noexcept;
  // Mean over layers that have predictions (layers with pred_actual > 0).
  double mean_recall(int32_t first_layer = 0) const noexcept;
  // Adds every counter of `o` (layers resized as needed).
  void add(const SchedStats& o);

 private:
  uint64_t sum(uint64_t LayerSchedStats::*field) const noexcept;  // over layers
};

}  // namespace les::sched
