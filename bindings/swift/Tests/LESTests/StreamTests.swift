// Expert streaming and memory limits on the trained fixture: the budget changed
// from another thread during a generation (the text stays llama.cpp's), stream
// and per-layer statistics, every I/O backend this build has, the memory plan of
// a limit (the field `les --mem-limit-mb` sets) with a draft model counted in it,
// compared with the C API's figures for the same parameters.
import CLes
import Foundation
import LES
import XCTest

final class StreamTests: TrainedModelTestCase {
  /// The smallest budget, from the refusal's message ("... minimum N bytes ...").
  func minimumBudget(_ ctx: Context) throws -> UInt64 {
    let refused = try XCTUnwrap(expectLES(LES_ERR_INVALID_ARGUMENT, "a 1-byte budget") { try ctx.setExpertBudget(1) })
    let words = refused.message.split(separator: " ")
    let at = try XCTUnwrap(words.firstIndex(of: "minimum"), refused.message)
    return try XCTUnwrap(UInt64(words[at + 1]), refused.message)
  }

  func testBudgetFromAnotherThreadDuringGeneration() async throws {
    let ctx = try Context(model: model, expertBudgetBytes: 4 << 20, ioBackend: LES_IO_PREAD)
    let low = try minimumBudget(ctx)
    let high = 3 * low
    let stop = Atomic(false)
    let flips = Atomic(0)
    let failures = Atomic<[String]>([])
    let flipper = Thread {
      while !stop.value {
        let b = flips.value % 2 == 0 ? low : high
        do {
          try ctx.setExpertBudget(b)
          let inEffect = try ctx.streamStats().budgetBytes
          if inEffect != b { failures.mutate { $0.append("budget \(inEffect), set \(b)") } }
        } catch {
          failures.mutate { $0.append("\(error)") }
        }
        flips.mutate { $0 += 1 }
        usleep(300)
      }
    }
    flipper.start()
    let text = await collect(ctx.tokens(prompt: ref.prompt, params: greedy(ref.greedyIds.count)))
    stop.value = true
    while !flipper.isFinished { usleep(1000) }
    XCTAssertNil(text.error)
    XCTAssertEqual(text.tokens.map(\.text).joined(), ref.greedyText)
    XCTAssertEqual(failures.value, [])
    XCTAssertGreaterThan(flips.value, 0)
    let s = try ctx.streamStats()
    XCTAssertGreaterThan(s.bytesRead, 0)
    XCTAssertGreaterThan(s.tokens, 0)
    XCTAssertEqual(s.readErrors, 0)
    XCTAssertGreaterThan(s.oneTokenBudgetBytes, 0)
    let layer = try ctx.streamLayerStats(layer: model.layerCount - 1)
    XCTAssertTrue((0...1).contains(layer.recall) && (0...1).contains(layer.precision), "\(layer)")
    expectLES(LES_ERR_INVALID_ARGUMENT, "a layer out of range") { try ctx.streamLayerStats(layer: model.layerCount) }
    // A resident context has no streaming figures and no budget.
    let resident = try Context(model: model)
    expectLES(LES_ERR_INVALID_ARGUMENT, "stream stats of a resident context") { try resident.streamStats() }
    expectLES(LES_ERR_INVALID_ARGUMENT, "a budget for a resident context") { try resident.setExpertBudget(1 << 20) }
    // Below the minimum at creation: refused, naming it.
    let tooSmall = expectLES(LES_ERR_INVALID_ARGUMENT, "a 1 KiB budget") {
      try Context(model: model, expertBudgetBytes: 1024)
    }
    XCTAssertTrue(tooSmall?.message.contains("minimum") ?? false, tooSmall?.message ?? "")
  }

  func testEveryIOBackendStreamsTheSameText() async throws {
    for io in [LES_IO_AUTO, LES_IO_PREAD, LES_IO_IO_URING, LES_IO_DISPATCH_IO] {
      let ctx: Context
      do {
        ctx = try Context(model: model, expertBudgetBytes: 4 << 20, ioBackend: io)
      } catch let e as LESError where e.statusName == "LES_ERR_UNSUPPORTED" {
        // io_uring refused by the kernel, dispatch_io not in this build: named, not a crash.
        XCTAssertTrue(e.message.contains(io == LES_IO_IO_URING ? "io_uring" : "dispatch_io"), e.message)
        XCTAssertNotEqual(io, LES_IO_PREAD)
        continue
      }
      let text = await collect(ctx.tokens(prompt: ref.prompt, params: greedy(8))).tokens.map(\.text).joined()
      XCTAssertTrue(ref.greedyText.hasPrefix(text) && !text.isEmpty, "les_io_backend \(io.rawValue): \(text)")
    }
  }

