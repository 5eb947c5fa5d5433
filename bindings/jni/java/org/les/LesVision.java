package org.les;

import java.io.Closeable;

/**
 * A vision encoder ("mmproj" GGUF) bound to one text model ({@code les_vision}): turns images into
 * {@link LesImage}s that a {@link LesContext} decodes in place of tokens. Thread-safe: any number
 * of threads may encode and read stats() at once (encodes take turns on the encoder's lock). Close
 * it when done (a close during an encode frees it when the encode returns); the images it made
 * stay valid. Every method of a closed vision throws LesException (INVALID_ARGUMENT).
 */
public final class LesVision implements Closeable {
  final NativeHandle handle;

  private LesVision(long h) {
    handle = new NativeHandle("LesVision", h, false, Native::visionFree);
  }

  /** Loads the encoder with the default parameters (see {@link VisionParams}). */
  public static LesVision load(LesModel model, String mmprojPath) {
    return load(model, mmprojPath, new VisionParams());
  }

  /**
   * Loads the vision encoder in mmprojPath for model (which may be closed afterwards; the encoder
   * keeps the weights it needs). Throws LesException, the message naming the problem:
   * INVALID_ARGUMENT (null, bad params, the projector's output width differs from the model's
   * embedding width), UNSUPPORTED (a projector other than minicpmv4_6; a text model without the
   * image marker tokens), IO (cannot open or read), FORMAT (not a clip GGUF, a bad key or tensor).
   */
  public static LesVision load(LesModel model, String mmprojPath, VisionParams params) {
    if (model == null) throw new LesException(LesException.INVALID_ARGUMENT, "model is null");
    if (params == null) throw new LesException(LesException.INVALID_ARGUMENT, "params is null");
    byte[] p = Native.utf8(mmprojPath, "mmprojPath");
    long mh = model.handle.acquire();
    try {
      return new LesVision(Native.visionLoad(mh, p, params.nThreads, params.releaseAfterEncode));
    } finally {
      model.handle.release();
    }
  }

  /**
   * Encodes an RGB8 image: rgb holds width x height pixels, row-major from the top row, 3 bytes
   * per pixel (R, G, B), no row padding (width * height * 3 bytes). Throws LesException:
   * INVALID_ARGUMENT (null rgb, width or height <= 0, a length other than width * height * 3,
   * more than 2^26 pixels), IO / FORMAT (releaseAfterEncode and the mmproj file cannot be mapped
   * again), OUT_OF_MEMORY. Thread-safe.
   */
  public LesImage encodeRgb(byte[] rgb, int width, int height) {
    if (rgb == null) throw new LesException(LesException.INVALID_ARGUMENT, "rgb is null");
    return new LesImage(handle.callShared(h -> Native.visionEncodeRgb(h, rgb, width, height)));
  }

  /**
   * Decodes the image file at path (PNG, JPEG, binary PPM/PGM; grey becomes RGB, alpha is
   * dropped) and encodes it. Throws LesException: encodeRgb()'s errors, IO (cannot open or read
   * path, named), FORMAT (not one of the formats, corrupt, truncated, a zero-size header; the
   * message names the file and the reason), INVALID_ARGUMENT (null path, a file above 1 GiB).
   * Thread-safe.
   */
  public LesImage encodeFile(String path) {
    byte[] p = Native.utf8(path, "path");
    return new LesImage(handle.callShared(h -> Native.visionEncodeFile(h, p)));
  }

  /**
   * Decodes an encoded image held in memory (the bytes of a PNG, JPEG or binary PPM/PGM file,
   * e.g. a base64-decoded data: URL) and encodes it. Throws LesException: encodeFile()'s errors
   * without the IO ones (FORMAT for bytes that are no such image; INVALID_ARGUMENT for null or
   * empty data). Thread-safe.
   */
  public LesImage encodeMemory(byte[] data) {
    if (data == null) throw new LesException(LesException.INVALID_ARGUMENT, "data is null");
    return new LesImage(handle.callShared(h -> Native.visionEncodeMemory(h, data)));
  }

  /** What the encoder has done so far (counts, times, weight residency). Thread-safe. */
  public VisionStats stats() {
    long[] i = new long[7];
    double[] r = new double[2];
    handle.callShared(h -> {
      Native.visionStats(h, i, r);
      return null;
    });
    return new VisionStats(i, r);
  }

  /** True once close() was called. */
  public boolean isClosed() {
    return handle.isClosed();
  }

  /** Frees the encoder and its weights (les_vision_free) once no encode runs. Idempotent. */
  @Override
  public void close() {
    handle.close();
  }
}
