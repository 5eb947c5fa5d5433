// Model: an idiomatic Kotlin handle over org.les.LesModel (the JNI binding of les_model).
package org.les.kotlin

import java.io.Closeable
import org.les.ChatMessage
import org.les.ChatTemplate
import org.les.ContextParams
import org.les.LesModel
import org.les.ModelParams

/**
 * The weights of one GGUF model. Thread-safe: any number of threads and [Context]s may use one
 * model. Implements [Closeable], so Kotlin's `use {}` frees it; contexts created from it stay
 * usable after it is closed (the native weights are freed with the last context). Every call on a
 * closed model throws [org.les.LesException] with status INVALID_ARGUMENT ("LesModel is closed").
 */
class Model private constructor(
    /** The Java object this wraps, for what the Kotlin layer does not cover. */
    val java: LesModel
) : Closeable {

    companion object {
        /**
         * Loads a GGUF file; [configure] sets [ModelParams] fields (nThreads, weights, lockWeights,
         * logLevel) on the library's defaults. Throws [org.les.LesException]: IO (missing file),
         * FORMAT (malformed GGUF), UNSUPPORTED (architecture or type), INVALID_ARGUMENT (a bad
         * field, named).
         */
        fun load(path: String, configure: ModelParams.() -> Unit = {}): Model =
            Model(LesModel.load(path, ModelParams().apply(configure)))

        /** Every chat template name [chatPrompt] accepts: canonical names, then aliases. */
        val chatTemplateNames: List<String> get() = LesModel.chatTemplateNames().toList()

        /** The linked library's version, "MAJOR.MINOR.PATCH". */
        val libraryVersion: String get() = LesModel.libraryVersion()
    }

    val nVocab: Int get() = java.nVocab()
    val nEmbd: Int get() = java.nEmbd()
    val nLayer: Int get() = java.nLayer()
    /** Experts per MoE layer and experts used per token (top-k); 0 for dense models. */
    val nExpert: Int get() = java.nExpert()
    val nExpertUsed: Int get() = java.nExpertUsed()
    val nCtxTrain: Int get() = java.nCtxTrain()
    /** One line: architecture, layers, experts, weight type. */
    val description: String get() = java.description()

    /** GGUF metadata value of [key] as text, or null if absent. */
    fun metadata(key: String): String? = java.metadata(key)

    /** Token ids of [text]; [addSpecial]: BOS/EOS as the vocabulary asks; [parseSpecial]: control-token texts become tokens. */
    fun tokenize(text: String, addSpecial: Boolean = true, parseSpecial: Boolean = false): IntArray =
        java.tokenize(text, addSpecial, parseSpecial)

    /** The text of token ids; an id out of range throws INVALID_ARGUMENT. */
    fun detokenize(tokens: IntArray): String = java.detokenize(tokens)

    /**
     * The prompt text of a conversation in a chat template: [template] a family name, or null for
     * the model's own (chatml when it has none). [addAssistantPrefix]: end with the opening of the
     * assistant's turn. Generate from it with parseSpecial = true ([Context.chat] does both).
     * Throws INVALID_ARGUMENT (unknown name, a role the family lacks), UNSUPPORTED (the model's
     * template is of no known family).
     */
    fun chatPrompt(messages: List<ChatMessage>, template: String? = null, addAssistantPrefix: Boolean = true): String =
        java.applyChatTemplate(template, messages, addAssistantPrefix)

    /** Which template [chatPrompt] uses for [template] and where it comes from. */
    fun chatTemplate(template: String? = null): ChatTemplate = java.chatTemplate(template)

    /** Throws INVALID_ARGUMENT naming the first difference unless [draft] can draft for this model. */
    fun checkDraft(draft: Model) = java.checkDraft(draft.java)

    /**
     * A new context (KV cache, expert cache) over this model; [configure] sets [ContextParams]
     * fields: nCtx, expertBudgetBytes (> 0 streams the routed experts), memoryLimitBytes (with
     * [countDraftModel] / [countVision] counting a draft model / vision encoder in it),
     * prefetchCandidates, ioBackend, eviction, kvType. Throws as [Context]'s constructor.
     */
    fun newContext(configure: ContextParams.() -> Unit = {}): Context = Context(this, configure)

    /** True once [close] was called. */
    val isClosed: Boolean get() = java.isClosed

    /** Releases the model; idempotent. */
    override fun close() = java.close()
}

/** A chat message, e.g. `user("Hi")`. */
fun system(content: String) = ChatMessage.system(content)
fun user(content: String) = ChatMessage.user(content)
fun assistant(content: String) = ChatMessage.assistant(content)
