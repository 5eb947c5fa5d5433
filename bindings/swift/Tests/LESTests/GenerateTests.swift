// Model, tokenizer and generation on the trained fixture against llama.cpp's
// greedy continuation: the token stream (AsyncThrowingStream), ending it early,
// cancel() from another Task, cancelling the consuming Task, decode + logits +
// Sampler, and speculative decoding (prompt lookup, a draft model, MTP refused).
import CLes
import Foundation
import LES
import XCTest

final class GenerateTests: TrainedModelTestCase {
  func testModelFactsAndTokenizer() throws {
    XCTAssertTrue(LES.versionAtLeast(0, 2))
    XCTAssertFalse(LES.versionAtLeast(99, 0))
    XCTAssertFalse(LES.version.isEmpty)
    XCTAssertGreaterThan(LES.maxThreads, 0)
    XCTAssertEqual(model.expertCount, 32, model.description)
    XCTAssertGreaterThan(model.expertsUsed, 0)
    XCTAssertGreaterThan(model.layerCount, 0)
    XCTAssertGreaterThan(model.trainingContextLength, 0)
    XCTAssertTrue(model.description.contains("qwen3moe"), model.description)
    XCTAssertEqual(model.metadata("general.architecture"), "qwen3moe")
    XCTAssertNil(model.metadata("no.such.key"))
    XCTAssertEqual(try model.tokenize(ref.prompt), ref.promptTokens)
    XCTAssertEqual(try model.detokenize(ref.greedyIds), ref.greedyText)
    // A text longer than the first buffer guess (the wrapper asks again with the size needed).
    let long = String(repeating: "\u{1F600}", count: 50)
    XCTAssertGreaterThan(try model.tokenize(long, addSpecial: false).count, 50)
    expectLES(LES_ERR_INVALID_ARGUMENT, "a token id beyond the vocabulary") {
      try model.tokenBytes(model.vocabularySize)
    }
  }

  func testGreedyStreamEqualsLlamaCpp() async throws {
    let ctx = try Context(model: model)
    var ids: [Int32] = []
    var text = ""
    for try await t in ctx.tokens(prompt: ref.prompt, params: greedy(ref.greedyIds.count)) {
      ids.append(t.id)
      text += t.text
    }
    XCTAssertEqual(ids, ref.greedyIds)
    XCTAssertEqual(text, ref.greedyText)
    let stats = try ctx.lastStats()
    XCTAssertEqual(stats.stopReason, "n_predict")
    XCTAssertEqual(Int(stats.generated), ref.greedyIds.count)
    XCTAssertEqual(Int(stats.promptTokens), ref.promptTokens.count)
    XCTAssertGreaterThan(stats.decodeTokensPerSecond, 0)
    // The KV cache holds the prompt and the answer.
    let held = try ctx.heldTokens()
    XCTAssertEqual(Array(held.prefix(ref.promptTokens.count)), ref.promptTokens)
    XCTAssertEqual(held.count, ref.promptTokens.count + ref.greedyIds.count)

    // The prompt as token ids gives the same.
    try ctx.reset()
    var p = greedy(ref.greedyIds.count)
    p.promptTokens = ref.promptTokens
    let got1 = await collect(ctx.tokens(prompt: "ignored", params: p)).tokens.map(\.id)
    XCTAssertEqual(got1, ref.greedyIds)

    // A stop string (five characters from the middle of the answer) ends the text just before it.
    try ctx.reset()
    let chars = Array(ref.greedyText)
    let stop = String(chars[chars.count / 2..<chars.count / 2 + 5])
    let cut = try XCTUnwrap(ref.greedyText.range(of: stop))
    var s = greedy(ref.greedyIds.count)
    s.stop = [stop]
    let stopped = await collect(ctx.tokens(prompt: ref.prompt, params: s))
    XCTAssertNil(stopped.error)
    XCTAssertEqual(try ctx.lastStats().stopReason, "stop_string")
    XCTAssertEqual(stopped.tokens.map(\.text).joined(), String(ref.greedyText[..<cut.lowerBound]), "stop \(stop)")
  }

  func testSeededSamplingRepeatsAndReportsItsSeed() async throws {
    var p = GenerateParams()
    p.maxTokens = 24
    p.ignoreEOS = true
    p.temperature = 0.8
    p.topK = 40
    p.topP = 0.95
    p.minP = 0.05
    p.repeatPenalty = 1.1
    p.presencePenalty = 0.1
    p.frequencyPenalty = 0.1
    p.penaltyLastN = 16
    p.seed = 42
    let ctx = try Context(model: model)
    let first = await collect(ctx.tokens(prompt: ref.prompt, params: p)).tokens.map(\.id)
    XCTAssertEqual(try ctx.lastStats().seed, 42)
    try ctx.reset()
    let second = await collect(ctx.tokens(prompt: ref.prompt, params: p)).tokens.map(\.id)
    XCTAssertEqual(first.count, 24)
    XCTAssertEqual(first, second, "the same seed gives the same text")
    // The default seed is drawn at random and reported.
    try ctx.reset()
    var random = p
    random.seed = GenerateParams().seed
    _ = await collect(ctx.tokens(prompt: ref.prompt, params: random))
    XCTAssertNotEqual(try ctx.lastStats().seed, GenerateParams().seed)
  }

