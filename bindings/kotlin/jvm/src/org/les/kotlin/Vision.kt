// Vision and Image: idiomatic Kotlin handles over org.les.LesVision and org.les.LesImage (the JNI
// binding of les_vision.h): load an mmproj encoder for a model, encode images, pass them to
// Context.generate / Context.appendImage.
package org.les.kotlin

import java.io.Closeable
import java.io.File
import org.les.ContextParams
import org.les.LesImage
import org.les.LesVision
import org.les.VisionParams
import org.les.VisionStats

/**
 * A vision encoder ("mmproj" GGUF) bound to one [Model], from [Model.loadVision]. Thread-safe: any
 * number of threads may encode and read [stats] at once (encodes take turns on the encoder's
 * lock). Implements [Closeable] for `use {}`; the [Image]s it made stay valid after [close].
 * Every call on a closed vision throws [org.les.LesException] (INVALID_ARGUMENT, "LesVision is
 * closed").
 */
class Vision internal constructor(
    /** The Java object this wraps, for what the Kotlin layer does not cover. */
    val java: LesVision
) : Closeable {

    /**
     * Encodes an RGB8 image: [rgb] holds [width] x [height] pixels, row-major from the top row,
     * 3 bytes per pixel, no row padding. Throws [org.les.LesException]: INVALID_ARGUMENT (width or
     * height <= 0, a size other than width * height * 3, more than 2^26 pixels), OUT_OF_MEMORY.
     */
    fun encodeRgb(rgb: ByteArray, width: Int, height: Int): Image = Image(java.encodeRgb(rgb, width, height))

    /**
     * Decodes and encodes an image file (PNG, JPEG, binary PPM/PGM). Throws IO (cannot open or
     * read it; named), FORMAT (not such an image, corrupt, truncated; the file and the reason named).
     */
    fun encodeFile(file: File): Image = Image(java.encodeFile(file.path))
    fun encodeFile(path: String): Image = Image(java.encodeFile(path))

    /**
     * Decodes and encodes an image file's bytes held in memory (e.g. a base64-decoded data: URL).
     * Throws FORMAT (no such image), INVALID_ARGUMENT (empty).
     */
    fun encodeMemory(data: ByteArray): Image = Image(java.encodeMemory(data))

    /** What the encoder has done: counts, encode times (ms), weight residency (bytes). */
    val stats: VisionStats get() = java.stats()

    /** True once [close] was called. */
    val isClosed: Boolean get() = java.isClosed

    /** Frees the encoder once no encode runs; idempotent. */
    override fun close() = java.close()
}

/**
 * One encoded image: immutable and thread-safe, usable by several contexts on several threads at
 * once; [Closeable]. Put [MARKER] in a prompt where it goes ([Context.generate] with images) or
 * append it with [Context.appendImage]. A closed image throws INVALID_ARGUMENT when used.
 */
class Image internal constructor(
    /** The Java object this wraps. */
    val java: LesImage
) : Closeable {
    companion object {
        /** The text that stands for an image in a prompt: "<__media__>". */
        const val MARKER: String = LesImage.MARKER
    }

    /** Decoder positions it takes in a context: embedding rows plus marker tokens. */
    val nTokens: Int get() = java.nTokens()

    /** True once [close] was called. */
    val isClosed: Boolean get() = java.isClosed

    /** Frees the image; idempotent. */
    override fun close() = java.close()
}

/**
 * Loads the vision encoder in [mmprojPath] for this model; [configure] sets [VisionParams] fields
 * (nThreads, releaseAfterEncode) on the library's defaults. Throws [org.les.LesException]:
 * UNSUPPORTED (another projector; a model without the image marker tokens), INVALID_ARGUMENT (the
 * projector's width differs from the model's; both named), IO, FORMAT. Thread-safe.
 */
fun Model.loadVision(mmprojPath: String, configure: VisionParams.() -> Unit = {}): Vision =
    Vision(LesVision.load(java, mmprojPath, VisionParams().apply(configure)))

/**
 * Counts [vision], the encoder whose images this context will take, in memoryLimitBytes: its
 * weights and encode scratch ([org.les.MemoryPlan.visionBytes], equal to [Vision.stats]'
 * memoryBytes). Ignored without a limit. Only borrowed while the context is created; a closed
 * encoder throws [org.les.LesException] INVALID_ARGUMENT ("ContextParams.vision: LesVision is closed").
 */
fun ContextParams.countVision(vision: Vision) {
    this.vision = vision.java
}
