// Sampler: an idiomatic Kotlin handle over org.les.LesSampler (les_sampler), for
// apps that call Context.decode and pick tokens themselves.
package org.les.kotlin

import java.io.Closeable
import org.les.GenerateParams
import org.les.LesSampler

/**
 * Penalties, top-k, top-p, min-p, temperature, then a draw (temperature 0 = greedy), with the
 * sampling fields [configure] sets on [GenerateParams] (temperature, topK, topP, minP, penalties,
 * penaltyLastN, seed). One thread at a time; [Closeable]. A bad field throws INVALID_ARGUMENT
 * naming it; a closed sampler throws INVALID_ARGUMENT ("LesSampler is closed").
 */
class Sampler(configure: GenerateParams.() -> Unit = {}) : Closeable {
    /** The Java object this wraps. */
    val java = LesSampler(GenerateParams().apply(configure))

    /** The next token from [logits] (nVocab floats); not recorded until [accept]. */
    fun sample(logits: FloatArray): Int = java.sample(logits)

    /** Records [token] in the penalty window; [reset] clears it and restarts the random sequence. */
    fun accept(token: Int) = java.accept(token)
    fun reset() = java.reset()

    /** The seed in use (the drawn one for a random seed). */
    val seed: Long get() = java.seed()

    override fun close() = java.close()
}
