package org.les;

/**
 * Parameters of {@link LesContext#generate} ({@code les_generate_params} with its
 * {@code les_sampler_params}); a new object holds the library's defaults from
 * {@code les_generate_default_params()}. Not thread-safe (a plain holder).
 */
public final class GenerateParams {
  /** Max tokens to generate; default 128. */
  public int nPredict;
  /** Keep going past end-of-generation tokens. */
  public boolean ignoreEos;
  /** 0 = greedy (ties to the lowest id); default 0.8. */
  public float temperature;
  /** 0 = off; default 40. */
  public int topK;
  /** 1 = off; default 0.95. */
  public float topP;
  /** 0 = off; default 0.05. */
  public float minP;
  /** 1 = off. */
  public float repeatPenalty;
  /** 0 = off. */
  public float presencePenalty;
  /** 0 = off. */
  public float frequencyPenalty;
  /** Window of tokens for the penalties; default 64. */
  public int penaltyLastN;
  /** {@link #seed} value that asks for a random seed (the default; les.h's LES_SEED_RANDOM). */
  public static final long SEED_RANDOM = -1L;
  /**
   * RNG seed (unsigned 64-bit in C); same seed + same model = same text; SEED_RANDOM (default) =
   * a random one, reported by GenerateStats.seed.
   */
  public long seed;
  /** Stop strings (generation stops once the text ends with one); null or empty = none. */
  public String[] stop;
  /**
   * Speculative decoding with prompt lookup: n-grams of up to this many tokens (1..16) are matched
   * against the text so far and what followed them is drafted; 0 (default) = off. Lossless: greedy
   * output equals plain greedy decoding. At most one drafter (not with draftModel).
   */
  public int lookupNgram;
  /**
   * Speculative decoding with a draft model (same vocabulary as the context's model, run resident
   * on its own context); null (default) = none. The context keeps the draft model's weights while
   * it uses it, so closing the LesModel afterwards is safe.
   */
  public LesModel draftModel;
  /** Most drafted tokens per verify pass, 1..64; default 8. */
  public int draftMax;
  /** Fewest drafts verified when offered, 0..draftMax; default 0 (the byte-aware length decides). */
  public int draftMin;
  /**
   * Speculative decoding with the draft head stored in the context's own model (an MTP / nextn
   * block); default false. A model without one makes generate throw LesException
   * (LES_ERR_UNSUPPORTED, naming the model). At most one drafter (not with lookupNgram or
   * draftModel).
   */
  public boolean mtp;

  /**
   * Control-token texts in the prompt (such as {@code <|im_start|>}) become those tokens, as chat
   * prompts from {@link LesModel#applyChatTemplate} need; default false (plain text).
   */
  public boolean parseSpecial;

  public GenerateParams() {
    int[] ints = new int[9];
    float[] floats = new float[6];
    long[] seeds = new long[1];
    Native.generateDefaults(ints, floats, seeds);
    nPredict = ints[0];
    ignoreEos = ints[1] != 0;
    topK = ints[2];
    penaltyLastN = ints[3];
    lookupNgram = ints[4];
    draftMax = ints[5];
    draftMin = ints[6];
    parseSpecial = ints[7] != 0;
    mtp = ints[8] != 0;
    temperature = floats[0];
    topP = floats[1];
    minP = floats[2];
    repeatPenalty = floats[3];
    presencePenalty = floats[4];
    frequencyPenalty = floats[5];
    seed = seeds[0];
  }

  /** Greedy decoding (temperature 0) of at most nPredict tokens. */
  public static GenerateParams greedy(int nPredict) {
    GenerateParams p = new GenerateParams();
    p.temperature = 0.0f;
    p.nPredict = nPredict;
    return p;
  }

  int[] ints() {
    return new int[] {nPredict, ignoreEos ? 1 : 0, topK, penaltyLastN, lookupNgram, draftMax, draftMin,
        parseSpecial ? 1 : 0, mtp ? 1 : 0};
  }

  float[] floats() {
    return new float[] {temperature, topP, minP, repeatPenalty, presencePenalty, frequencyPenalty};
  }
}
