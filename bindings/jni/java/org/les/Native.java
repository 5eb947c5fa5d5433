package org.les;

import java.nio.charset.StandardCharsets;

/**
 * The native methods of libles_jni (bindings/jni/*.cpp), one per les.h call. Handles are
 * {@code les_model*} / {@code les_context*} as longs, guarded by {@link NativeHandle}; strings
 * cross as UTF-8 byte arrays (JNI's own string functions use modified UTF-8). Failures throw
 * {@link LesException}. Package-private: use LesModel and LesContext.
 */
final class Native {
  static {
    System.loadLibrary("les_jni");
  }

  private Native() {}

  static native byte[] version();

  // Model (les_model_*). which: see LesModel.INFO_*.
  static native long modelLoad(byte[] path, int nThreads);
  static native void modelFree(long model);
  static native int modelInfo(long model, int which);
  static native byte[] modelDesc(long model);
  static native byte[] modelMeta(long model, byte[] key);
  static native int[] tokenize(long model, byte[] text, boolean addSpecial, boolean parseSpecial);
  static native byte[] tokenBytes(long model, int token);
  static native byte[] detokenize(long model, int[] tokens);

  // Context (les_context_*).
  static native long[] contextDefaults();
  static native long contextCreate(long model, int nCtx, int nBatch, int nThreads, int kvType,
      long expertBudgetBytes, int prefetchCandidates, int ioBackend, int eviction);
  static native void contextFree(long ctx);
  static native void contextDecode(long ctx, int[] tokens);
  static native float[] contextLogits(long ctx, int nVocab);
  static native int contextNPast(long ctx);
  static native int contextNCtx(long ctx);
  static native void contextReset(long ctx);
  static native void contextTrim(long ctx, int nKeep);
  static native void contextCancel(long ctx);

  // Generation (les_generate*). ints/floats: see GenerateParams.ints()/floats().
  static native void generateDefaults(int[] ints, float[] floats, long[] seed);
  /** draftModel: a model handle for les_generate_params.draft_model, 0 = none. */
  static native void generate(long ctx, byte[] prompt, int[] ints, float[] floats, long seed,
      byte[][] stop, long draftModel, TokenListener listener);
  /**
   * {n_prompt_tokens, n_generated, prefill_s, decode_s, prefill tok/s, decode tok/s, n_decoded,
   * stop_reason, n_target_passes, n_verify_passes, n_drafted, n_draft_verified, n_draft_accepted,
   * n_pass_tokens, union_experts, union_bytes, expert_bytes_read, draft_seconds}.
   */
  static native double[] generateStats(long ctx);
  static native byte[] stopReasonName(int reason);

  /** Called by the shim for each generated token: decodes the UTF-8 piece for the listener. */
  static boolean deliver(TokenListener listener, int token, byte[] piece) {
    return listener.onToken(token, new String(piece, StandardCharsets.UTF_8));
  }

  /** UTF-8 bytes of a string argument; null or an embedded NUL is INVALID_ARGUMENT. */
  static byte[] utf8(String s, String what) {
    if (s == null) throw new LesException(LesException.INVALID_ARGUMENT, what + " is null");
    if (s.indexOf('\0') >= 0) {
      throw new LesException(LesException.INVALID_ARGUMENT, what + " contains a NUL character");
    }
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
