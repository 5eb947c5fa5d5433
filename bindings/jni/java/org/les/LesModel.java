package org.les;

import java.nio.charset.StandardCharsets;

/**
 * The weights of one GGUF model ({@code les_model}). Immutable after load; thread-safe: any number
 * of threads and {@link LesContext}s may use one model. Close it when done; contexts created from
 * it stay usable after the model is closed (the native weights are freed with the last context).
 * Every method of a closed model throws {@link LesException} ({@link LesException#INVALID_ARGUMENT}).
 */
public final class LesModel implements AutoCloseable {
  private static final int INFO_N_VOCAB = 0;
  private static final int INFO_N_EMBD = 1;
  private static final int INFO_N_LAYER = 2;
  private static final int INFO_N_HEAD = 3;
  private static final int INFO_N_HEAD_KV = 4;
  private static final int INFO_N_EXPERT = 5;
  private static final int INFO_N_EXPERT_USED = 6;
  private static final int INFO_N_CTX_TRAIN = 7;
  private static final int INFO_TOKEN_BOS = 8;
  private static final int INFO_TOKEN_EOS = 9;

  final NativeHandle handle;

  private LesModel(long h) {
    handle = new NativeHandle("LesModel", h, false, Native::modelFree);
  }

  /** Loads a GGUF file with the default thread count (one per core). */
  public static LesModel load(String path) {
    return load(path, 0);
  }

  /**
   * Loads a GGUF file. nThreads: compute threads, 0 = number of cores. Throws LesException: IO
   * (missing file), FORMAT (malformed GGUF), UNSUPPORTED (architecture or tensor type).
   */
  public static LesModel load(String path, int nThreads) {
    return new LesModel(Native.modelLoad(Native.utf8(path, "path"), nThreads));
  }

  /** The linked library's version, "MAJOR.MINOR.PATCH" ({@code les_version()}). */
  public static String libraryVersion() {
    return new String(Native.version(), StandardCharsets.UTF_8);
  }

  private int info(int which) {
    long h = handle.acquire();
    try {
      return Native.modelInfo(h, which);
    } finally {
      handle.release();
    }
  }

  /** Vocabulary size: valid token ids are 0 .. nVocab() - 1. */
  public int nVocab() { return info(INFO_N_VOCAB); }
  public int nEmbd() { return info(INFO_N_EMBD); }
  public int nLayer() { return info(INFO_N_LAYER); }
  public int nHead() { return info(INFO_N_HEAD); }
  public int nHeadKv() { return info(INFO_N_HEAD_KV); }
  /** Experts per MoE layer; 0 for dense models. */
  public int nExpert() { return info(INFO_N_EXPERT); }
  /** Experts used per token (top-k); 0 for dense models. */
  public int nExpertUsed() { return info(INFO_N_EXPERT_USED); }
  public int nCtxTrain() { return info(INFO_N_CTX_TRAIN); }
  /** Beginning-of-sequence token id, -1 if none. */
  public int tokenBos() { return info(INFO_TOKEN_BOS); }
  /** End-of-sequence token id, -1 if none. */
  public int tokenEos() { return info(INFO_TOKEN_EOS); }

  /** One-line description ("qwen3moe 8 layers, 32 experts top-4, F16"). */
  public String description() {
    long h = handle.acquire();
    try {
      return new String(Native.modelDesc(h), StandardCharsets.UTF_8);
    } finally {
      handle.release();
    }
  }

  /** GGUF metadata value of key as text (numbers in decimal), or null if absent. */
  public String metadata(String key) {
    byte[] k = Native.utf8(key, "key");
    long h = handle.acquire();
    try {
      byte[] v = Native.modelMeta(h, k);
      return v == null ? null : new String(v, StandardCharsets.UTF_8);
    } finally {
      handle.release();
    }
  }

  /** Tokenizes text, adding BOS/EOS as the vocabulary requests, control-token text kept as text. */
  public int[] tokenize(String text) {
    return tokenize(text, true, false);
  }

  /**
   * Tokenizes text. addSpecial: add BOS/EOS as the vocabulary requests; parseSpecial: text that
   * matches a control token becomes that token.
   */
  public int[] tokenize(String text, boolean addSpecial, boolean parseSpecial) {
    byte[] t = Native.utf8(text, "text");
    long h = handle.acquire();
    try {
      return Native.tokenize(h, t, addSpecial, parseSpecial);
    } finally {
      handle.release();
    }
  }

  /** The bytes of one token's text (may be part of a UTF-8 character). Out of range: LesException. */
  public byte[] tokenBytes(int token) {
    long h = handle.acquire();
    try {
      return Native.tokenBytes(h, token);
    } finally {
      handle.release();
    }
  }

  /** The text of a token sequence (pieces concatenated, then decoded as UTF-8). */
  public String detokenize(int[] tokens) {
    if (tokens == null) throw new LesException(LesException.INVALID_ARGUMENT, "tokens is null");
    long h = handle.acquire();
    try {
      return new String(Native.detokenize(h, tokens), StandardCharsets.UTF_8);
    } finally {
      handle.release();
    }
  }

  /** True once close() was called. */
  public boolean isClosed() {
    return handle.isClosed();
  }

  /** Releases the model (les_model_free). Idempotent; live contexts keep the weights alive. */
  @Override
  public void close() {
    handle.close();
  }
}
