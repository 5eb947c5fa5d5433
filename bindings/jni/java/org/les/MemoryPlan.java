package org.les;

/**
 * How a context's memory limit ({@link ContextParams#memoryLimitBytes}) was split
 * ({@code les_memory_plan}), all in bytes; every field 0 for a context created without a limit.
 * From {@link LesContext#memoryPlan()}. Immutable.
 */
public final class MemoryPlan {
  /** The limit; the process's resident set when the context was created. */
  public final long limitBytes;
  public final long baselineBytes;
  /** Tensors that are not routed experts; KV cache at nCtx; forward-pass scratch. */
  public final long denseBytes;
  public final long kvBytes;
  public final long scratchBytes;
  /** All routed experts of the file (0: dense model); the smallest budget accepted; the chosen one. */
  public final long routedBytes;
  public final long minExpertBytes;
  public final long expertBudgetBytes;
  /** True when the whole model fits and the experts stay resident. */
  public final boolean resident;
  /** The nCtx the KV figure is for. */
  public final int nCtx;
  /**
   * {@link ContextParams#draftModel}'s share (its weights, KV cache and scratch; 0: none). The
   * parts add up to at most the limit: baseline + draft + vision + dense + kv + scratch + (routed
   * if resident, else the expert budget).
   */
  public final long draftBytes;
  /** {@link ContextParams#vision}'s share (its weights and encode scratch; 0: none). */
  public final long visionBytes;

  MemoryPlan(long[] v) {
    limitBytes = v[0];
    baselineBytes = v[1];
    denseBytes = v[2];
    kvBytes = v[3];
    scratchBytes = v[4];
    routedBytes = v[5];
    minExpertBytes = v[6];
    expertBudgetBytes = v[7];
    resident = v[8] != 0;
    nCtx = (int) v[9];
    draftBytes = v[10];
    visionBytes = v[11];
  }
}
