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

  GenerateStats(double[] v, String stopReason) {
    nPromptTokens = (int) v[0];
    nGenerated = (int) v[1];
    prefillSeconds = v[2];
    decodeSeconds = v[3];
    prefillTokensPerSecond = v[4];
    decodeTokensPerSecond = v[5];
    nDecoded = (int) v[6];
    this.stopReason = stopReason;
  }

  @Override
  public String toString() {
    return String.format("prompt %d tokens in %.3f s (%.1f tok/s), generated %d tokens (stop: %s),"
        + " %d decoded in %.3f s (%.1f tok/s)", nPromptTokens, prefillSeconds, prefillTokensPerSecond,
        nGenerated, stopReason, nDecoded, decodeSeconds, decodeTokensPerSecond);
  }
}
