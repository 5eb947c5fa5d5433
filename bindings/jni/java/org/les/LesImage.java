package org.les;

import java.io.Closeable;

/**
 * One encoded image ({@code les_image}: its embedding rows and marker layout), made by
 * {@link LesVision}. Immutable and thread-safe: it may be appended to several contexts on several
 * threads at once, and outlives the LesVision that made it. Close it when done (a close during a
 * call frees it when the call returns); every use of a closed image throws LesException
 * (INVALID_ARGUMENT).
 */
public final class LesImage implements Closeable {
  /** The text that stands for an image in a prompt of LesContext.generate with images ("<__media__>"). */
  public static final String MARKER = "<__media__>";

  final NativeHandle handle;

  LesImage(long h) {
    handle = new NativeHandle("LesImage", h, false, Native::imageFree);
  }

  /**
   * Decoder positions the image takes in a context: its embedding rows plus its marker tokens
   * (e.g. 18 for one 16-row overview between {@code <image>} and {@code </image>}).
   */
  public int nTokens() {
    return handle.callShared(Native::imageNTokens);
  }

  /** True once close() was called. */
  public boolean isClosed() {
    return handle.isClosed();
  }

  /** Frees the image (les_image_free). Idempotent. */
  @Override
  public void close() {
    handle.close();
  }
}
