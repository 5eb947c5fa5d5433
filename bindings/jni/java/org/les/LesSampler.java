package org.les;

import java.io.Closeable;

/**
 * A sampler on its own ({@code les_sampler}), for apps that drive {@link LesContext#decode} and
 * pick tokens themselves: penalties, top-k, top-p, min-p, temperature, then a draw (temperature 0 is
 * greedy). Use from one thread at a time (a concurrent call throws LesException); close when done.
 * Every method of a closed sampler throws LesException (INVALID_ARGUMENT).
 */
public final class LesSampler implements Closeable {
  private final NativeHandle handle;

  /**
   * A sampler with the sampling fields of params (temperature, topK, topP, minP, the penalties,
   * penaltyLastN, seed; the others are ignored). Throws INVALID_ARGUMENT naming a bad field.
   */
  public LesSampler(GenerateParams params) {
    if (params == null) throw new LesException(LesException.INVALID_ARGUMENT, "params is null");
    handle = new NativeHandle("LesSampler",
        Native.samplerCreate(params.floats(), params.topK, params.penaltyLastN, params.seed), true,
        Native::samplerFree);
  }

  /**
   * The next token from logits (nVocab floats, index = token id, e.g. {@link LesContext#logits()}).
   * Does not record it: call accept() with the token the app appends. Throws INVALID_ARGUMENT for
   * null or empty logits, a NaN or +infinity, or every logit -infinity.
   */
  public int sample(float[] logits) {
    long h = handle.acquire();
    try {
      return Native.samplerSample(h, logits);
    } finally {
      handle.release();
    }
  }

  /** Records a token in the penalty window (prompt and generated tokens). token < 0: INVALID_ARGUMENT. */
  public void accept(int token) {
    long h = handle.acquire();
    try {
      Native.samplerAccept(h, token);
    } finally {
      handle.release();
    }
  }

  /** Clears the penalty window and restarts the random sequence from the seed. */
  public void reset() {
    long h = handle.acquire();
    try {
      Native.samplerReset(h);
    } finally {
      handle.release();
    }
  }

  /** The seed in use (the drawn one when the seed asked for a random one). */
  public long seed() {
    long h = handle.acquire();
    try {
      return Native.samplerSeed(h);
    } finally {
      handle.release();
    }
  }

  /** True once close() was called. */
  public boolean isClosed() {
    return handle.isClosed();
  }

  /** Frees the sampler. Idempotent. */
  @Override
  public void close() {
    handle.close();
  }
}
