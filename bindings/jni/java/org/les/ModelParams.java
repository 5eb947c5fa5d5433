package org.les;

/**
 * Parameters of {@link LesModel#load(String, ModelParams)} ({@code les_model_params}); a new object
 * holds the library's defaults. Not thread-safe (a plain holder). The log callback of
 * les_model_params is not exposed: the library logs to stderr at {@link #logLevel} and above.
 */
public final class ModelParams {
  /** How the weights are held ({@code les_weight_memory}). */
  public static final int WEIGHTS_AUTO = 0;
  public static final int WEIGHTS_MMAP = 1;
  public static final int WEIGHTS_READ = 2;
  /** Log levels ({@code les_log_level}). */
  public static final int LOG_DEBUG = 0;
  public static final int LOG_INFO = 1;
  public static final int LOG_WARN = 2;
  public static final int LOG_ERROR = 3;

  /** Compute threads; 0 = one per core; at most {@link LesModel#maxThreads()}. */
  public int nThreads = 0;
  /**
   * WEIGHTS_AUTO (default): dense weights read into LES's memory, routed experts left in the file
   * (a file changed under a streaming context gives IO errors, never a signal); WEIGHTS_MMAP:
   * everything mapped (least memory; a file changed under it kills the process with SIGBUS);
   * WEIGHTS_READ: everything read. Another value: load() throws INVALID_ARGUMENT naming the field.
   */
  public int weights = WEIGHTS_AUTO;
  /** mlock the weights read into LES's memory (a failed lock only logs a warning); default false. */
  public boolean lockWeights = false;
  /** Least level logged to stderr, LOG_DEBUG..LOG_ERROR; default LOG_WARN. */
  public int logLevel = LOG_WARN;

  /** Sets nThreads and returns this, for chaining. */
  public ModelParams nThreads(int n) {
    nThreads = n;
    return this;
  }

  /** Sets weights (WEIGHTS_*) and returns this, for chaining. */
  public ModelParams weights(int w) {
    weights = w;
    return this;
  }
}
