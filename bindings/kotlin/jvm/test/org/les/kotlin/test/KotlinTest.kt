// Tests of the Kotlin layer (bindings/kotlin/jvm) on the trained fixture model against
// llama.cpp's greedy continuation (the arguments come from bindings/jni/test/run_java_test.sh):
// use {} on the handles, the token lambda, chat turns that reuse the context, session
// save/restore, the expert budget changed from another thread, statistics, speculative
// settings, a draft model and a vision encoder counted in a memory limit (compared with the C
// API's figures), the sampler, and closed handles throwing LesException. A plain main(): prints
// "N passed, M failed" and exits 1 on any failure.
package org.les.kotlin.test

import java.io.File
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference
import kotlin.concurrent.thread
import kotlin.system.exitProcess
import org.les.ContextParams
import org.les.LesContext
import org.les.LesException
import org.les.ModelParams
import org.les.kotlin.Model
import org.les.kotlin.Sampler
import org.les.kotlin.assistant
import org.les.kotlin.countDraftModel
import org.les.kotlin.countVision
import org.les.kotlin.Image
import org.les.kotlin.draftWith
import org.les.kotlin.loadVision
import org.les.kotlin.promptLookup
import org.les.kotlin.system
import org.les.kotlin.user

private var passed = 0
private var failed = 0

private fun test(name: String, body: () -> Unit) {
    try {
        body()
        passed++
        println("PASS $name")
    } catch (t: Throwable) {
        failed++
        println("FAIL $name: $t")
        t.printStackTrace(System.out)
    }
}

private fun check(cond: Boolean, what: () -> String) {
    if (!cond) throw AssertionError(what())
}

private fun <T> checkEq(expected: T, got: T, what: String) =
    check(expected == got) { "$what: expected <$expected> got <$got>" }

/** Runs [body], which must throw LesException with [status]; returns it. */
private fun expectLes(status: Int, body: () -> Unit): LesException {
    try {
        body()
    } catch (e: LesException) {
        checkEq(LesException.statusName(status), LesException.statusName(e.status()), "status of ${e.message}")
        return e
    }
    throw AssertionError("expected LesException ${LesException.statusName(status)}")
}

/**
 * {draft_bytes, vision_bytes} the C API reports for a context with these files and parameters
 * (bindings/jni/test/memory_plan_probe.c, a C program on les.h, found through the environment
 * variable LES_MEMORY_PLAN_PROBE that CTest sets); null when it is unset outside CI.
 */
private fun cApiShares(model: String, nCtx: Int, limit: Long, nThreads: Int, draft: String?, mmproj: String?): List<Long>? {
    val probe = System.getenv("LES_MEMORY_PLAN_PROBE")
    if (probe.isNullOrEmpty()) {
        val ci = System.getenv("CI")
        check(ci != "true" && ci != "1") { "LES_MEMORY_PLAN_PROBE is not set" }
        println("  LES_MEMORY_PLAN_PROBE unset: not compared with the C API")
        return null
    }
    val p = ProcessBuilder(probe, model, "$nCtx", "$limit", "$nThreads", draft ?: "-", mmproj ?: "-")
        .redirectErrorStream(true).start()
    val out = p.inputStream.bufferedReader().readText()
    val rc = p.waitFor()
    val m = Regex("draft_bytes=([0-9]+) vision_bytes=([0-9]+)").find(out)
        ?: throw AssertionError("memory_plan_probe exit $rc: $out")
    checkEq(0, rc, "memory_plan_probe exit status ($out)")
    return listOf(m.groupValues[1].toLong(), m.groupValues[2].toLong())
}

