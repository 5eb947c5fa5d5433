package org.les;

/**
 * What a {@link LesVision} has done since it was loaded ({@code les_vision_stats}), from
 * {@link LesVision#stats()}. Bytes are bytes, times are milliseconds. Immutable.
 */
public final class VisionStats {
  /** Images encoded so far. */
  public final long nImagesEncoded;
  /** Encoder runs (an overview plus its slices per image). */
  public final long nChunksEncoded;
  /** Embedding rows produced (marker tokens not counted). */
  public final long nImageTokens;
  /** The encoder's weight bytes, and of those the bytes mapped now (0 after a release). */
  public final long weightBytes;
  public final long weightBytesResident;
  /** Times the weights were mapped (1 + reloads after releases). */
  public final long nWeightLoads;
  /** What an encode needs at its peak: weights + encode scratch (MemoryPlan's vision share). */
  public final long memoryBytes;
  /** Wall time of all encodes and of the last one, milliseconds. */
  public final double encodeMsTotal;
  public final double lastEncodeMs;

  VisionStats(long[] i, double[] r) {
    nImagesEncoded = i[0];
    nChunksEncoded = i[1];
    nImageTokens = i[2];
    weightBytes = i[3];
    weightBytesResident = i[4];
    nWeightLoads = i[5];
    memoryBytes = i[6];
    encodeMsTotal = r[0];
    lastEncodeMs = r[1];
  }

  @Override
  public String toString() {
    return String.format("%d images (%d chunks, %d embedding rows) in %.1f ms (last %.1f ms),"
        + " weights %d bytes (%d resident, %d loads), peak %d bytes", nImagesEncoded, nChunksEncoded,
        nImageTokens, encodeMsTotal, lastEncodeMs, weightBytes, weightBytesResident, nWeightLoads, memoryBytes);
  }
}
