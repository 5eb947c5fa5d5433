package org.les;

import java.io.Closeable;
import java.nio.charset.StandardCharsets;

/**
 * One generation stream over a {@link LesModel} ({@code les_context}: KV cache, logits, sampler
 * state). Use a context from one thread at a time: a second concurrent call throws LesException
 * instead of racing. {@link #cancel()}, {@link #setExpertBudget}, {@link #streamStats()},
 * {@link #streamLayerStats} and {@link #memoryPlan()} may be called from any thread at any time
 * (also during generate()), and {@link #close()} from any thread (during generate() it cancels and
 * frees the context when generate() returns). Every method of a closed context throws LesException
 * (INVALID_ARGUMENT).
 */
public final class LesContext implements Closeable {
  private final NativeHandle handle;
  private final int nVocab;

  /** A context with the default parameters (see {@link ContextParams}). */
  public LesContext(LesModel model) {
    this(model, new ContextParams());
  }

  /**
   * A context over model (which may be closed afterwards; the weights live on with the context).
   * params.draftModel and params.vision are held open for the call (a concurrent close() frees
   * them after it). Throws LesException: INVALID_ARGUMENT (a bad field, an expert budget below the
   * minimum, a memory limit that cannot hold the fixed parts, a closed draftModel or vision: the
   * message names the field), UNSUPPORTED (an I/O backend this system lacks), IO, OUT_OF_MEMORY.
   * params is only read: it stays usable after a failure.
   */
  public LesContext(LesModel model, ContextParams params) {
    if (model == null) throw new LesException(LesException.INVALID_ARGUMENT, "model is null");
    if (params == null) throw new LesException(LesException.INVALID_ARGUMENT, "params is null");
    nVocab = model.nVocab();
    // Read once: the same objects are acquired and released even if params changes meanwhile.
    final LesModel draft = params.draftModel;
    final LesVision vision = params.vision;
    long mh = model.handle.acquire();
    long ch;
    try {
      long dh = draft != null ? draft.handle.acquireArgument("ContextParams.draftModel") : 0;
      try {
        long vh = vision != null ? vision.handle.acquireArgument("ContextParams.vision") : 0;
        try {
          ch = Native.contextCreate(mh, params.nCtx, params.nBatch, params.nThreads, params.kvType,
              params.expertBudgetBytes, params.prefetchCandidates, params.ioBackend, params.eviction,
              params.memoryLimitBytes, dh, vh);
        } finally {
          if (vh != 0) vision.handle.releaseShared();
        }
      } finally {
        if (dh != 0) draft.handle.releaseShared();
      }
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
    decode(tokens, false);
  }

  /**
   * Like decode(), and keeps the logits of every token (perplexity, verification): afterwards
   * logits(i) gives token i's for 0 <= i < tokens.length (or -tokens.length <= i < 0 from the end).
   */
  public void decodeAllLogits(int... tokens) {
    decode(tokens, true);
  }

  private void decode(int[] tokens, boolean allLogits) {
    if (tokens == null) throw new LesException(LesException.INVALID_ARGUMENT, "tokens is null");
    handle.run(h -> Native.contextDecode(h, tokens, allLogits));
  }

  /** A copy of the last decoded token's logits (nVocab floats, index = token id); null before any decode. */
  public float[] logits() {
    return handle.call(h -> Native.contextLogits(h, nVocab, Integer.MIN_VALUE));
  }

  /**
   * A copy of token i's logits of the last decode (negative i counts from the end, -1 = last).
   * After decodeAllLogits() any i in [-n, n) works, after decode() only -1; null otherwise.
   */
  public float[] logits(int i) {
    return handle.call(h -> Native.contextLogits(h, nVocab, i));
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

  /** Keeps the first nKeep tokens (rollback; the last kept one is evaluated again by the next decode
   * when its logits went with the trim, so generate("") continues). nKeep > nPast(): INVALID_ARGUMENT. */
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
    return generate(Native.utf8(prompt, "prompt"), null, null, params, listener);
  }

  /**
   * Like {@link #generate(String, GenerateParams, TokenListener)} with images
   * ({@code les_generate_with_images}): prompt holds one {@link LesImage#MARKER} per image and
   * images[i] goes where the i-th marker is (a chat prompt from ChatTemplate works when the user
   * message contains the markers; set params.parseSpecial for its control tokens). Throws
   * LesException: INVALID_ARGUMENT (null, a closed image, the marker count differs from
   * images.length, an image of another model), CONTEXT_FULL (the whole prompt does not fit:
   * nothing is decoded), UNSUPPORTED (params.mtp after image positions), and generate()'s errors.
   * An empty images array is generate(). The images may be used by other contexts meanwhile.
   */
  public GenerateStats generate(String prompt, LesImage[] images, GenerateParams params, TokenListener listener) {
    if (images == null) throw new LesException(LesException.INVALID_ARGUMENT, "images is null");
    for (int i = 0; i < images.length; i++) {
      if (images[i] == null) throw new LesException(LesException.INVALID_ARGUMENT, "images[" + i + "] is null");
    }
    return generate(Native.utf8(prompt, "prompt"), null, images.clone(), params, listener);
  }

  /**
   * Like {@link #generate(String, GenerateParams, TokenListener)} with the prompt given as token
   * ids (BOS is the caller's to include), e.g. to continue after the common prefix of tokens().
   * Null or empty promptTokens: INVALID_ARGUMENT.
   */
  public GenerateStats generate(int[] promptTokens, GenerateParams params, TokenListener listener) {
    if (promptTokens == null || promptTokens.length == 0) {
      throw new LesException(LesException.INVALID_ARGUMENT, "promptTokens is null or empty");
    }
    return generate(null, promptTokens.clone(), null, params, listener);
  }

  /**
   * Appends an encoded image after what the context holds ({@code les_context_append_image}):
   * its marker tokens and embedding rows take the next image.nTokens() positions; logits() then
   * holds its last position's logits, tokens() shows -1 for embedding positions. Errors leave the
   * context unchanged: INVALID_ARGUMENT (null, closed, an image of another model), CONTEXT_FULL
   * (fewer positions left than the image needs; the message gives both).
   */
  public void appendImage(LesImage image) {
    if (image == null) throw new LesException(LesException.INVALID_ARGUMENT, "image is null");
    long ih = image.handle.acquire();
    try {
      handle.run(h -> Native.contextAppendImage(h, ih));
    } finally {
      image.handle.release();
    }
  }

  private GenerateStats generate(byte[] p, int[] promptTokens, LesImage[] images, GenerateParams params,
      TokenListener listener) {
    if (params == null) throw new LesException(LesException.INVALID_ARGUMENT, "params is null");
    byte[][] stop = null;
    if (params.stop != null) {
      stop = new byte[params.stop.length][];
      for (int i = 0; i < stop.length; i++) stop[i] = Native.utf8(params.stop[i], "stop[" + i + "]");
    }
    long h = handle.acquire();
    try {
      LesModel draft = params.draftModel;
      long[] ih = images != null ? new long[images.length] : null;
      int nAcquired = 0;
      long dh = 0;
      try {
        // The images stay open (not freed by a concurrent close()) until the call returns.
        for (; ih != null && nAcquired < ih.length; nAcquired++) ih[nAcquired] = images[nAcquired].handle.acquire();
        dh = draft != null ? draft.handle.acquire() : 0;
        Native.generate(h, p, params.ints(), params.floats(), params.seed, stop, dh, promptTokens, ih, listener);
      } finally {
        if (dh != 0) draft.handle.release();
        for (int i = 0; i < nAcquired; i++) images[i].handle.release();
      }
      return stats(h);
    } finally {
      handle.release();
    }
  }

  private static GenerateStats stats(long h) {
    double[] v = Native.generateStats(h);
    return new GenerateStats(v, new String(Native.stopReasonName((int) v[7]), StandardCharsets.UTF_8),
        Native.generateSeed(h));
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
   * Thread-safe; a no-op on a closed context. When no generate() runs, the cancel stays pending
   * (les_context_cancel): the next generate() throws CANCELLED at once, without generating, and
   * the one after runs normally, so a cancel issued just before a generation starts is not lost.
   */
  public void cancel() {
    handle.withOpenHandle(Native::contextCancel);
  }

  /**
   * Changes the expert budget (bytes) of a streaming context, from any thread, also during
   * generate() (e.g. on an Android onTrimMemory()): returns once the new budget is in effect
   * (a few milliseconds at most); the generated text does not change. Throws INVALID_ARGUMENT when
   * the context does not stream experts, or bytes is below the minimum (the message names it);
   * nothing changes then.
   */
  public void setExpertBudget(long bytes) {
    handle.callShared(h -> {
      Native.contextSetExpertBudget(h, bytes);
      return null;
    });
  }

  /** Streaming totals since creation; any thread, any time. Not streaming: INVALID_ARGUMENT. */
  public StreamStats streamStats() {
    long[] i = new long[14];
    double[] r = new double[5];
    handle.callShared(h -> {
      Native.contextStreamStats(h, i, r);
      return null;
    });
    return new StreamStats(i, r);
  }

  /** One layer's cache and predictor figures; any thread. Layer out of range: INVALID_ARGUMENT. */
  public StreamLayerStats streamLayerStats(int layer) {
    long[] i = new long[3];
    double[] r = new double[2];
    handle.callShared(h -> {
      Native.contextStreamLayerStats(h, layer, i, r);
      return null;
    });
    return new StreamLayerStats(i, r);
  }

  /** How ContextParams.memoryLimitBytes was split (all 0 without a limit); any thread. */
  public MemoryPlan memoryPlan() {
    long[] v = new long[12];
    handle.callShared(h -> {
      Native.contextMemoryPlan(h, v);
      return null;
    });
    return new MemoryPlan(v);
  }

  /** The token ids the context holds: its KV cache positions in order, then the pending token. */
  public int[] tokens() {
    return handle.call(Native::contextTokens);
  }

  /** The exact size in bytes of saveState()'s output now. */
  public long stateSize() {
    return handle.call(Native::contextStateSize);
  }

  /**
   * The context's state (tokens, pending token, KV cache, the model's fingerprint), to restore
   * with loadState() into this context or a new one over the same model. OUT_OF_MEMORY when it
   * exceeds a Java array (use saveStateFile()).
   */
  public byte[] saveState() {
    return handle.call(Native::contextStateSave);
  }

  /**
   * Replaces the context's tokens and KV cache with a saved state; generation then continues as
   * if it had never been saved. Errors leave the context unchanged: FORMAT (not a state, truncated,
   * corrupted), INVALID_ARGUMENT (null, another model, another KV cache type), UNSUPPORTED (a newer
   * format), CONTEXT_FULL (nCtx too small).
   */
  public void loadState(byte[] state) {
    if (state == null) throw new LesException(LesException.INVALID_ARGUMENT, "state is null");
    handle.run(h -> Native.contextStateLoad(h, state));
  }

  /** saveState() into a file (written to PATH.tmp, then renamed over path); IO errors name the path. */
  public void saveStateFile(String path) {
    byte[] p = Native.utf8(path, "path");
    handle.run(h -> Native.contextStateSaveFile(h, p));
  }

  /** loadState() from a file written by saveStateFile(); errors as loadState(), IO naming the path. */
  public void loadStateFile(String path) {
    byte[] p = Native.utf8(path, "path");
    handle.run(h -> Native.contextStateLoadFile(h, p));
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