  func testEndingTheLoopEarlyStopsTheGenerationAndFreesTheContext() async throws {
    let ctx = try Context(model: model)
    var n = 0
    for try await _ in ctx.tokens(prompt: ref.prompt, params: greedy(ref.greedyIds.count)) {
      n += 1
      if n == 3 { break }
    }
    // The next call waits for the generation to stop at its next token, then runs.
    let stats = try ctx.lastStats()
    XCTAssertEqual(stats.stopReason, "cancelled")
    XCTAssertLessThan(Int(stats.generated), ref.greedyIds.count)
    XCTAssertGreaterThanOrEqual(stats.generated, 3)
    // Nothing stays pending: the next generation runs to the end.
    try ctx.reset()
    let got2 = await collect(ctx.tokens(prompt: ref.prompt, params: greedy(ref.greedyIds.count))).tokens.map(\.id)
    XCTAssertEqual(
      got2,
      ref.greedyIds)
  }

  func testCancelFromAnotherTask() async throws {
    let ctx = try Context(model: model)
    var params = greedy(4000)
    params.maxTokens = 4000
    let started = AsyncStream<Void>.makeStream()
    let consumer = Task { () -> (Int, Error?) in
      var n = 0
      do {
        for try await _ in ctx.tokens(prompt: ref.prompt, params: params) {
          n += 1
          if n == 2 { started.continuation.yield() }
        }
      } catch {
        return (n, error)
      }
      return (n, nil)
    }
    for await _ in started.stream { break }
    Task.detached { ctx.cancel() }  // any thread
    let (n, error) = await consumer.value
    let e = try XCTUnwrap(error as? LESError, "the stream ends with an LESError")
    XCTAssertTrue(e.isCancelled, e.description)
    XCTAssertEqual(e.statusName, "LES_ERR_CANCELLED")
    XCTAssertTrue(e.message.contains("les_context_cancel"), e.message)
    XCTAssertLessThan(n, 4000)
    XCTAssertEqual(try ctx.lastStats().stopReason, "cancelled")

    // A cancel with no generation running stays pending: the next one ends at once.
    ctx.cancel()
    let pending = await collect(ctx.tokens(prompt: ref.prompt, params: greedy(4)))
    XCTAssertEqual(pending.tokens.count, 0)
    XCTAssertTrue((pending.error as? LESError)?.isCancelled ?? false, "\(String(describing: pending.error))")
    // ... and only that one.
    try ctx.reset()
    let got3 = await collect(ctx.tokens(prompt: ref.prompt, params: greedy(4))).tokens.count
    XCTAssertEqual(got3, 4)
  }

  func testCancellingTheConsumingTaskStopsTheGeneration() async throws {
    let ctx = try Context(model: model)
    let counted = AsyncStream<Void>.makeStream()
    let consumer = Task {
      var n = 0
      for try await _ in ctx.tokens(prompt: ref.prompt, params: greedy(4000)) {
        n += 1
        if n == 2 { counted.continuation.yield() }
      }
      return n
    }
    for await _ in counted.stream { break }
    consumer.cancel()
    _ = try? await consumer.value
    let stats = try ctx.lastStats()  // waits for the generation thread to let go
    XCTAssertEqual(stats.stopReason, "cancelled")
    XCTAssertLessThan(stats.generated, 4000)
  }

  func testOneCallerAtATime() async throws {
    let ctx = try Context(model: model)
    let first = ctx.tokens(prompt: ref.prompt, params: greedy(200))
    var it = first.makeAsyncIterator()
    _ = try await it.next()  // the generation holds the context now
    expectLES(LES_ERR_INVALID_ARGUMENT, "a second caller during a generation") { try ctx.heldTokens() }
    let second = await collect(ctx.tokens(prompt: "x", params: greedy(1)))
    XCTAssertTrue(
      (second.error as? LESError)?.message.contains("already in use") ?? false,
      "\(String(describing: second.error))")
    // Statistics and the budget are callable from anywhere, also now.
    XCTAssertEqual((try? ctx.memoryPlan())?.limitBytes, 0)
    while try await it.next() != nil {}
  }

