package org.les;

import java.io.Closeable;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The weights of one GGUF model ({@code les_model}). Immutable after load; thread-safe: any number
 * of threads and {@link LesContext}s may use one model. Close it when done; contexts created from
 * it stay usable after the model is closed (the native weights are freed with the last context).
 * Every method of a closed model throws {@link LesException} ({@link LesException#INVALID_ARGUMENT}).
 */
public final class LesModel implements Closeable {
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
    return load(path, new ModelParams().nThreads(nThreads));
  }

  /**
   * Loads a GGUF file with the given parameters. Throws LesException: IO (missing file, a file
   * changed while read), FORMAT (malformed GGUF), UNSUPPORTED (architecture or tensor type),
   * INVALID_ARGUMENT (a bad field, named), OUT_OF_MEMORY.
   */
  public static LesModel load(String path, ModelParams params) {
    if (params == null) throw new LesException(LesException.INVALID_ARGUMENT, "params is null");
    return new LesModel(Native.modelLoad(Native.utf8(path, "path"), params.nThreads, params.weights,
        params.lockWeights, params.logLevel));
  }

  /** True when the linked library is version major.minor or newer ({@code les_version_at_least}). */
  public static boolean versionAtLeast(int major, int minor) {
    return Native.versionAtLeast(major, minor);
  }

  /** The largest thread count ModelParams and ContextParams accept (4 x hardware threads). */
  public static int maxThreads() {
    return Native.maxThreads();
  }

  /**
   * Renders a conversation into the prompt text of a chat template ({@code les_chat_apply_template}).
   * template: a family name ("chatml", "llama3", ... see {@link #chatTemplateNames()}), or null for
   * the model's own (chatml with a warning when the model has none). addAssistantPrefix: end with
   * the opening of the assistant's turn, so generation answers. Generate from the text with
   * {@link GenerateParams#parseSpecial} = true. Throws INVALID_ARGUMENT (null message, role or
   * content, an unknown name, a role the family cannot express), UNSUPPORTED (the model's template
   * is of no known family: name one). Thread-safe.
   */
  public String applyChatTemplate(String template, List<ChatMessage> messages, boolean addAssistantPrefix) {
    if (messages == null) throw new LesException(LesException.INVALID_ARGUMENT, "messages is null");
    String[] roles = new String[messages.size()];
    String[] contents = new String[messages.size()];
    for (int i = 0; i < roles.length; i++) {
      ChatMessage m = messages.get(i);
      if (m == null) throw new LesException(LesException.INVALID_ARGUMENT, "messages[" + i + "] is null");
      roles[i] = m.role;
      contents[i] = m.content;
    }
    byte[][] r = Native.utf8All(roles, "role of messages");
    byte[][] c = Native.utf8All(contents, "content of messages");
    byte[] t = template == null ? null : Native.utf8(template, "template");
    return new String(handle.call(h -> Native.chatApplyTemplate(h, t, r, c, addAssistantPrefix)),
        StandardCharsets.UTF_8);
  }

  /** Which template applyChatTemplate(template, ...) would use, and where it comes from. */
  public ChatTemplate chatTemplate(String template) {
    byte[] t = template == null ? null : Native.utf8(template, "template");
    int[] source = new int[1];
    byte[] name = handle.call(h -> Native.chatTemplateResolve(h, t, source));
    return new ChatTemplate(new String(name, StandardCharsets.UTF_8), source[0]);
  }

  /** Every template name applyChatTemplate accepts: canonical names, then aliases. */
  public static String[] chatTemplateNames() {
    String[] out = new String[Native.chatTemplateCount()];
    for (int i = 0; i < out.length; i++) out[i] = new String(Native.chatTemplateName(i), StandardCharsets.UTF_8);
    return out;
  }

  /**
   * Checks that draft can draft for this model (the same vocabulary, token for token), as
   * {@link GenerateParams#draftModel} needs; throws INVALID_ARGUMENT naming the first difference.
   */
  public void checkDraft(LesModel draft) {
    if (draft == null) throw new LesException(LesException.INVALID_ARGUMENT, "draft is null");
    long th = handle.acquire();
    try {
      draft.handle.run(dh -> Native.modelCheckDraft(th, dh));
    } finally {
      handle.release();
    }
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
