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

  public ContextParams() {
    int[] d = Native.contextDefaults();
    nCtx = d[0];
    nBatch = d[1];
    nThreads = d[2];
    kvType = d[3];
  }

  /** Sets nCtx and returns this, for chaining. */
  public ContextParams nCtx(int n) {
    nCtx = n;
    return this;
  }
}
