package org.les;

/**
 * One layer's expert cache and predictor figures ({@code les_stream_layer_stats}), from
 * {@link LesContext#streamLayerStats(int)}. Immutable.
 */
public final class StreamLayerStats {
  /** Selected experts found in the cache, in flight, or missed (demand-read) in this layer. */
  public final long cacheHits;
  public final long inflightHits;
  public final long cacheMisses;
  /** |predicted ∩ selected| / |selected| and |predicted ∩ selected| / |predicted|, in [0, 1]. */
  public final double recall;
  public final double precision;

  StreamLayerStats(long[] i, double[] r) {
    cacheHits = i[0];
    inflightHits = i[1];
    cacheMisses = i[2];
    recall = r[0];
    precision = r[1];
  }
}
