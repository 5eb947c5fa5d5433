package org.les;

/**
 * Parameters of a {@link LesContext} ({@code les_context_params}); a new object holds the
 * library's defaults from {@code les_context_default_params()}. Not thread-safe (a plain holder).
 */
public final class ContextParams {
  /** KV cache element types ({@code les_kv_type}). */
  public static final int KV_F16 = 0;
  public static final int KV_Q8_0 = 1;

  /** Tokens the KV cache holds; 0 = min(model's training context, 4096). */
  public int nCtx;
  /** Max tokens per forward chunk during prefill; 0 = 512. */
  public int nBatch;
  /** Compute threads; 0 = the model's thread count. */
  public int nThreads;
  /** KV cache element type, KV_F16 or KV_Q8_0 (UNSUPPORTED where the build lacks it). */
  public int kvType;

  /** I/O backends for streamed experts ({@code les_io_backend}). */
  public static final int IO_AUTO = 0;
  public static final int IO_IO_URING = 1;
  public static final int IO_PREAD = 2;
  public static final int IO_DISPATCH_IO = 3;
  /** Expert cache eviction policies ({@code les_eviction_policy}). */
  public static final int EVICTION_LFU_AGED = 0;
  public static final int EVICTION_LRU = 1;
  public static final int EVICTION_NEXT_USE = 2;
  public static final int EVICTION_ADAPTIVE = 3;

  /**
   * 0 = routed experts resident (in the model's memory map); greater than 0 = experts are streamed
   * from the file through this context's expert cache of this many bytes (cache, read buffers and
   * scratch together). Below the minimum the constructor throws INVALID_ARGUMENT naming it; a model
   * without routed experts runs resident. Negative values are refused.
   */
  public long expertBudgetBytes;
  /** Lookahead experts prefetched per layer: -1 = top-k + 2, 0 = none (on-demand reads), else k..2k. */
  public int prefetchCandidates;
  /** How expert bytes are read: IO_AUTO (io_uring where allowed, else pread), IO_PREAD, ... */
  public int ioBackend;
  /** Expert cache eviction: EVICTION_ADAPTIVE (default), EVICTION_NEXT_USE, EVICTION_LFU_AGED or EVICTION_LRU. */
  public int eviction;

  /**
   * 0 (default) = no limit. Greater than 0: a bound in bytes on the whole process's peak resident
   * set; with expertBudgetBytes 0 the constructor of LesContext chooses the expert budget from it
   * (see {@link LesContext#memoryPlan()}), and a limit that cannot hold one token's experts throws
   * INVALID_ARGUMENT giving the arithmetic. Negative values are refused.
   */
  public long memoryLimitBytes;

  /**
   * null (default), or the model this context will decode with as {@link GenerateParams#draftModel}:
   * with memoryLimitBytes greater than 0 its share (all its weights, its KV cache at nCtx and its
   * forward-pass scratch; {@link MemoryPlan#draftBytes}) is counted in the limit, and a limit that
   * cannot hold it too throws INVALID_ARGUMENT naming the draft model. Ignored without a limit.
   * Borrowed only while the LesContext constructor runs; a closed model throws INVALID_ARGUMENT
   * ("ContextParams.draftModel: LesModel is closed") and leaves these parameters as they were.
   */
  public LesModel draftModel;

  /**
   * null (default), or the vision encoder whose images this context will take: with
   * memoryLimitBytes greater than 0 its peak (weights plus encode scratch, {@link
   * VisionStats#memoryBytes}; {@link MemoryPlan#visionBytes}) is counted in the limit. Ignored
   * without a limit. Borrowed only while the LesContext constructor runs; a closed encoder throws
   * INVALID_ARGUMENT ("ContextParams.vision: LesVision is closed").
   */
  public LesVision vision;

  public ContextParams() {
    long[] d = Native.contextDefaults();
    nCtx = (int) d[0];
    nBatch = (int) d[1];
    nThreads = (int) d[2];
    kvType = (int) d[3];
    expertBudgetBytes = d[4];
    prefetchCandidates = (int) d[5];
    ioBackend = (int) d[6];
    eviction = (int) d[7];
    memoryLimitBytes = d[8];
  }

  /** Sets nCtx and returns this, for chaining. */
  public ContextParams nCtx(int n) {
    nCtx = n;
    return this;
  }

  /** Sets memoryLimitBytes (the whole process's memory limit) and returns this. */
  public ContextParams memoryLimitBytes(long bytes) {
    memoryLimitBytes = bytes;
    return this;
  }

  /** Sets draftModel (counted in memoryLimitBytes; null = none) and returns this. */
  public ContextParams draftModel(LesModel model) {
    draftModel = model;
    return this;
  }

  /** Sets vision (counted in memoryLimitBytes; null = none) and returns this. */
  public ContextParams vision(LesVision encoder) {
    vision = encoder;
    return this;
  }

  /** Sets expertBudgetBytes (streams the routed experts when greater than 0) and returns this. */
  public ContextParams expertBudgetBytes(long bytes) {
    expertBudgetBytes = bytes;
    return this;
  }
}
