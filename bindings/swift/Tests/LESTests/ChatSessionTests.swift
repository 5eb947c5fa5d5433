// Chat templates and sessions on the trained fixture: the prompt a template
// renders, a second chat turn that reuses the first turn's tokens, the context's
// state saved to and restored from bytes and a file (the text continues as
// llama.cpp's), and refusals that leave the context unchanged.
import CLes
import Foundation
import LES
import XCTest

final class ChatSessionTests: TrainedModelTestCase {
  func testTemplatesRenderAndResolve() throws {
    XCTAssertTrue(LES.chatTemplateNames.contains("chatml"))
    let messages: [ChatMessage] = [.system("Be brief."), .user("Where is the castle?")]
    let chatml = try model.chatPrompt(messages, template: "chatml")
    XCTAssertEqual(
      chatml,
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhere is the castle?<|im_end|>\n"
        + "<|im_start|>assistant\n")
    XCTAssertFalse(
      try model.chatPrompt(messages, template: "chatml", addAssistantPrefix: false).hasSuffix("assistant\n"))
    let resolved = try model.chatTemplate("chatml")
    XCTAssertEqual(resolved.name, "chatml")
    XCTAssertEqual(resolved.source, LES_CHAT_TEMPLATE_NAMED)
    XCTAssertFalse(try model.chatTemplate().name.isEmpty)
    // A conversation longer than the wrapper's first buffer (it asks again with the size needed).
    let long = try model.chatPrompt([.user(String(repeating: "castle ", count: 2000))], template: "chatml")
    XCTAssertGreaterThan(long.utf8.count, 14000)
    let e = expectLES(LES_ERR_INVALID_ARGUMENT, "an unknown template") {
      try model.chatPrompt(messages, template: "no-such-family")
    }
    XCTAssertTrue(e?.message.contains("no-such-family") ?? false, e?.message ?? "")
  }

  func testSecondChatTurnReusesTheFirst() async throws {
    let ctx = try Context(model: model, contextLength: 512)
    var messages: [ChatMessage] = [.system("Be brief."), .user("Where is the castle?")]
    let first = await collect(ctx.chat(messages, template: "chatml", params: greedy(12)))
    XCTAssertNil(first.error)
    XCTAssertEqual(first.tokens.count, 12)
    let promptOne = try ctx.lastStats().promptTokens
    messages.append(.assistant(first.tokens.map(\.text).joined()))
    messages.append(.user("And the river?"))
    let second = await collect(ctx.chat(messages, template: "chatml", params: greedy(8)))
    XCTAssertNil(second.error)
    XCTAssertEqual(second.tokens.count, 8)
    let full = try model.tokenize(
      try model.chatPrompt(messages, template: "chatml"), addSpecial: true, parseSpecial: true)
    let evaluated = try ctx.lastStats().promptTokens
    // At least the whole first prompt is reused (its answer may tokenize differently).
    XCTAssertLessThanOrEqual(
      Int(evaluated), full.count - Int(promptOne), "turn 2 evaluated \(evaluated) of \(full.count)")
    // The same turn on a fresh context gives the same answer.
    let fresh = try Context(model: model, contextLength: 512)
    let got1 = await collect(fresh.chat(messages, template: "chatml", params: greedy(8))).tokens.map(\.id)
    XCTAssertEqual(
      got1,
      second.tokens.map(\.id))
    let refused = await collect(ctx.chat(messages, template: "no-such-family"))
    XCTAssertEqual((refused.error as? LESError)?.statusName, "LES_ERR_INVALID_ARGUMENT")
  }

  func testSessionsSaveRestoreAndTrim() async throws {
    let n = ref.greedyIds.count
    let half = n / 2
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("les-swift-\(getpid()).lesstate")
    defer { try? FileManager.default.removeItem(at: file) }
    let ctx = try Context(model: model)
    let head = await collect(ctx.tokens(prompt: ref.prompt, params: greedy(half))).tokens.map(\.text).joined()
    let state = try ctx.saveState()
    try ctx.saveState(to: file)
    let held = try ctx.heldTokens()
    for fromFile in [false, true] {
      let other = try Context(model: model)
      if fromFile { try other.restoreState(from: file) } else { try other.restoreState(state) }
      XCTAssertEqual(try other.heldTokens(), held)
      let tail = await collect(other.tokens(prompt: "", params: greedy(n - half))).tokens.map(\.text).joined()
      XCTAssertEqual(head + tail, ref.greedyText, "restored from file: \(fromFile)")
    }
    // Errors leave the context unchanged.
    let fresh = try Context(model: model)
    let truncated = expectLES(LES_ERR_FORMAT, "a truncated state") {
      try fresh.restoreState(state.prefix(state.count / 2))
    }
    XCTAssertFalse(truncated?.message.isEmpty ?? true)
    XCTAssertEqual(fresh.pastCount, 0)
    let missing = expectLES(LES_ERR_IO, "a missing state file") {
      try fresh.restoreState(from: URL(fileURLWithPath: "/nonexistent/les.state"))
    }
    XCTAssertTrue(missing?.message.contains("/nonexistent/les.state") ?? false, missing?.message ?? "")
    let other = try Model(path: try Fixtures.path("trained/tiny-qwen3moe-Q4_K_M.gguf"), threads: 2)
    expectLES(LES_ERR_INVALID_ARGUMENT, "a state of another model") { try Context(model: other).restoreState(state) }

    // Trim and regenerate: keep the prompt, generate again, the same answer.
    try ctx.trim(to: Int32(ref.promptTokens.count))
    XCTAssertEqual(try ctx.heldTokens(), ref.promptTokens)
    let again = await collect(ctx.tokens(prompt: "", params: greedy(half))).tokens.map(\.text).joined()
    XCTAssertEqual(again, head)
  }
}
