// Images on the multimodal fixtures (a qwen35moe text model and a MiniCPM-V
// projector): an image file, its bytes and raw RGB encoded, generation with the
// image and appendImage give llama-mtmd-cli's 16 greedy tokens, the encoder's
// statistics, its share of a memory limit as the C API reports it, and errors.
import CLes
import Foundation
import LES
import XCTest

final class VisionTests: XCTestCase {
  func testImagesGiveLlamaCppsTokens() async throws {
    let ref = try VisionReference.load()
    let model = try Model(path: ref.modelPath, threads: 2)
    let vision = try Vision(model: model, mmprojPath: ref.mmprojPath, threads: 2)
    XCTAssertEqual(Vision.marker, "<__media__>")
    var params = GenerateParams.greedy(maxTokens: Int32(ref.tokens.count))
    params.ignoreEOS = true
    params.parseSpecial = true

    let image = try vision.encode(contentsOf: URL(fileURLWithPath: ref.imagePath))
    XCTAssertEqual(image.tokenCount, 18)  // 16 embedding rows + the two marker tokens
    var ctx = try Context(model: model, contextLength: 256)
    let got1 = await collect(ctx.tokens(prompt: ref.prompt, images: [image], params: params)).tokens.map(\.id)
    XCTAssertEqual(got1, ref.tokens)

    // The file's bytes held in memory, appended where the marker was.
    let fromMemory = try vision.encode(data: try Data(contentsOf: URL(fileURLWithPath: ref.imagePath)))
    ctx = try Context(model: model, contextLength: 256)
    let marker = try XCTUnwrap(ref.prompt.range(of: Vision.marker))
    var head = params
    head.maxTokens = 0
    _ = await collect(ctx.tokens(prompt: String(ref.prompt[..<marker.lowerBound]), params: head))
    try ctx.appendImage(fromMemory)
    let got2 = await collect(ctx.tokens(prompt: String(ref.prompt[marker.upperBound...]), params: params)).tokens.map(
      \.id)
    XCTAssertEqual(
      got2,
      ref.tokens)

    // Raw RGB: the PPM's pixels (binary P6, maxval 255).
    let (rgb, w, h) = try readPPM(ref.imagePath)
    let fromRGB = try vision.encode(rgb: rgb, width: w, height: h)
    ctx = try Context(model: model, contextLength: 256)
    let got3 = await collect(ctx.tokens(prompt: ref.prompt, images: [fromRGB], params: params)).tokens.map(\.id)
    XCTAssertEqual(got3, ref.tokens)

    let stats = try vision.stats()
    XCTAssertEqual(stats.imagesEncoded, 3)
    XCTAssertEqual(stats.imageTokens, 3 * 16)
    XCTAssertGreaterThan(stats.memoryBytes, stats.weightBytes)
    XCTAssertGreaterThan(stats.lastEncodeMilliseconds, 0)

    // The encoder counted in a memory limit: its peak, as the C API reports it.
    let limit: UInt64 = 2 << 30
    let limited = try Context(model: model, contextLength: 256, memoryLimitBytes: limit, vision: vision)
    let plan = try limited.memoryPlan()
    XCTAssertEqual(plan.visionBytes, stats.memoryBytes)
    XCTAssertEqual(plan.draftBytes, 0)
    XCTAssertEqual(plan.visionBytes, try cApiVisionBytes(ref, limit: limit))

    // Errors, named.
    let io = expectLES(LES_ERR_IO, "a missing image file") {
      try vision.encode(contentsOf: URL(fileURLWithPath: "/nonexistent/cat.png"))
    }
    XCTAssertTrue(io?.message.contains("/nonexistent/cat.png") ?? false, io?.message ?? "")
    expectLES(LES_ERR_INVALID_ARGUMENT, "a 0 x 0 image") { try vision.encode(rgb: [], width: 0, height: 0) }
    let size = expectLES(LES_ERR_INVALID_ARGUMENT, "too few bytes for 4 x 4") {
      try vision.encode(rgb: [1, 2, 3], width: 4, height: 4)
    }
    XCTAssertTrue(size?.message.contains("4 x 4") ?? false, size?.message ?? "")
    expectLES(LES_ERR_FORMAT, "bytes that are no image") { try vision.encode(data: Data("not an image".utf8)) }
    expectLES(LES_ERR_INVALID_ARGUMENT, "no bytes") { try vision.encode(data: Data()) }
    let mismatch = await collect(ctx.tokens(prompt: "no marker here", images: [image], params: params))
    XCTAssertEqual(
      (mismatch.error as? LESError)?.statusName, "LES_ERR_INVALID_ARGUMENT", "\(String(describing: mismatch.error))")
    let full = try Context(model: model, contextLength: 8)
    expectLES(LES_ERR_CONTEXT_FULL, "an image in an 8-position context") { try full.appendImage(image) }
    XCTAssertEqual(full.pastCount, 0)
    expectLES(LES_ERR_IO, "a missing projector") { try Vision(model: model, mmprojPath: "/nonexistent/mmproj.gguf") }
  }

  func readPPM(_ path: String) throws -> ([UInt8], Int32, Int32) {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    var fields: [String] = []
    var i = 0
    while fields.count < 4 {
      while bytes[i] == UInt8(ascii: " ") || bytes[i] == UInt8(ascii: "\n") { i += 1 }
      var word = ""
      while bytes[i] != UInt8(ascii: " ") && bytes[i] != UInt8(ascii: "\n") {
        word.append(Character(UnicodeScalar(bytes[i])))
        i += 1
      }
      fields.append(word)
    }
    XCTAssertEqual(fields[0], "P6")
    XCTAssertEqual(fields[3], "255")
    let w = try XCTUnwrap(Int32(fields[1]))
    let h = try XCTUnwrap(Int32(fields[2]))
    return (Array(bytes[(i + 1)...]), w, h)
  }

  /// vision_bytes of les_memory_plan for a context made through the C API alone.
  func cApiVisionBytes(_ ref: VisionReference, limit: UInt64) throws -> UInt64 {
    var mp = les_model_default_params()
    mp.n_threads = 2
    var m: OpaquePointer?
    var v: OpaquePointer?
    var c: OpaquePointer?
    XCTAssertEqual(les_model_load(ref.modelPath, &mp, &m), LES_OK)
    defer { les_model_free(m) }
    var vp = les_vision_default_params()
    vp.n_threads = 2
    XCTAssertEqual(les_vision_load(m, ref.mmprojPath, &vp, &v), LES_OK)
    defer { les_vision_free(v) }
    var cp = les_context_default_params()
    cp.n_ctx = 256
    cp.memory_limit_bytes = limit
    cp.vision = v
    XCTAssertEqual(les_context_create(m, &cp, &c), LES_OK, String(cString: les_last_error()))
    defer { les_context_free(c) }
    var plan = les_memory_plan()
    plan.struct_size = UInt32(MemoryLayout<les_memory_plan>.size)
    XCTAssertEqual(les_context_memory_plan(c, &plan), LES_OK)
    return plan.vision_bytes
  }
}
