package org.les;

import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * Guards one native handle (a {@code les_model*} or {@code les_context*} as a long) against use
 * after close and, for contexts, against concurrent calls. Every native call runs between
 * {@link #acquire()} (or {@link #acquireShared()}) and {@link #release()}; {@link #close()} frees
 * the handle at once when no call is running, otherwise when the last running call releases it.
 * Thread-safe.
 */
final class NativeHandle {
  private final String owner;
  private final boolean exclusive;
  private final LongConsumer free;
  private long handle;
  private int active; // calls running (exclusive and shared)
  private int activeExclusive; // of those, calls that hold the handle alone
  private boolean closing;

  /**
   * @param owner class name used in error messages ("LesModel")
   * @param handle the native pointer, non-zero
   * @param exclusive true: at most one call at a time (a context is used by one thread at a
   *     time); a second concurrent or re-entrant call throws instead of racing
   * @param free frees the native pointer; called exactly once
   */
  NativeHandle(String owner, long handle, boolean exclusive, LongConsumer free) {
    this.owner = owner;
    this.handle = handle;
    this.exclusive = exclusive;
    this.free = free;
  }

  /** The handle for one call; throws LesException if closed or (exclusive) already in use. */
  synchronized long acquire() {
    if (handle == 0 || closing) {
      throw new LesException(LesException.INVALID_ARGUMENT, owner + " is closed");
    }
    if (exclusive && activeExclusive > 0) {
      throw new LesException(LesException.INVALID_ARGUMENT, owner
          + " is already in a call (use a context from one thread at a time; only cancel(),"
          + " setExpertBudget(), streamStats(), streamLayerStats() and memoryPlan() may be called"
          + " during another call)");
    }
    active++;
    if (exclusive) activeExclusive++;
    return handle;
  }

  /**
   * The handle for a call that les.h allows from any thread at any time, also while another
   * call runs (set the expert budget, read streaming statistics). It keeps the handle from being
   * freed until {@link #releaseShared()}, but does not exclude other calls. Throws LesException
   * if closed.
   */
  synchronized long acquireShared() {
    if (handle == 0 || closing) {
      throw new LesException(LesException.INVALID_ARGUMENT, owner + " is closed");
    }
    active++;
    return handle;
  }

  /**
   * The handle of an object passed as an argument of another object's call (a draft model or a
   * vision encoder in ContextParams): as {@link #acquireShared()}, so a concurrent close() cannot
   * free it before {@link #releaseShared()}, but a closed handle throws INVALID_ARGUMENT naming
   * the argument: "{@code what}: LesModel is closed". Thread-safe.
   */
  synchronized long acquireArgument(String what) {
    if (handle == 0 || closing) {
      throw new LesException(LesException.INVALID_ARGUMENT, what + ": " + owner + " is closed");
    }
    active++;
    return handle;
  }

  /** Ends a call started by acquire(); frees the handle if close() came meanwhile. */
  void release() {
    releaseCall(exclusive);
  }

  /** Ends a call started by acquireShared(); frees the handle if close() came meanwhile. */
  void releaseShared() {
    releaseCall(false);
  }

  private void releaseCall(boolean wasExclusive) {
    long toFree = 0;
    synchronized (this) {
      active--;
      if (wasExclusive) activeExclusive--;
      if (active == 0 && closing && handle != 0) {
        toFree = handle;
        handle = 0;
      }
    }
    if (toFree != 0) free.accept(toFree);
  }

  /**
   * Runs {@code action} with the handle if it is still open, under this object's lock (so the
   * handle cannot be freed meanwhile) and without counting as a call. For cancel(): the action
   * must be quick and must not block.
   */
  synchronized void withOpenHandle(LongConsumer action) {
    if (handle != 0) action.accept(handle);
  }

  /** Runs fn with the handle between acquire() and release(), returning its value. */
  <T> T call(LongFunction<T> fn) {
    long h = acquire();
    try {
      return fn.apply(h);
    } finally {
      release();
    }
  }

  /** Runs fn with the handle between acquire() and release(). */
  void run(LongConsumer fn) {
    long h = acquire();
    try {
      fn.accept(h);
    } finally {
      release();
    }
  }

  /** Runs fn with the handle between acquireShared() and releaseShared(), returning its value. */
  <T> T callShared(LongFunction<T> fn) {
    long h = acquireShared();
    try {
      return fn.apply(h);
    } finally {
      releaseShared();
    }
  }

  /** True once close() was called. */
  synchronized boolean isClosed() {
    return handle == 0 || closing;
  }

  /** Marks the handle closed; frees it now or when the running call ends. Idempotent. */
  void close() {
    long toFree = 0;
    synchronized (this) {
      if (handle == 0 || closing) return;
      closing = true;
      if (active == 0) {
        toFree = handle;
        handle = 0;
      }
    }
    if (toFree != 0) free.accept(toFree);
  }
}
