package org.les;

/**
 * Parameters of {@link LesVision#load} ({@code les_vision_params}). Mutable; the constructor
 * fills the library's defaults.
 */
public final class VisionParams {
  /** Encoder threads including the caller; 0 = the model's thread count; at most LesModel.maxThreads(). */
  public int nThreads;
  /**
   * false (default): the encoder's weights stay mapped while the LesVision is open; true: unmapped
   * after each encode and mapped again from the file by the next one (same embeddings, less
   * memory resident between encodes).
   */
  public boolean releaseAfterEncode;

  /** The defaults of {@code les_vision_default_params()}. */
  public VisionParams() {
    nThreads = Native.visionDefaultThreads();
    releaseAfterEncode = false;
  }

  /** Sets nThreads and returns this, for chaining. */
  public VisionParams nThreads(int n) {
    nThreads = n;
    return this;
  }

  /** Sets releaseAfterEncode and returns this, for chaining. */
  public VisionParams releaseAfterEncode(boolean release) {
    releaseAfterEncode = release;
    return this;
  }
}
