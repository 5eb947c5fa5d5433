// Expert streaming at run time (les_stream.h) and the memory plan (les_context.h)
// on a Context. les.h allows these from any thread at any time, also during a
// generation, so they do not take the context's one-caller guard; the Context
// object (a class) keeps the handle alive while a caller holds it.
import CLes

/// Streaming totals since the context was created (les_stream_stats). Bytes, seconds.
public struct StreamStats: Sendable {
  public let budgetBytes: UInt64
  public let slots: Int32
  public let prefetchCandidates: Int32
  public let tokens: UInt64
  public let bytesRead: UInt64
  public let readsIssued: UInt64
  public let demandExperts: UInt64
  public let prefetchExperts: UInt64
  public let cacheHits: UInt64
  public let inflightHits: UInt64
  public let cacheMisses: UInt64
  public let prefetchUnusedBytes: UInt64
  public let readErrors: UInt64
  /// (hits + in-flight hits) / selected experts; predictor recall averaged over layers 1...
  public let hitRate: Double
  public let meanRecall: Double
  public let ioWaitSeconds: Double
  public let ioIdleSeconds: Double
  public let wallSeconds: Double
  /// The budget one token's selected experts need (below it most are read again).
  public let oneTokenBudgetBytes: UInt64

  init(_ s: les_stream_stats) {
    budgetBytes = s.budget_bytes; slots = s.n_slots; prefetchCandidates = s.prefetch_candidates
    tokens = s.tokens; bytesRead = s.bytes_read; readsIssued = s.reads_issued
    demandExperts = s.demand_experts; prefetchExperts = s.prefetch_experts
    cacheHits = s.cache_hits; inflightHits = s.inflight_hits; cacheMisses = s.cache_misses
    prefetchUnusedBytes = s.prefetch_unused_bytes; readErrors = s.read_errors
    hitRate = s.hit_rate; meanRecall = s.mean_recall
    ioWaitSeconds = s.io_wait_seconds; ioIdleSeconds = s.io_idle_seconds; wallSeconds = s.wall_seconds
    oneTokenBudgetBytes = s.one_token_budget_bytes
  }
}

/// One layer's cache and predictor figures (les_stream_layer_stats).
public struct StreamLayerStats: Sendable {
  public let cacheHits: UInt64
  public let inflightHits: UInt64
  public let cacheMisses: UInt64
  /// |predicted ∩ selected| / |selected| and / |predicted|.
  public let recall: Double
  public let precision: Double
}

/// How a memory limit was split (les_memory_plan), in bytes; all 0 without a limit.
public struct MemoryPlan: Sendable {
  public let limitBytes: UInt64
  public let baselineBytes: UInt64
  public let denseBytes: UInt64
  public let kvBytes: UInt64
  public let scratchBytes: UInt64
  public let routedBytes: UInt64
  public let minExpertBytes: UInt64
  public let expertBudgetBytes: UInt64
  public let resident: Bool
  public let contextLength: Int32
  /// The draft model's share (`Context.init(draftModel:)`: weights, KV cache, scratch; 0: none).
  /// The parts add up to at most the limit: baseline + draft + vision + dense + kv + scratch +
  /// (routed if resident, else the expert budget).
  public let draftBytes: UInt64
  /// The vision encoder's share (`Context.init(vision:)`: weights and encode scratch,
  /// `VisionStats.memoryBytes`; 0: none).
  public let visionBytes: UInt64
}

extension Context {
  /// Changes the expert budget of a streaming context from any thread, also during
  /// a generation (e.g. on a memory warning); returns once it is in effect. The text
  /// does not change. Throws LESError (invalid argument: the context does not stream,
  /// or below the minimum, named; nothing changes).
  public func setExpertBudget(_ bytes: UInt64) throws {
    try check(les_context_set_expert_budget(handle, bytes), context: handle)
  }

  /// Streaming totals; any thread. Throws for a context that does not stream experts.
  public func streamStats() throws -> StreamStats {
    var s = les_stream_stats()
    s.struct_size = UInt32(MemoryLayout<les_stream_stats>.size)
    try check(les_context_stream_stats(handle, &s), context: handle)
    return StreamStats(s)
  }

  /// One layer's figures; any thread. Throws for a layer out of range.
  public func streamLayerStats(layer: Int32) throws -> StreamLayerStats {
    var s = les_stream_layer_stats()
    s.struct_size = UInt32(MemoryLayout<les_stream_layer_stats>.size)
    try check(les_context_stream_layer_stats(handle, layer, &s), context: handle)
    return StreamLayerStats(cacheHits: s.cache_hits, inflightHits: s.inflight_hits, cacheMisses: s.cache_misses,
                            recall: s.recall, precision: s.precision)
  }

  /// The split of the context's memory limit; any thread.
  public func memoryPlan() throws -> MemoryPlan {
    var m = les_memory_plan()
    m.struct_size = UInt32(MemoryLayout<les_memory_plan>.size)
    try check(les_context_memory_plan(handle, &m), context: handle)
    return MemoryPlan(limitBytes: m.limit_bytes, baselineBytes: m.baseline_bytes, denseBytes: m.dense_bytes,
                      kvBytes: m.kv_bytes, scratchBytes: m.scratch_bytes, routedBytes: m.routed_bytes,
                      minExpertBytes: m.min_expert_bytes, expertBudgetBytes: m.expert_budget_bytes,
                      resident: m.resident != 0, contextLength: m.n_ctx, draftBytes: m.draft_bytes,
                      visionBytes: m.vision_bytes)
  }
}
