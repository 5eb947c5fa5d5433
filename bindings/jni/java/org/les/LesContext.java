package org.les;

import java.nio.charset.StandardCharsets;

/**
 * One generation stream over a {@link LesModel} ({@code les_context}: KV cache, logits, sampler
 * state). Use a context from one thread at a time: a second concurrent call throws LesException
 * instead of racing. {@link #cancel()} alone may be called from any thread at any time, and
 * {@link #close()} from any thread (during generate() it cancels and frees the context when
 * generate() returns). Every method of a closed context throws LesException (INVALID_ARGUMENT).
 */
public final class LesContext implements AutoCloseable {
  private final NativeHandle handle;
  private final int nVocab;

  /** A context with the default parameters (see {@link ContextParams}). */
  public LesContext(LesModel model) {
    this(model, new ContextParams());
  }

  /**
   * A context over model (which may be closed afterwards; the weights live on with the context).
   * Throws LesException: INVALID_ARGUMENT (a bad field, an expert budget below the minimum),
   * UNSUPPORTED (an I/O backend this system lacks), IO, OUT_OF_MEMORY.
   */
  public LesContext(LesModel model, ContextParams params) {
    if (model == null) throw new LesException(LesException.INVALID_ARGUMENT, "model is null");
    if (params == null) throw new LesException(LesException.INVALID_ARGUMENT, "params is null");
    nVocab = model.nVocab();
    long mh = model.handle.acquire();
    long ch;
    try {
      ch = Native.contextCreate(mh, params.nCtx, params.nBatch, params.nThreads, params.kvType,
          params.expertBudgetBytes, params.prefetchCandidates, params.ioBackend, params.eviction);
    } finally {
      model.handle.release();
    }
    handle = new NativeHandle("LesContext", ch, true, Native::contextFree);
  }

  /**
   * Appends tokens at positions nPast() .. nPast() + tokens.length - 1 and runs the forward pass;
   * logits() then gives the last token's logits. On error nothing is appended: INVALID_ARGUMENT
   * (empty array, token id out of range), CONTEXT_FULL (no room in the KV cache).
   */
  public void decode(int... tokens) {
    if (tokens == null) throw new LesException(LesException.INVALID_ARGUMENT, "tokens is null");
    long h = handle.acquire();
    try {
      Native.contextDecode(h, tokens);
    } finally {
      handle.release();
    }
  }

  /** A copy of the last decoded token's logits (nVocab floats, index = token id); null before any decode. */
  public float[] logits() {
    long h = handle.acquire();
    try {
      return Native.contextLogits(h, nVocab);
    } finally {
      handle.release();
    }
  }

  /** Tokens the context holds: its KV cache positions plus the pending last generated token. */
  public int nPast() {
    long h = handle.acquire();
    try {
      return Native.contextNPast(h);
    } finally {
      handle.release();
    }
  }

  /** Tokens the KV cache can hold. */
  public int nCtx() {
    long h = handle.acquire();
    try {
      return Native.contextNCtx(h);
    } finally {
      handle.release();
    }
  }

  /** Empties the KV cache (nPast() becomes 0). */
  public void reset() {
    long h = handle.acquire();
    try {
      Native.contextReset(h);
    } finally {
      handle.release();
    }
  }

  /** Keeps the first nKeep positions of the KV cache (rollback). nKeep > nPast(): INVALID_ARGUMENT. */
  public void trim(int nKeep) {
    long h = handle.acquire();
    try {
      Native.contextTrim(h, nKeep);
    } finally {
      handle.release();
    }
  }

  /**
   * Tokenizes prompt (BOS as the vocabulary requests), appends it after what the context holds,
   * then samples up to params.nPredict tokens, passing each to listener (may be null). Stops at
   * EOS (unless ignoreEos), a stop string, nPredict, or the listener returning false, and then
   * returns the statistics. Throws LesException CANCELLED after {@link #cancel()}, CONTEXT_FULL
   * when the KV cache filled up (after delivering what fit), or the listener's own exception.
   * The KV cache keeps the prompt and the generated tokens.
   */
  public GenerateStats generate(String prompt, GenerateParams params, TokenListener listener) {
    byte[] p = Native.utf8(prompt, "prompt");
    if (params == null) throw new LesException(LesException.INVALID_ARGUMENT, "params is null");
    byte[][] stop = null;
    if (params.stop != null) {
      stop = new byte[params.stop.length][];
      for (int i = 0; i < stop.length; i++) stop[i] = Native.utf8(params.stop[i], "stop[" + i + "]");
    }
    long h = handle.acquire();
    try {
      LesModel draft = params.draftModel;
      long dh = draft != null ? draft.handle.acquire() : 0;
      try {
        Native.generate(h, p, params.ints(), params.floats(), params.seed, stop, dh, listener);
      } finally {
        if (draft != null) draft.handle.release();
      }
      return stats(h);
    } finally {
      handle.release();
    }
  }

  private static GenerateStats stats(long h) {
    double[] v = Native.generateStats(h);
    return new GenerateStats(v, new String(Native.stopReasonName((int) v[7]),
        StandardCharsets.UTF_8));
  }

  /** Statistics of the last generate() on this context. */
  public GenerateStats lastStats() {
    long h = handle.acquire();
    try {
      return stats(h);
    } finally {
      handle.release();
    }
  }

  /**
   * Asks a running generate() to stop after the current token (it then throws CANCELLED).
   * Thread-safe; a no-op on a closed context or when no generate() runs. A cancel that arrives
   * before generate() starts is dropped (generate() clears the flag when it starts).
   */
  public void cancel() {
    handle.withOpenHandle(Native::contextCancel);
  }

  /** True once close() was called. */
  public boolean isClosed() {
    return handle.isClosed();
  }

  /** Frees the context (les_context_free); during generate() it cancels first. Idempotent. */
  @Override
  public void close() {
    handle.withOpenHandle(Native::contextCancel);
    handle.close();
  }
}
