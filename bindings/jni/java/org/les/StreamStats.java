package org.les;

/**
 * Expert-streaming totals of a context since it was created ({@code les_stream_stats}), from
 * {@link LesContext#streamStats()}. Bytes are bytes, times are seconds. Immutable.
 */
public final class StreamStats {
  /** Current expert budget in bytes, and the expert slots that fit in it. */
  public final long budgetBytes;
  public final int nSlots;
  /** Lookahead experts prefetched per layer (c) in effect. */
  public final int prefetchCandidates;
  /** Tokens run through forward passes. */
  public final long tokens;
  /** Bytes read from the file (O_DIRECT alignment padding included) and read requests issued. */
  public final long bytesRead;
  public final long readsIssued;
  /** Experts read because compute needed them now, and experts read ahead by the predictor. */
  public final long demandExperts;
  public final long prefetchExperts;
  /** Selected experts found in the cache, in flight (prefetch not finished), or missed. */
  public final long cacheHits;
  public final long inflightHits;
  public final long cacheMisses;
  /** Bytes prefetched and evicted before any use. */
  public final long prefetchUnusedBytes;
  /** Experts whose read failed. */
  public final long readErrors;
  /** The budget one token's selected experts need; below it most experts are read again. */
  public final long oneTokenBudgetBytes;
  /** (hits + in-flight hits) / selected experts, in [0, 1]. */
  public final double hitRate;
  /** Predictor recall averaged over layers 1.. (layer l+1 predicted from l), in [0, 1]. */
  public final double meanRecall;
  /** Compute blocked waiting for expert bytes; no read in flight during a pass; time in passes. */
  public final double ioWaitSeconds;
  public final double ioIdleSeconds;
  public final double wallSeconds;

  StreamStats(long[] i, double[] r) {
    budgetBytes = i[0];
    nSlots = (int) i[1];
    prefetchCandidates = (int) i[2];
    tokens = i[3];
    bytesRead = i[4];
    readsIssued = i[5];
    demandExperts = i[6];
    prefetchExperts = i[7];
    cacheHits = i[8];
    inflightHits = i[9];
    cacheMisses = i[10];
    prefetchUnusedBytes = i[11];
    readErrors = i[12];
    oneTokenBudgetBytes = i[13];
    hitRate = r[0];
    meanRecall = r[1];
    ioWaitSeconds = r[2];
    ioIdleSeconds = r[3];
    wallSeconds = r[4];
  }

  @Override
  public String toString() {
    return String.format("budget %d bytes (%d slots), %d tokens, read %d bytes in %d reads, hits %d,"
        + " in-flight hits %d, misses %d (hit rate %.3f), mean recall %.3f, I/O wait %.3f s",
        budgetBytes, nSlots, tokens, bytesRead, readsIssued, cacheHits, inflightHits, cacheMisses,
        hitRate, meanRecall, ioWaitSeconds);
  }
}
