// The fixtures the tests read (../shared/fixtures beside the repository, or
// $LES_FIXTURES_DIR) and llama.cpp's reference for the trained model. A missing
// fixture skips the test, or fails it when CI=true (as the C++ tests' LES_REQUIRE_FIXTURE).
import CLes
import Foundation
import LES
import XCTest

enum Fixtures {
  /// The fixtures folder: $LES_FIXTURES_DIR, else <repository>/../shared/fixtures.
  static let root: URL = {
    if let dir = ProcessInfo.processInfo.environment["LES_FIXTURES_DIR"], !dir.isEmpty {
      return URL(fileURLWithPath: dir)
    }
    // This file is <repository>/bindings/swift/Tests/LESTests/Fixtures.swift.
    var repo = URL(fileURLWithPath: #filePath)
    for _ in 0..<5 { repo.deleteLastPathComponent() }
    return repo.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
  }()

  static var ci: Bool { ["true", "1"].contains(ProcessInfo.processInfo.environment["CI"] ?? "") }

  /// The path of fixture `relative`; throws XCTSkip when it is missing (an error under CI=true).
  static func path(_ relative: String) throws -> String {
    let url = root.appendingPathComponent(relative)
    if FileManager.default.fileExists(atPath: url.path) { return url.path }
    if ci { throw FixtureMissing(path: url.path) }
    throw XCTSkip("fixture missing: \(url.path)")
  }

  struct FixtureMissing: Error, CustomStringConvertible {
    let path: String
    var description: String { "fixture missing (CI=true): \(path)" }
  }
}

/// llama.cpp's greedy continuation of prompt 1 on the trained F16 model
/// (trained/reference/tiny-qwen3moe-F16.json): the prompt, its tokens and the
/// 32 generated ids with the exact bytes of their pieces.
struct TrainedReference {
  let modelPath: String
  let prompt: String
  let promptTokens: [Int32]
  let greedyIds: [Int32]
  let greedyText: String

  static func load() throws -> TrainedReference {
    let model = try Fixtures.path("trained/tiny-qwen3moe-F16.gguf")
    let json = try Fixtures.path("trained/reference/tiny-qwen3moe-F16.json")
    let top = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any]
    guard let prompts = top?["prompts"] as? [[String: Any]], prompts.count > 1,
      let text = prompts[1]["text"] as? String, let tokens = prompts[1]["tokens_model"] as? [Int],
      let greedy = prompts[1]["greedy"] as? [String: Any], let ids = greedy["ids"] as? [Int],
      let pieces = greedy["pieces_hex"] as? [String]
    else { throw Fixtures.FixtureMissing(path: json + " (prompts[1] lacks text, tokens_model or greedy)") }
    return TrainedReference(
      modelPath: model, prompt: text, promptTokens: tokens.map(Int32.init),
      greedyIds: ids.map(Int32.init), greedyText: String(decoding: hexBytes(pieces.joined()), as: UTF8.self))
  }

  static func hexBytes(_ hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var it = hex.makeIterator()
    while let hi = it.next(), let lo = it.next() { out.append(UInt8(String([hi, lo]), radix: 16)!) }
    return out
  }
}

/// llama-mtmd-cli's run on the multimodal fixtures (multimodal/ref-224x224-fa_off.json):
/// the chat prompt with one image marker and its 16 greedy tokens.
struct VisionReference {
  let modelPath: String
  let mmprojPath: String
  let imagePath: String
  let prompt: String
  let tokens: [Int32]

  static func load() throws -> VisionReference {
    let json = try Fixtures.path("multimodal/ref-224x224-fa_off.json")
    let top = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any]
    guard let prompt = top?["prompt"] as? String, let generation = top?["generation"] as? [String: Any],
      let ids = generation["token_ids"] as? [Int]
    else { throw Fixtures.FixtureMissing(path: json + " (no prompt or generation.token_ids)") }
    return VisionReference(
      modelPath: try Fixtures.path("multimodal/qwen35moe-mm-F16.gguf"),
      mmprojPath: try Fixtures.path("multimodal/mmproj-minicpmv4_6-tiny-F16.gguf"),
      imagePath: try Fixtures.path("multimodal/test-224x224.ppm"),
      prompt: prompt, tokens: ids.map(Int32.init))
  }
}

/// Runs `body`, which must throw an LESError with `status`; returns it (nil after a failure).
@discardableResult
func expectLES<T>(
  _ status: les_status, _ what: String, file: StaticString = #filePath, line: UInt = #line,
  _ body: () throws -> T
) -> LESError? {
  do {
    _ = try body()
    XCTFail("\(what): expected \(status), got success", file: file, line: line)
  } catch let e as LESError {
    XCTAssertEqual(e.code, status.rawValue, "\(what): \(e)", file: file, line: line)
    return e
  } catch {
    XCTFail("\(what): \(error) is not an LESError", file: file, line: line)
  }
  return nil
}

/// The tokens of a stream and how it ended: nil, or the error it threw.
func collect(_ stream: AsyncThrowingStream<Token, Error>) async -> (tokens: [Token], error: Error?) {
  var tokens: [Token] = []
  do {
    for try await t in stream { tokens.append(t) }
  } catch {
    return (tokens, error)
  }
  return (tokens, nil)
}

/// A test case over the trained F16 model: `ref` is llama.cpp's reference for
/// it and `model` the loaded model (2 threads), both fresh for every test;
/// a missing fixture skips the test (fails it under CI=true).
class TrainedModelTestCase: XCTestCase {
  var ref: TrainedReference!
  var model: Model!

  override func setUpWithError() throws {
    ref = try TrainedReference.load()
    model = try Model(path: ref.modelPath, threads: 2)
  }

  override func tearDown() {
    model = nil
  }

  /// Greedy decoding of `n` tokens that does not stop at end-of-generation.
  func greedy(_ n: Int) -> GenerateParams {
    var p = GenerateParams.greedy(maxTokens: Int32(n))
    p.ignoreEOS = true
    return p
  }
}
