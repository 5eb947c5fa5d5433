// Chat templates (les_chat.h), the draft-model check and library queries.
// Thread-safe (the model is immutable).
import CLes
import Foundation

/// One turn of a conversation: role "system", "user", "assistant" (or "tool").
public struct ChatMessage: Sendable {
  public let role: String
  public let content: String
  public init(role: String, content: String) { self.role = role; self.content = content }
  public static func system(_ c: String) -> ChatMessage { ChatMessage(role: "system", content: c) }
  public static func user(_ c: String) -> ChatMessage { ChatMessage(role: "user", content: c) }
  public static func assistant(_ c: String) -> ChatMessage { ChatMessage(role: "assistant", content: c) }
}

/// Library-wide queries.
public enum LES {
  /// The linked library's version, "MAJOR.MINOR.PATCH".
  public static var version: String { String(cString: les_version()) }
  /// True when the linked library is major.minor or newer.
  public static func versionAtLeast(_ major: Int32, _ minor: Int32) -> Bool { les_version_at_least(major, minor) }
  /// The largest thread count Model and Context accept.
  public static var maxThreads: Int32 { les_max_threads() }
  /// Every chat template name: canonical names, then aliases.
  public static var chatTemplateNames: [String] {
    (0..<les_chat_template_count()).compactMap { les_chat_template_name($0).map { String(cString: $0) } }
  }
}

extension Model {
  /// The prompt text of `messages` in a chat template: `template` a family name
  /// (`LES.chatTemplateNames`), nil for the model's own (chatml when it has none).
  /// Generate from it with `GenerateParams.parseSpecial = true`. Throws LESError
  /// (unknown name, a role the family lacks; unsupported: the model's template is
  /// of no known family).
  public func chatPrompt(_ messages: [ChatMessage], template: String? = nil,
                         addAssistantPrefix: Bool = true) throws -> String {
    // les_chat_message holds C strings: a NUL would cut a message short, so it is refused.
    if let i = messages.firstIndex(where: { $0.role.utf8.contains(0) || $0.content.utf8.contains(0) }) {
      throw LESError.invalid("messages[\(i)] holds U+0000, which a chat message cannot hold")
    }
    let roles = messages.map { strdup($0.role) }
    let contents = messages.map { strdup($0.content) }
    defer { roles.forEach { free($0) }; contents.forEach { free($0) } }
    let msgs = zip(roles, contents).map { les_chat_message(role: UnsafePointer($0), content: UnsafePointer($1)) }
    var buf = [CChar](repeating: 0, count: 4096)
    var n = 0
    var status = les_chat_apply_template(handle, template, msgs, msgs.count, addAssistantPrefix, &buf, buf.count, &n)
    if status == LES_ERR_INVALID_ARGUMENT && n >= buf.count {  // too small: n is the length needed
      buf = [CChar](repeating: 0, count: n + 1)
      status = les_chat_apply_template(handle, template, msgs, msgs.count, addAssistantPrefix, &buf, buf.count, &n)
    }
    try check(status)
    return String(cString: buf)
  }

  /// The canonical name of the template `chatPrompt(_:template:)` uses, and whether
  /// it was named, recognised from the model, or the chatml fallback.
  public func chatTemplate(_ template: String? = nil) throws -> (name: String, source: les_chat_template_source) {
    var name: UnsafePointer<CChar>?
    var source = LES_CHAT_TEMPLATE_NAMED
    try check(les_chat_template_resolve(handle, template, &name, &source))
    return (name.map { String(cString: $0) } ?? "", source)
  }

  /// Throws unless `draft` can draft for this model (same vocabulary), naming the first difference.
  public func checkDraft(_ draft: Model) throws { try check(les_model_check_draft(handle, draft.handle)) }
}

extension Context {
  /// One chat turn: renders `messages` in `template` (nil: the model's own) with the
  /// assistant's opening, keeps the longest prefix of it the context already holds
  /// (earlier turns are not evaluated again; a model whose recurrent state cannot be
  /// unwound to that point starts over), and streams the answer, generated with
  /// `params` and parseSpecial. For the next turn append `.assistant(answer)` and
  /// the next user message. `lastStats().promptTokens` counts the prompt tokens
  /// evaluated. Errors as `Model.chatPrompt` and `tokens(prompt:params:)`.
  public func chat(_ messages: [ChatMessage], template: String? = nil,
                   params: GenerateParams = GenerateParams()) -> AsyncThrowingStream<Token, Error> {
    var p = params
    p.parseSpecial = true
    let turn = p
    return stream { sink in
      let prompt = try self.model.tokenize(try self.model.chatPrompt(messages, template: template),
                                           addSpecial: true, parseSpecial: true)
      let keep = try self.keepPrefix(of: prompt)
      var q = turn
      q.promptTokens = Array(prompt[keep...])
      try self.generate(prompt: "", images: [], params: q, sink: sink)
    }
  }

  /// Trims the context to the longest common prefix of what it holds and `prompt`,
  /// leaving at least one prompt token to evaluate; returns that prefix's length.
  /// Call inside exclusive.
  func keepPrefix(of prompt: [Int32]) throws -> Int {
    let held = try readHeldTokens()
    var n = 0
    while n < held.count && n < prompt.count - 1 && held[n] == prompt[n] { n += 1 }
    if n == held.count { return n }
    if les_context_trim(handle, Int32(n)) == LES_OK { return n }
    try check(les_context_reset(handle), context: handle)  // recurrent state: start over
    return 0
  }
}