  func testDecodeLogitsAndSampler() throws {
    let ctx = try Context(model: model)
    XCTAssertNil(try ctx.logits(), "no logits before a decode")
    try ctx.decode(ref.promptTokens)
    XCTAssertEqual(ctx.pastCount, Int32(ref.promptTokens.count))
    XCTAssertGreaterThan(ctx.contextLength, ctx.pastCount)
    let logits = try XCTUnwrap(try ctx.logits())
    XCTAssertEqual(logits.count, Int(model.vocabularySize))
    let greedySampler = try Sampler(params: GenerateParams.greedy(maxTokens: 1))
    XCTAssertEqual(try greedySampler.sample(logits), ref.greedyIds[0])
    try greedySampler.accept(ref.greedyIds[0])
    greedySampler.reset()
    // The same seed gives the same draws; the seed is reported.
    var random = GenerateParams()
    random.temperature = 0.9
    random.seed = 1234
    let a = try Sampler(params: random)
    let b = try Sampler(params: random)
    XCTAssertEqual(a.seed, 1234)
    XCTAssertEqual(try (0..<8).map { _ in try a.sample(logits) }, try (0..<8).map { _ in try b.sample(logits) })
    var bad = GenerateParams()
    bad.topP = 2
    let e = expectLES(LES_ERR_INVALID_ARGUMENT, "top_p 2") { try Sampler(params: bad) }
    XCTAssertTrue(e?.message.contains("top_p") ?? false, e?.message ?? "")
    expectLES(LES_ERR_INVALID_ARGUMENT, "no logits") { try a.sample([]) }

    // All logits of a batch; a trim back makes the last kept token pending.
    try ctx.reset()
    try ctx.decode(ref.promptTokens, allLogits: true)
    XCTAssertEqual(try ctx.logits(at: -1), logits)
    XCTAssertNotNil(try ctx.logits(at: 0))
    XCTAssertNil(try ctx.logits(at: Int32(ref.promptTokens.count)))
    try ctx.trim(to: 4)
    XCTAssertEqual(Array(try ctx.heldTokens()), Array(ref.promptTokens.prefix(4)))
    expectLES(LES_ERR_INVALID_ARGUMENT, "trim beyond the tokens held") { try ctx.trim(to: 999) }
  }

  func testSpeculativeDecodingKeepsTheText() async throws {
    var lookup = greedy(ref.greedyIds.count)
    lookup.lookupNgram = 3
    lookup.draftMin = 1
    var ctx = try Context(model: model)
    let got4 = await collect(ctx.tokens(prompt: ref.prompt, params: lookup)).tokens.map(\.text).joined()
    XCTAssertEqual(got4, ref.greedyText)
    XCTAssertGreaterThan(try ctx.lastStats().targetPasses, 0)

    // The model drafts for itself: every draft is accepted.
    try model.checkDraft(model)
    var draft = greedy(ref.greedyIds.count)
    draft.draftModel = model
    draft.draftMax = 3
    draft.draftMin = 3
    ctx = try Context(model: model)
    let got5 = await collect(ctx.tokens(prompt: ref.prompt, params: draft)).tokens.map(\.text).joined()
    XCTAssertEqual(got5, ref.greedyText)
    let s = try ctx.lastStats()
    XCTAssertGreaterThan(s.draftVerified, 0)
    XCTAssertEqual(s.draftVerified, s.draftAccepted)
    XCTAssertEqual(s.acceptanceRate, 1)

    // A model without an MTP head refuses mtp, naming the model; two drafters are refused.
    var mtp = greedy(4)
    mtp.mtp = true
    let refused = await collect(ctx.tokens(prompt: ref.prompt, params: mtp)).error as? LESError
    XCTAssertEqual(refused?.statusName, "LES_ERR_UNSUPPORTED", "\(String(describing: refused))")
    var both = draft
    both.lookupNgram = 2
    let two = await collect(ctx.tokens(prompt: ref.prompt, params: both)).error as? LESError
    XCTAssertEqual(two?.statusName, "LES_ERR_INVALID_ARGUMENT", "\(String(describing: two))")
    var badDraft = greedy(4)
    badDraft.draftModel = model
    badDraft.draftMax = 0
    let bad = await collect(ctx.tokens(prompt: ref.prompt, params: badDraft)).error as? LESError
    XCTAssertTrue(bad?.message.contains("draft_max") ?? false, "\(String(describing: bad))")
    // A draft model of another vocabulary is refused, naming the difference.
    let other = try Model(path: try Fixtures.path("synthetic/qwen3moe-Q4_K_M.gguf"), threads: 2)
    expectLES(LES_ERR_INVALID_ARGUMENT, "another vocabulary") { try model.checkDraft(other) }
  }
}
