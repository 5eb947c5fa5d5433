// Every C handle a wrapper object takes is freed exactly once, when its last
// reference goes (HandleLedger counts the live ones; a second free would stop
// the process): models, contexts, samplers, encoders and images; a Context keeps
// its Model alive, an Image outlives its Vision. And load errors, named.
import CLes
import Foundation
import XCTest

@testable import LES

final class LifetimeTests: XCTestCase {
  func testHandlesAreFreedExactlyOnceOnDeinit() async throws {
    let ref = try TrainedReference.load()
    let before = HandleLedger.liveHandles()
    var context: Context?
    do {
      let model = try Model(path: ref.modelPath, threads: 2)
      XCTAssertEqual(HandleLedger.liveHandles("les_model"), 1)
      context = try Context(model: model)
      let sampler = try Sampler()
      XCTAssertEqual(HandleLedger.liveHandles(), before + 3)
      _ = sampler.seed
    }
    // The sampler is gone; the model lives on in the context that holds it.
    XCTAssertEqual(HandleLedger.liveHandles("les_sampler"), 0)
    XCTAssertEqual(HandleLedger.liveHandles("les_model"), 1)
    var params = GenerateParams.greedy(maxTokens: Int32(ref.greedyIds.count))
    params.ignoreEOS = true
    let text = await collect(context!.tokens(prompt: ref.prompt, params: params)).tokens.map(\.text).joined()
    XCTAssertEqual(text, ref.greedyText, "a context outlives the caller's model reference")
    context = nil
    // The stream's generation thread holds the context until it has ended, moments after the last token.
    XCTAssertEqual(liveHandlesSettled(at: before), before)

    // A stream holds its context until the generation ends, even when the caller let go.
    do {
      let model = try Model(path: ref.modelPath, threads: 2)
      let stream = try Context(model: model).tokens(prompt: ref.prompt, params: params)
      XCTAssertEqual(HandleLedger.liveHandles("les_context"), 1)
      let got1 = await collect(stream).tokens.count
      XCTAssertEqual(got1, ref.greedyIds.count)
    }
    XCTAssertEqual(liveHandlesSettled(at: before), before)
  }

  /// The live handle count once it reaches `expected` (a generation thread's last release
  /// comes moments after its stream ended), or what it is after 5 s.
  func liveHandlesSettled(at expected: Int) -> Int {
    for _ in 0..<1000 where HandleLedger.liveHandles() != expected { usleep(5000) }
    return HandleLedger.liveHandles()
  }

  func testImagesOutliveTheirEncoder() throws {
    let ref = try VisionReference.load()
    let before = HandleLedger.liveHandles()
    var image: Image?
    do {
      let model = try Model(path: ref.modelPath, threads: 2)
      let vision = try Vision(model: model, mmprojPath: ref.mmprojPath, threads: 2)
      image = try vision.encode(contentsOf: URL(fileURLWithPath: ref.imagePath))
      XCTAssertEqual(HandleLedger.liveHandles("les_vision"), 1)
    }
    XCTAssertEqual(HandleLedger.liveHandles("les_vision"), 0)
    XCTAssertEqual(image?.tokenCount, 18)
    image = nil
    XCTAssertEqual(HandleLedger.liveHandles(), before)
  }

  func testLoadErrorsAreNamedAndLeaveNoHandle() throws {
    let before = HandleLedger.liveHandles()
    let missing = expectLES(LES_ERR_IO, "a missing model") { try Model(path: "/nonexistent/model.gguf") }
    XCTAssertTrue(missing?.message.contains("/nonexistent/model.gguf") ?? false, missing?.message ?? "")
    XCTAssertEqual(missing?.statusName, "LES_ERR_IO")
    XCTAssertTrue(missing?.description.hasPrefix("LES_ERR_IO (I/O error): ") ?? false, missing?.description ?? "")
    XCTAssertEqual(missing?.localizedDescription, missing?.description)
    let garbage = FileManager.default.temporaryDirectory.appendingPathComponent("les-swift-garbage-\(getpid()).gguf")
    try Data("This is a text file, not a model.".utf8).write(to: garbage)
    defer { try? FileManager.default.removeItem(at: garbage) }
    expectLES(LES_ERR_FORMAT, "a file that is no GGUF") { try Model(path: garbage.path) }
    let threads = expectLES(LES_ERR_INVALID_ARGUMENT, "too many threads") {
      try Model(path: try Fixtures.path("trained/tiny-qwen3moe-F16.gguf"), threads: LES.maxThreads + 1)
    }
    XCTAssertTrue(threads?.message.contains("n_threads") ?? false, threads?.message ?? "")
    XCTAssertEqual(HandleLedger.liveHandles(), before)
  }
}
