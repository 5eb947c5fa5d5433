// Context: an idiomatic Kotlin handle over org.les.LesContext (the JNI binding of
// les_context): generation with a lambda per token, chat turns, expert budget and
// streaming statistics, session save/restore, speculative-decoding settings.
package org.les.kotlin

import java.io.Closeable
import java.io.File
import org.les.ChatMessage
import org.les.ContextParams
import org.les.GenerateParams
import org.les.GenerateStats
import org.les.LesContext
import org.les.LesException
import org.les.MemoryPlan
import org.les.StreamLayerStats
import org.les.StreamStats
import org.les.TokenListener

/**
 * Receives each generated token: its id and its text (whole UTF-8 characters, so it may be empty;
 * id -1 for a final flush). Runs on the thread that called generate; return false to stop (the
 * call then returns normally). An exception thrown here stops generation and propagates.
 */
typealias TokenCallback = (token: Int, text: String) -> Boolean

/** A chat turn's answer and the statistics of its generation. */
class Reply(val text: String, val stats: GenerateStats)

/** Speculative decoding by prompt lookup: n-grams of up to [ngram] tokens (1..16) draft. Lossless. */
fun GenerateParams.promptLookup(ngram: Int) {
    lookupNgram = ngram
}

/** Speculative decoding with [model] (same vocabulary) drafting up to [max] tokens per verify pass (1..64). */
fun GenerateParams.draftWith(model: Model, max: Int = draftMax, min: Int = draftMin) {
    draftModel = model.java
    draftMax = max
    draftMin = min
}

/**
 * Counts [model], the draft model this context will decode with ([draftWith]), in memoryLimitBytes:
 * its weights, KV cache at nCtx and scratch ([MemoryPlan.draftBytes]); a limit that cannot hold it
 * too throws INVALID_ARGUMENT naming the draft model. Ignored without a limit. The model is only
 * borrowed while the context is created; a closed one throws [LesException] INVALID_ARGUMENT
 * ("ContextParams.draftModel: LesModel is closed").
 */
fun ContextParams.countDraftModel(model: Model) {
    draftModel = model.java
}

/**
 * Speculative decoding with the draft head stored in the context's own model (an MTP / nextn
 * block), drafting up to [max] tokens per verify pass (1..64). Lossless; a model without an MTP
 * head makes generate throw [LesException] (LES_ERR_UNSUPPORTED, naming the model).
 */
fun GenerateParams.mtpHead(max: Int = draftMax, min: Int = draftMin) {
    mtp = true
    draftMax = max
    draftMin = min
}

/**
 * One conversation over a [Model]: KV cache, logits, expert cache. Use it from one thread at a
 * time (a concurrent call throws [LesException] instead of racing); [cancel], [setExpertBudget],
 * [streamStats], [streamLayerStats] and [memoryPlan] may be called from any thread, also during
 * [generate]. Implements [Closeable] for `use {}`; every call on a closed context throws
 * [LesException] (INVALID_ARGUMENT, "LesContext is closed").
 *
 * Throws [LesException] when creation fails: INVALID_ARGUMENT (a bad field, a budget below the
 * minimum, an impossible memory limit, a closed model given to [countDraftModel] or encoder given
 * to [countVision]; named), UNSUPPORTED (an I/O backend this system lacks), IO.
 */
class Context(model: Model, configure: ContextParams.() -> Unit = {}) : Closeable {
    /** The Java object this wraps, for what the Kotlin layer does not cover. */
    val java: LesContext = LesContext(model.java, ContextParams().apply(configure))
    private val model: Model = model

    /** Tokens held (KV cache positions plus a pending last token) and the KV cache's capacity. */
    val nPast: Int get() = java.nPast()
    val nCtx: Int get() = java.nCtx()

    /** The ids held: KV cache positions in order, then the pending token. */
    val tokens: IntArray get() = java.tokens()

    /**
     * Appends [prompt] (tokenized; BOS at the start of an empty context) after what the context
     * holds and generates; [configure] sets [GenerateParams] fields (nPredict, temperature, topK,
     * topP, minP, penalties, seed, stop, parseSpecial, and speculative decoding through
     * [promptLookup] / [draftWith]); [onToken] gets each token. Throws [LesException]: CANCELLED
     * after [cancel], CONTEXT_FULL when the KV cache filled up (after delivering what fit).
     */
    fun generate(prompt: String, configure: GenerateParams.() -> Unit = {},
                 onToken: TokenCallback = { _, _ -> true }): GenerateStats =
        java.generate(prompt, GenerateParams().apply(configure), listener(onToken))

    /**
     * As [generate], with [images]: [prompt] holds one [Image.MARKER] per image and images[i] goes
     * where the i-th marker is (for a chat prompt put the markers in the user message and set
     * parseSpecial = true). Throws [LesException]: INVALID_ARGUMENT (the marker count differs from
     * images.size, a closed image or one of another model), CONTEXT_FULL (the whole prompt does
     * not fit: nothing is decoded), UNSUPPORTED (mtp after image positions), and [generate]'s.
     */
    fun generate(prompt: String, images: List<Image>, configure: GenerateParams.() -> Unit = {},
                 onToken: TokenCallback = { _, _ -> true }): GenerateStats =
        java.generate(prompt, images.map { it.java }.toTypedArray(), GenerateParams().apply(configure),
            listener(onToken))