  func testContextSettingsKeepTheTextOrItsSize() async throws {
    // No lookahead, LRU eviction, a small budget: still llama.cpp's text (lossless).
    let lru = try Context(
      model: model, threads: 1, expertBudgetBytes: 4 << 20, prefetchCandidates: 0,
      eviction: LES_EVICTION_LRU)
    let text = await collect(lru.tokens(prompt: ref.prompt, params: greedy(ref.greedyIds.count))).tokens.map(\.text)
      .joined()
    XCTAssertEqual(text, ref.greedyText)
    let s = try lru.streamStats()
    XCTAssertEqual(s.prefetchCandidates, 0)
    XCTAssertEqual(s.prefetchExperts, 0)
    // A Q8_0 KV cache takes about half the bytes of F16 in a plan (34 of 64 bytes per 32 values).
    let f16 = try Context(model: model, contextLength: 256, memoryLimitBytes: 2 << 30).memoryPlan().kvBytes
    let q8 = try Context(model: model, contextLength: 256, memoryLimitBytes: 2 << 30, kvType: LES_KV_Q8_0).memoryPlan()
      .kvBytes
    XCTAssertEqual(Double(q8) / Double(f16), 34.0 / 64.0, accuracy: 0.01)
    let q8ctx = try Context(model: model, kvType: LES_KV_Q8_0)
    let q8tokens = await collect(q8ctx.tokens(prompt: ref.prompt, params: greedy(8))).tokens
    XCTAssertEqual(q8tokens.count, 8)
  }

  func testMemoryLimitPlanWithADraftModelAsTheCAPI() async throws {
    let limit: UInt64 = 2 << 30
    let draftPath = try Fixtures.path("trained/tiny-qwen3moe-Q4_K_M.gguf")
    let draft = try Model(path: draftPath, threads: 2)
    let ctx = try Context(model: model, contextLength: 256, memoryLimitBytes: limit, draftModel: draft)
    let plan = try ctx.memoryPlan()
    XCTAssertEqual(plan.limitBytes, limit)
    XCTAssertEqual(plan.contextLength, 256)
    XCTAssertGreaterThan(plan.draftBytes, 0)
    XCTAssertEqual(plan.visionBytes, 0)
    XCTAssertGreaterThan(plan.denseBytes, 0)
    XCTAssertGreaterThan(plan.kvBytes, 0)
    XCTAssertTrue(plan.resident, "2 GiB holds the whole tiny model")
    let parts =
      plan.baselineBytes + plan.draftBytes + plan.visionBytes + plan.denseBytes + plan.kvBytes + plan.scratchBytes
      + (plan.resident ? plan.routedBytes : plan.expertBudgetBytes)
    XCTAssertLessThanOrEqual(parts, limit)
    // The C API's figures for the same files and parameters.
    XCTAssertEqual(plan.draftBytes, try cApiPlan(limit: limit, draft: draft).draft_bytes)
    var p = greedy(8)
    p.draftModel = draft
    let text = await collect(ctx.tokens(prompt: ref.prompt, params: p)).tokens.map(\.text).joined()
    XCTAssertTrue(ref.greedyText.hasPrefix(text) && !text.isEmpty, text)
    // Without a limit the plan is all zeros; an impossible limit is refused with the arithmetic.
    XCTAssertEqual(try Context(model: model).memoryPlan().limitBytes, 0)
    let e = expectLES(LES_ERR_INVALID_ARGUMENT, "a 1 MiB limit") {
      try Context(model: model, memoryLimitBytes: 1 << 20)
    }
    XCTAssertTrue(e?.message.contains("cannot hold the minimum") ?? false, e?.message ?? "")
  }

  /// les_memory_plan of a context made through the C API alone (the same parameters).
  func cApiPlan(limit: UInt64, draft: Model) throws -> les_memory_plan {
    var mp = les_model_default_params()
    mp.n_threads = 2
    var m: OpaquePointer?
    var d: OpaquePointer?
    var c: OpaquePointer?
    XCTAssertEqual(les_model_load(ref.modelPath, &mp, &m), LES_OK)
    XCTAssertEqual(les_model_load(try Fixtures.path("trained/tiny-qwen3moe-Q4_K_M.gguf"), &mp, &d), LES_OK)
    defer {
      les_model_free(d)
      les_model_free(m)
    }
    var cp = les_context_default_params()
    cp.n_ctx = 256
    cp.memory_limit_bytes = limit
    cp.draft_model = d
    XCTAssertEqual(les_context_create(m, &cp, &c), LES_OK, String(cString: les_last_error()))
    defer { les_context_free(c) }
    var plan = les_memory_plan()
    plan.struct_size = UInt32(MemoryLayout<les_memory_plan>.size)
    XCTAssertEqual(les_context_memory_plan(c, &plan), LES_OK)
    return plan
  }
}

/// A value shared between threads under a lock.
final class Atomic<T>: @unchecked Sendable {
  private let lock = NSLock()
  private var v: T
  init(_ v: T) { self.v = v }
  var value: T {
    get {
      lock.lock()
      defer { lock.unlock() }
      return v
    }
    set {
      lock.lock()
      v = newValue
      lock.unlock()
    }
  }
  func mutate(_ f: (inout T) -> Void) {
    lock.lock()
    f(&v)
    lock.unlock()
  }
}
