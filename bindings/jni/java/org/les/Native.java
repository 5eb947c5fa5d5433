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
  static native boolean versionAtLeast(int major, int minor);
  static native int maxThreads();

  // Model (les_model_*). which: see LesModel.INFO_*.
  static native long modelLoad(byte[] path, int nThreads, int weights, boolean lockWeights, int logLevel);
  static native void modelFree(long model);
  static native int modelInfo(long model, int which);
  static native byte[] modelDesc(long model);
  static native byte[] modelMeta(long model, byte[] key);
  static native int[] tokenize(long model, byte[] text, boolean addSpecial, boolean parseSpecial);
  static native byte[] tokenBytes(long model, int token);
  static native byte[] detokenize(long model, int[] tokens);
  static native void modelCheckDraft(long target, long draft);

  // Chat templates (les_chat_*). model may be 0 when template names a family; template null =
  // the model's own. roles and contents: one entry per message.
  static native byte[] chatApplyTemplate(long model, byte[] template, byte[][] roles, byte[][] contents,
      boolean addAssistantPrefix);
  /** The canonical name; source[0] receives the les_chat_template_source. */
  static native byte[] chatTemplateResolve(long model, byte[] template, int[] source);
  static native int chatTemplateCount();
  static native byte[] chatTemplateName(int i);

  // Context (les_context_*).
  static native long[] contextDefaults();
  /**
   * draftModel / vision: les_context_params.draft_model (a les_model*) and .vision (a les_vision*),
   * 0 = none; borrowed for the call (the caller keeps them acquired).
   */
  static native long contextCreate(long model, int nCtx, int nBatch, int nThreads, int kvType,
      long expertBudgetBytes, int prefetchCandidates, int ioBackend, int eviction, long memoryLimitBytes,
      long draftModel, long vision);
  static native void contextFree(long ctx);
  /** allLogits: les_context_decode_all_logits instead of les_context_decode. */
  static native void contextDecode(long ctx, int[] tokens, boolean allLogits);
  /** i: les_context_logits_ith's index, or Integer.MIN_VALUE for les_context_logits. */
  static native float[] contextLogits(long ctx, int nVocab, int i);
  static native int contextNPast(long ctx);
  static native int contextNCtx(long ctx);
  static native void contextReset(long ctx);
  static native void contextTrim(long ctx, int nKeep);
  static native void contextCancel(long ctx);

  // Expert streaming and the memory plan (les_stream.h; any thread). Arrays: see StreamStats,
  // StreamLayerStats, MemoryPlan.
  static native void contextSetExpertBudget(long ctx, long bytes);
  static native void contextStreamStats(long ctx, long[] ints, double[] reals);
  static native void contextStreamLayerStats(long ctx, int layer, long[] ints, double[] reals);
  static native void contextMemoryPlan(long ctx, long[] ints);

  // Sessions (les_session.h).
  static native int[] contextTokens(long ctx);
  static native long contextStateSize(long ctx);
  static native byte[] contextStateSave(long ctx);
  static native void contextStateLoad(long ctx, byte[] state);
  static native void contextStateSaveFile(long ctx, byte[] path);
  static native void contextStateLoadFile(long ctx, byte[] path);

  // Sampler (les_sampler_*). floats: GenerateParams.floats().
  static native long samplerCreate(float[] floats, int topK, int penaltyLastN, long seed);
  static native void samplerFree(long sampler);
  static native int samplerSample(long sampler, float[] logits);
  static native void samplerAccept(long sampler, int token);
  static native void samplerReset(long sampler);
  static native long samplerSeed(long sampler);

  // Image input (les_vision.h). The handles are les_vision* / les_image*; stats arrays: see
  // VisionStats.
  static native int visionDefaultThreads();
  static native long visionLoad(long model, byte[] mmprojPath, int nThreads, boolean releaseAfterEncode);
  static native void visionFree(long vision);
  static native long visionEncodeRgb(long vision, byte[] rgb, int width, int height);
  static native long visionEncodeFile(long vision, byte[] path);
  static native long visionEncodeMemory(long vision, byte[] data);
  static native void visionStats(long vision, long[] ints, double[] reals);
  static native int imageNTokens(long image);
  static native void imageFree(long image);
  static native void contextAppendImage(long ctx, long image);

  // Generation (les_generate*). ints/floats: see GenerateParams.ints()/floats().
  static native void generateDefaults(int[] ints, float[] floats, long[] seed);
  /**
   * draftModel: a model handle for les_generate_params.draft_model, 0 = none. promptTokens
   * non-null: the prompt is these ids (les_generate_params.prompt_tokens) and prompt is ignored.
   * images non-null: les_generate_with_images with these les_image handles (one per marker).
   */
  static native void generate(long ctx, byte[] prompt, int[] ints, float[] floats, long seed,
      byte[][] stop, long draftModel, int[] promptTokens, long[] images, TokenListener listener);
  /**
   * {n_prompt_tokens, n_generated, prefill_s, decode_s, prefill tok/s, decode tok/s, n_decoded,
   * stop_reason, n_target_passes, n_verify_passes, n_drafted, n_draft_verified, n_draft_accepted,
   * n_pass_tokens, union_experts, union_bytes, expert_bytes_read, draft_seconds}.
   */
  static native double[] generateStats(long ctx);
  static native byte[] stopReasonName(int reason);
  /** les_generate_stats.seed of the last generation. */
  static native long generateSeed(long ctx);

  /** Called by the shim for each generated token: decodes the UTF-8 piece for the listener. */
  static boolean deliver(TokenListener listener, int token, byte[] piece) {
    return listener.onToken(token, new String(piece, StandardCharsets.UTF_8));
  }

  /** UTF-8 bytes of each string of an array argument; null anywhere is INVALID_ARGUMENT. */
  static byte[][] utf8All(String[] s, String what) {
    if (s == null) throw new LesException(LesException.INVALID_ARGUMENT, what + " is null");
    byte[][] out = new byte[s.length][];
    for (int i = 0; i < s.length; i++) out[i] = utf8(s[i], what + "[" + i + "]");
    return out;
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