    /**
     * Appends [image] after what the context holds (its marker tokens and embedding rows take the
     * next image.nTokens positions); [generate] then continues after it. Errors leave the context
     * unchanged: CONTEXT_FULL (too few positions left; both counts named), INVALID_ARGUMENT.
     */
    fun appendImage(image: Image) = java.appendImage(image.java)

    /** As [generate], with the prompt as token ids (BOS is the caller's to include). */
    fun generate(prompt: IntArray, configure: GenerateParams.() -> Unit = {},
                 onToken: TokenCallback = { _, _ -> true }): GenerateStats =
        java.generate(prompt, GenerateParams().apply(configure), listener(onToken))

    /**
     * One chat turn: renders the whole conversation [messages] with [template] (null: the model's
     * own) and the assistant's opening, keeps the longest prefix of it the context already holds
     * (earlier turns are not evaluated again), generates the answer with parseSpecial = true and
     * returns it. Append the answer as `assistant(reply.text)` and the next user message to
     * [messages] for the next turn. Errors as [Model.chatPrompt] and [generate].
     */
    fun chat(messages: List<ChatMessage>, template: String? = null, configure: GenerateParams.() -> Unit = {},
             onToken: TokenCallback = { _, _ -> true }): Reply {
        val prompt = model.tokenize(model.chatPrompt(messages, template, true), true, true)
        val keep = keepPrefixOf(prompt)
        val text = StringBuilder()
        val stats = java.generate(prompt.copyOfRange(keep, prompt.size),
            GenerateParams().apply(configure).apply { parseSpecial = true },
            listener { token, piece -> text.append(piece); onToken(token, piece) })
        return Reply(text.toString(), stats)
    }

    // Trims the context to the longest common prefix of what it holds and `prompt`, leaving at
    // least one prompt token to evaluate; returns that prefix's length. A model whose state cannot
    // be unwound to that point (recurrent layers) starts over.
    private fun keepPrefixOf(prompt: IntArray): Int {
        val held = java.tokens()
        var n = 0
        while (n < held.size && n < prompt.size - 1 && held[n] == prompt[n]) n++
        if (n == held.size) return n
        try {
            java.trim(n)
        } catch (e: LesException) {
            java.reset()
            return 0
        }
        return n
    }

    /** Evaluates [tokens] after what the context holds; [logits] then gives the last token's. */
    fun decode(vararg tokens: Int) = java.decode(*tokens)

    /** The last decoded token's logits (nVocab floats), or null before any decode. */
    fun logits(): FloatArray? = java.logits()

    /** Keeps the first [nKeep] tokens (rollback); [reset] empties the context. */
    fun trim(nKeep: Int) = java.trim(nKeep)
    fun reset() = java.reset()

    /**
     * Stops a running [generate] after the current token (it throws CANCELLED); when none runs,
     * the next [generate] throws CANCELLED at once (the cancel stays pending). Any thread.
     */
    fun cancel() = java.cancel()

    /**
     * Changes the expert budget (bytes) of a streaming context from any thread, also during
     * [generate]: returns once it is in effect; the text does not change. INVALID_ARGUMENT when
     * the context does not stream experts or [bytes] is below the minimum (named).
     */
    fun setExpertBudget(bytes: Long) = java.setExpertBudget(bytes)

    /** Streaming totals since creation; per-layer figures; the memory plan. Any thread. */
    fun streamStats(): StreamStats = java.streamStats()
    fun streamLayerStats(layer: Int): StreamLayerStats = java.streamLayerStats(layer)
    fun memoryPlan(): MemoryPlan = java.memoryPlan()

    /** Statistics of the last generation. */
    val lastStats: GenerateStats get() = java.lastStats()

    /** The context's state (tokens, KV cache, the model's fingerprint) as bytes. */
    fun saveState(): ByteArray = java.saveState()

    /** Writes the state to [file] (through FILE.tmp and a rename). IO errors name the path. */
    fun saveState(file: File) = java.saveStateFile(file.path)

    /**
     * Restores a saved state; generation continues as if it had never been saved. Errors leave
     * the context unchanged: FORMAT (truncated, corrupted), INVALID_ARGUMENT (another model),
     * CONTEXT_FULL (nCtx too small), IO (file).
     */
    fun restoreState(state: ByteArray) = java.loadState(state)
    fun restoreState(file: File) = java.loadStateFile(file.path)

    /** True once [close] was called. */
    val isClosed: Boolean get() = java.isClosed

    /** Frees the context (cancelling a running generate first); idempotent. */
    override fun close() = java.close()

    private fun listener(onToken: TokenCallback) = TokenListener { token, text -> onToken(token, text) }
}
