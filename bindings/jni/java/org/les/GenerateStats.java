package org.les;

/** Timing of one {@link LesContext#generate} call ({@code les_generate_stats}). Immutable. */
public final class GenerateStats {
  /** Prompt tokens evaluated (prefill). */
  public final int nPromptTokens;
  /** Tokens generated (sampled and delivered). */
  public final int nGenerated;
  /** Wall-clock seconds of the prefill and of the decode phase. */
  public final double prefillSeconds;
  public final double decodeSeconds;
  /** Throughputs in tokens per second (0 when a phase had no tokens). */
  public final double prefillTokensPerSecond;
  public final double decodeTokensPerSecond;
  /** Single-token forward passes (the last sampled token is not evaluated). */
  public final int nDecoded;
  /** Why generation ended: "eos", "stop_string", "n_predict", "context_full" or "cancelled". */
  public final String stopReason;
  /**
   * Speculative decoding (all 0 without a drafter): forward passes of the target in the decode
   * phase (verify passes plus plain one-token passes), and those that checked at least one draft.
   */
  public final int nTargetPasses;
  public final int nVerifyPasses;
  /** Tokens drafted, drafts checked by verify passes, drafts accepted. */
  public final int nDrafted;
  public final int nDraftVerified;
  public final int nDraftAccepted;
  /** Tokens the target passes produced (accepted drafts plus one of the target's own per pass). */
  public final int nPassTokens;
  /** Sum over target passes of their expert union (distinct (layer, expert) pairs) and its bytes. */
  public final long unionExperts;
  public final long unionBytes;
  /** Expert bytes read from the file during target passes (0 when experts are resident). */
  public final long expertBytesRead;
  /** Wall-clock seconds spent drafting (inside decodeSeconds). */
  public final double draftSeconds;

  /** The sampler's seed (the one drawn when GenerateParams.seed asked for a random one). */
  public final long seed;

  GenerateStats(double[] v, String stopReason, long seed) {
    this.seed = seed;
    nPromptTokens = (int) v[0];
    nGenerated = (int) v[1];
    prefillSeconds = v[2];
    decodeSeconds = v[3];
    prefillTokensPerSecond = v[4];
    decodeTokensPerSecond = v[5];
    nDecoded = (int) v[6];
    this.stopReason = stopReason;
    nTargetPasses = (int) v[8];
    nVerifyPasses = (int) v[9];
    nDrafted = (int) v[10];
    nDraftVerified = (int) v[11];
    nDraftAccepted = (int) v[12];
    nPassTokens = (int) v[13];
    unionExperts = (long) v[14];
    unionBytes = (long) v[15];
    expertBytesRead = (long) v[16];
    draftSeconds = v[17];
  }

  /** Accepted drafts per verified draft (0 when none was verified). */
  public double acceptanceRate() {
    return nDraftVerified > 0 ? (double) nDraftAccepted / nDraftVerified : 0.0;
  }

  /** Tokens per target pass (0 without speculative decoding). */
  public double tokensPerTargetPass() {
    return nTargetPasses > 0 ? (double) nPassTokens / nTargetPasses : 0.0;
  }

  @Override
  public String toString() {
    return String.format("prompt %d tokens in %.3f s (%.1f tok/s), generated %d tokens (stop: %s),"
        + " %d decoded in %.3f s (%.1f tok/s)", nPromptTokens, prefillSeconds, prefillTokensPerSecond,
        nGenerated, stopReason, nDecoded, decodeSeconds, decodeTokensPerSecond);
  }
}