fun main(args: Array<String>) {
    if (args.size != 6) {
        System.err.println("usage: KotlinTest MODEL PROMPT PROMPT_TOKENS PROMPT_TOKENS_NO_SPECIAL GREEDY_IDS GREEDY_TEXT")
        exitProcess(2)
    }
    val path = args[0]
    val prompt = args[1]
    val greedyIds = args[4].split(",").map { it.toInt() }
    val greedyText = args[5]
    val n = greedyIds.size
    println("libles ${Model.libraryVersion}")

    Model.load(path) { nThreads = 2 }.use { model ->
        test("generate streams llama.cpp's greedy text to a lambda") {
            model.newContext().use { ctx ->
                val ids = mutableListOf<Int>()
                val text = StringBuilder()
                val stats = ctx.generate(prompt, { nPredict = n; temperature = 0f; ignoreEos = true }) { id, piece ->
                    ids += id
                    text.append(piece)
                    true
                }
                checkEq(greedyText, text.toString(), "text")
                checkEq(greedyIds, ids, "ids")
                checkEq("n_predict", stats.stopReason, "stop reason")
                var count = 0
                ctx.reset()
                ctx.generate(prompt, { nPredict = n; temperature = 0f }) { _, _ -> ++count < 3 }
                checkEq(3, count, "returning false stops")
            }
        }

        test("speculative settings (prompt lookup, draft model) keep the text") {
            model.newContext().use { ctx ->
                val text = StringBuilder()
                val stats = ctx.generate(prompt, { nPredict = n; temperature = 0f; ignoreEos = true; promptLookup(3); draftMin = 1 }) { _, s -> text.append(s); true }
                checkEq(greedyText, text.toString(), "lookup text")
                check(stats.nTargetPasses > 0) { "target passes" }
            }
            model.newContext().use { ctx ->
                val text = StringBuilder()
                val stats = ctx.generate(prompt, { nPredict = n; temperature = 0f; ignoreEos = true; draftWith(model, max = 3, min = 3) }) { _, s -> text.append(s); true }
                checkEq(greedyText, text.toString(), "draft-model text")
                checkEq(stats.nDraftVerified, stats.nDraftAccepted, "self-draft: every draft accepted")
            }
        }

        test("chat: a second turn reuses the first turn's tokens") {
            model.newContext { nCtx = 512 }.use { ctx ->
                val messages = mutableListOf(system("Be brief."), user("Where is the castle?"))
                val first = ctx.chat(messages, configure = { nPredict = 12; temperature = 0f; ignoreEos = true })
                checkEq(12, first.stats.nGenerated, "first answer tokens")
                val promptOne = first.stats.nPromptTokens
                messages += assistant(first.text)
                messages += user("And the river?")
                val second = ctx.chat(messages, configure = { nPredict = 8; temperature = 0f; ignoreEos = true })
                checkEq(8, second.stats.nGenerated, "second answer tokens")
                val full = model.tokenize(model.chatPrompt(messages), true, true).size
                println("  turn 2 evaluated ${second.stats.nPromptTokens} of its $full prompt tokens (turn 1: $promptOne)")
                // At least the whole first prompt is reused (its answer may re-tokenize differently).
                check(second.stats.nPromptTokens <= full - promptOne) {
                    "second turn evaluated ${second.stats.nPromptTokens} of $full prompt tokens (first turn: $promptOne)"
                }
                expectLes(LesException.INVALID_ARGUMENT) { ctx.chat(messages, template = "no-such-family") }
            }
        }

        test("session: saveState/restoreState (bytes and file) continue llama.cpp's text") {
            val file = File.createTempFile("les-kotlin", ".lesstate").apply { deleteOnExit() }
            val half = n / 2
            val head = StringBuilder()
            val state = model.newContext().use { ctx ->
                ctx.generate(prompt, { nPredict = half; temperature = 0f; ignoreEos = true }) { _, s -> head.append(s); true }
                ctx.saveState(file)
                ctx.saveState()
            }
            for (fromFile in listOf(false, true)) {
                model.newContext().use { ctx ->
                    if (fromFile) ctx.restoreState(file) else ctx.restoreState(state)
                    val tail = StringBuilder()
                    ctx.generate("", { nPredict = n - half; temperature = 0f; ignoreEos = true }) { _, s -> tail.append(s); true }
                    checkEq(greedyText, head.toString() + tail, "text across restore (file: $fromFile)")
                }
            }
            model.newContext().use { ctx ->
                expectLes(LesException.FORMAT) { ctx.restoreState(state.copyOf(state.size / 2)) }
                checkEq(0, ctx.nPast, "a failed restore changes nothing")
            }
        }

        test("setExpertBudget from another thread during generate; stream statistics") {
            model.newContext { expertBudgetBytes = 4L shl 20; ioBackend = ContextParams.IO_PREAD }.use { ctx ->
                // The smallest budget, from the refusal's message ("... minimum N bytes ...").
                val refused = expectLes(LesException.INVALID_ARGUMENT) { ctx.setExpertBudget(1) }
                val low = Regex("minimum ([0-9]+) bytes").find(refused.message!!)?.groupValues?.get(1)?.toLong()
                    ?: throw AssertionError("refusal names no minimum: ${refused.message}")
                val high = 3 * low
                val stop = AtomicBoolean(false)
                val flips = AtomicInteger(0)
                val error = AtomicReference<Throwable>()
                val flipper = thread(name = "budget-flipper") {
                    try {
                        while (!stop.get()) {
                            val b = if (flips.get() % 2 == 0) low else high
                            ctx.setExpertBudget(b)
                            checkEq(b, ctx.streamStats().budgetBytes, "budget in effect")
                            flips.incrementAndGet()
                            Thread.sleep(0, 300000)
                        }
                    } catch (t: Throwable) {
                        error.set(t)
                    }
                }
                val text = StringBuilder()
                try {
                    ctx.generate(prompt, { nPredict = n; temperature = 0f; ignoreEos = true }) { _, s -> text.append(s); true }
                } finally {
                    stop.set(true)
                    flipper.join()
                }
                error.get()?.let { throw AssertionError("flipper failed", it) }
                checkEq(greedyText, text.toString(), "streamed text under budget changes")
                check(flips.get() > 0) { "no budget change happened" }
                val s = ctx.streamStats()
                println("  $flips budget changes; $s")
                check(s.bytesRead > 0 && s.tokens > 0 && s.readErrors == 0L) { "stream stats $s" }
                val l = ctx.streamLayerStats(model.nLayer - 1)
                check(l.recall in 0.0..1.0 && l.precision in 0.0..1.0) { "layer recall ${l.recall} precision ${l.precision}" }
            }
            model.newContext().use { resident ->
                expectLes(LesException.INVALID_ARGUMENT) { resident.streamStats() }
            }
        }

        test("memory limit counts a draft model: draftBytes as the C API's; a closed draft is refused") {
            val draftPath = File(path).absoluteFile.parentFile.resolve("tiny-qwen3moe-Q4_K_M.gguf").path
            val limit = 2L shl 30
            Model.load(draftPath) { nThreads = 2 }.use { draft ->
                val draftBytes = model.newContext { nCtx = 256; memoryLimitBytes = limit; countDraftModel(draft) }.use { ctx ->
                    val plan = ctx.memoryPlan()
                    check(plan.draftBytes > 0) { "draftBytes ${plan.draftBytes}" }
                    checkEq(0L, plan.visionBytes, "no vision encoder")
                    val text = StringBuilder()
                    ctx.generate(prompt, { nPredict = 8; temperature = 0f; ignoreEos = true; draftWith(draft) }) { _, s -> text.append(s); true }
                    check(text.isNotEmpty() && greedyText.startsWith(text.toString())) { "llama.cpp's text begins with $text" }
                    plan.draftBytes
                }
                cApiShares(path, 256, limit, 2, draftPath, null)?.let {
                    checkEq(it[0], draftBytes, "draftBytes: the C API's for the same parameters")
                    checkEq(0L, it[1], "C API vision_bytes")
                }
                val closed = Model.load(draftPath) { nThreads = 2 }
                closed.close()
                val params = ContextParams().apply { nCtx = 256; memoryLimitBytes = limit; countDraftModel(closed) }
                val e = expectLes(LesException.INVALID_ARGUMENT) { LesContext(model.java, params).close() }
                check(e.message!!.contains("ContextParams.draftModel") && e.message!!.contains("closed")) { "message: ${e.message}" }
                params.countDraftModel(draft)
                LesContext(model.java, params).use {
                    checkEq(draftBytes, it.memoryPlan().draftBytes, "params usable after the refusal")
                }
            }
        }

        test("sampler over decode() logits picks llama.cpp's first greedy token") {
            model.newContext().use { ctx ->
                Sampler { temperature = 0f }.use { sampler ->
                    ctx.decode(*model.tokenize(prompt))
                    val logits = ctx.logits() ?: throw AssertionError("no logits after decode")
                    checkEq(greedyIds[0], sampler.sample(logits), "greedy token")
                }
            }
            expectLes(LesException.INVALID_ARGUMENT) { Sampler { topP = 2f }.close() }
        }

        test("closed handles throw LesException naming the handle") {
            val ctx = model.newContext()
            ctx.close()
            ctx.close()
            check(ctx.isClosed) { "isClosed" }
            val e = expectLes(LesException.INVALID_ARGUMENT) { ctx.generate(prompt) }
            check(e.message!!.contains("closed")) { "message: ${e.message}" }
            expectLes(LesException.INVALID_ARGUMENT) { ctx.setExpertBudget(1L shl 20) }
            expectLes(LesException.INVALID_ARGUMENT) { ctx.saveState() }
            val second = Model.load(path) { nThreads = 2; weights = ModelParams.WEIGHTS_READ }
            val survivor = second.newContext()
            second.close()
            expectLes(LesException.INVALID_ARGUMENT) { second.tokenize(prompt) }
            expectLes(LesException.INVALID_ARGUMENT) { second.newContext() }
            survivor.use {
                val text = StringBuilder()
                it.generate(prompt, { nPredict = n; temperature = 0f; ignoreEos = true }) { _, s -> text.append(s); true }
                checkEq(greedyText, text.toString(), "a context outlives its closed model")
            }
        }
    }

    test("load errors: IO for a missing file, INVALID_ARGUMENT for a bad field") {
        val e = expectLes(LesException.IO) { Model.load("/nonexistent/model.gguf") }
        check(e.message!!.contains("/nonexistent/model.gguf")) { "message names the file: ${e.message}" }
        expectLes(LesException.INVALID_ARGUMENT) { Model.load(path) { weights = 9 } }
        check(Model.chatTemplateNames.contains("chatml")) { "template names" }
    }

    // Images (Vision / Image) on the multimodal fixtures next to the trained ones, when present:
    // llama-mtmd-cli's greedy tokens for test-224x224.ppm (kVisionRef224, tests/support/vision_api.h).
    val mm = File(path).absoluteFile.parentFile.parentFile.resolve("multimodal")
    if (mm.resolve("qwen35moe-mm-F16.gguf").isFile) {
        test("images: encodeFile and encodeMemory, generate with images and appendImage give llama.cpp's tokens; visionBytes") {
            val ref = listOf(1133, 81, 278, 1901, 2625, 2993, 3536, 2170, 3590, 3114, 3976, 3923, 3323, 78, 209, 953)
            val chat = "<|im_start|>user\n${Image.MARKER}Describe the image.<|im_end|>\n<|im_start|>assistant\n"
            val ppm = mm.resolve("test-224x224.ppm")
            Model.load(mm.resolve("qwen35moe-mm-F16.gguf").path) { nThreads = 2 }.use { model ->
                model.loadVision(mm.resolve("mmproj-minicpmv4_6-tiny-F16.gguf").path) { nThreads = 2 }.use { vision ->
                    vision.encodeFile(ppm).use { img ->
                        checkEq(18, img.nTokens, "positions")
                        model.newContext { nCtx = 256 }.use { ctx ->
                            val ids = mutableListOf<Int>()
                            ctx.generate(chat, listOf(img), { nPredict = 16; temperature = 0f; ignoreEos = true; parseSpecial = true }) { id, _ -> ids += id; true }
                            checkEq(ref, ids, "greedy tokens with the image")
                        }
                    }
                    vision.encodeMemory(ppm.readBytes()).use { img ->
                        model.newContext { nCtx = 256 }.use { ctx ->
                            val at = chat.indexOf(Image.MARKER)
                            ctx.generate(chat.substring(0, at), { nPredict = 0; parseSpecial = true })
                            ctx.appendImage(img)
                            val ids = mutableListOf<Int>()
                            ctx.generate(chat.substring(at + Image.MARKER.length), { nPredict = 16; temperature = 0f; ignoreEos = true; parseSpecial = true }) { id, _ -> ids += id; true }
                            checkEq(ref, ids, "greedy tokens after appendImage")
                        }
                    }
                    check(vision.stats.nImagesEncoded == 2L) { "stats: ${vision.stats}" }
                    // The encoder counted in a memory limit: visionBytes is its peak, as the C API reports it.
                    val limit = 2L shl 30
                    val visionBytes = model.newContext { nCtx = 256; memoryLimitBytes = limit; countVision(vision) }.use { ctx ->
                        val plan = ctx.memoryPlan()
                        check(plan.visionBytes > 0) { "visionBytes ${plan.visionBytes}" }
                        checkEq(vision.stats.memoryBytes, plan.visionBytes, "visionBytes = VisionStats.memoryBytes")
                        checkEq(0L, plan.draftBytes, "no draft model")
                        plan.visionBytes
                    }
                    cApiShares(mm.resolve("qwen35moe-mm-F16.gguf").path, 256, limit, 2, null,
                        mm.resolve("mmproj-minicpmv4_6-tiny-F16.gguf").path)?.let {
                        checkEq(it[1], visionBytes, "visionBytes: the C API's for the same parameters")
                    }
                    val closed = model.loadVision(mm.resolve("mmproj-minicpmv4_6-tiny-F16.gguf").path) { nThreads = 2 }
                    closed.close()
                    val params = ContextParams().apply { nCtx = 256; memoryLimitBytes = limit; countVision(closed) }
                    val refused = expectLes(LesException.INVALID_ARGUMENT) { LesContext(model.java, params).close() }
                    check(refused.message!!.contains("ContextParams.vision") && refused.message!!.contains("closed")) { "message: ${refused.message}" }
                    params.countVision(vision)
                    LesContext(model.java, params).use { checkEq(visionBytes, it.memoryPlan().visionBytes, "params usable after the refusal") }
                    val e = expectLes(LesException.IO) { vision.encodeFile("/nonexistent/cat.png") }
                    check(e.message!!.contains("/nonexistent/cat.png")) { "message names the file: ${e.message}" }
                    expectLes(LesException.INVALID_ARGUMENT) { vision.encodeRgb(ByteArray(0), 0, 0) }
                }
            }
        }
    } else {
        println("SKIP images: no multimodal fixtures in $mm")
    }

    println("$passed passed, $failed failed")
    exitProcess(if (failed == 0) 0 else 1)
}
