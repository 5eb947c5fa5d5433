package org.les;

import java.nio.charset.StandardCharsets;

/**
 * An error reported by LES: carries the {@code les_status} code of les.h and the message of
 * {@code les_last_error()} / {@code les_context_last_error()} (or, for misuse the Java layer
 * catches itself such as a closed object or a null argument, {@link #INVALID_ARGUMENT} and a
 * message naming the problem). Unchecked, so Kotlin and Java callers handle it where they choose.
 */
public class LesException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Status codes, equal to the {@code les_status} values of les.h. */
  public static final int OK = 0;
  public static final int INVALID_ARGUMENT = -1;
  public static final int IO = -100;
  public static final int FORMAT = -200;
  public static final int UNSUPPORTED = -201;
  public static final int OUT_OF_MEMORY = -300;
  public static final int CONTEXT_FULL = -400;
  public static final int CANCELLED = -401;
  public static final int INTERNAL = -900;

  private final int status;

  /** An exception with a {@code les_status} code and a message. */
  public LesException(int status, String message) {
    super(statusName(status) + ": " + message);
    this.status = status;
  }

  /** Called by the JNI shim: the message arrives as UTF-8 bytes (les.h strings are UTF-8). */
  LesException(int status, byte[] utf8Message) {
    this(status, new String(utf8Message, StandardCharsets.UTF_8));
  }

  /** The {@code les_status} code (one of the constants above; negative). */
  public int status() {
    return status;
  }

  /** Short English name of a status code, the same text as {@code les_status_name()}. */
  public static String statusName(int status) {
    switch (status) {
      case OK: return "ok";
      case INVALID_ARGUMENT: return "invalid argument";
      case IO: return "I/O error";
      case FORMAT: return "format error";
      case UNSUPPORTED: return "unsupported";
      case OUT_OF_MEMORY: return "out of memory";
      case CONTEXT_FULL: return "context full";
      case CANCELLED: return "cancelled";
      case INTERNAL: return "internal error";
      default: return "unknown status";
    }
  }
}
