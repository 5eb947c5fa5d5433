// An idiomatic Swift layer over les.h: `Model` (weights, tokenizer), `Context`
// (KV cache, decode, logits, streaming generation as an AsyncThrowingStream),
// errors as `LESError`; Chat.swift, Session.swift, Stream.swift, Sampler.swift and
// Vision.swift add chat templates, sessions, expert streaming, the sampler and images.
import CLes
import Foundation

/// An error from LES: the `les_status` code and the message of
/// `les_last_error()` / `les_context_last_error()`. `description` (and
/// `localizedDescription`) read "LES_ERR_IO (I/O error): <message>".
public struct LESError: Error, CustomStringConvertible, LocalizedError {
  /// The les_status value (negative; see les.h for the ranges).
  public let code: Int32
  /// What was wrong, as the C library said it (names the argument, file or limit).
  public let message: String

  /// The C enumerator's name, e.g. "LES_ERR_IO" ("les_status <code>" for a code newer than this wrapper).
  public var statusName: String {
    switch les_status(rawValue: code) {
    case LES_OK: return "LES_OK"
    case LES_ERR_INVALID_ARGUMENT: return "LES_ERR_INVALID_ARGUMENT"
    case LES_ERR_IO: return "LES_ERR_IO"
    case LES_ERR_FORMAT: return "LES_ERR_FORMAT"
    case LES_ERR_UNSUPPORTED: return "LES_ERR_UNSUPPORTED"
    case LES_ERR_OUT_OF_MEMORY: return "LES_ERR_OUT_OF_MEMORY"
    case LES_ERR_CONTEXT_FULL: return "LES_ERR_CONTEXT_FULL"
    case LES_ERR_CANCELLED: return "LES_ERR_CANCELLED"
    case LES_ERR_INTERNAL: return "LES_ERR_INTERNAL"
    default: return "les_status \(code)"
    }
  }
  public var description: String {
    "\(statusName) (\(String(cString: les_status_name(les_status(rawValue: code))))): \(message)"
  }
  public var errorDescription: String? { description }

  public var isCancelled: Bool { code == LES_ERR_CANCELLED.rawValue }

  /// The calling thread's last error, for a status just returned on this thread.
  static func last(_ status: les_status, context: OpaquePointer? = nil) -> LESError {
    var msg = String(cString: les_last_error())
    if msg.isEmpty, let context { msg = String(cString: les_context_last_error(context)) }
    return LESError(code: status.rawValue, message: msg)
  }

  static func invalid(_ message: String) -> LESError {
    LESError(code: LES_ERR_INVALID_ARGUMENT.rawValue, message: message)
  }
}

@inline(__always) func check(_ status: les_status, context: OpaquePointer? = nil) throws {
  if status != LES_OK { throw LESError.last(status, context: context) }
}

/// The weights of one GGUF model. Immutable after load and thread-safe: share one
/// Model between any number of Contexts on any threads. Freed on deinit; contexts
/// keep it alive (they hold a reference).
public final class Model: @unchecked Sendable {
  let handle: OpaquePointer

  /// How the weights are held (les_weight_memory): `.auto` reads the dense weights
  /// into LES's memory and leaves the routed experts in the file (a file changed
  /// under a streaming context gives I/O errors, never a signal); `.mmap` maps
  /// everything (least memory; SIGBUS if the file changes); `.read` reads everything.
  public enum Weights: UInt32, Sendable { case auto = 0, mmap = 1, read = 2 }

  /// Loads a GGUF file. `threads`: compute threads, 0 = one per core, at most
  /// `LES.maxThreads`. `lockWeights`: mlock what was read (a failed lock only warns).
  /// Throws LESError (I/O for a missing file, format for a malformed one,
  /// invalid argument naming a bad field).
  public init(path: String, threads: Int32 = 0, weights: Weights = .auto, lockWeights: Bool = false) throws {
    var params = les_model_default_params()
    params.n_threads = threads
    params.weights = les_weight_memory(rawValue: weights.rawValue)
    params.lock_weights = lockWeights
    var model: OpaquePointer?
    try check(les_model_load(path, &params, &model))
    guard let model else { throw LESError.invalid("les_model_load returned no model") }
    handle = model
    HandleLedger.adopt(model, "les_model")
  }

  deinit { HandleLedger.free(handle, les_model_free) }

  /// Vocabulary size: valid token ids are 0 ..< vocabularySize.
  public var vocabularySize: Int32 { les_model_n_vocab(handle) }
  public var layerCount: Int32 { les_model_n_layer(handle) }
  public var expertCount: Int32 { les_model_n_expert(handle) }
  public var expertsUsed: Int32 { les_model_n_expert_used(handle) }
  public var trainingContextLength: Int32 { les_model_n_ctx_train(handle) }

  /// One-line description ("qwen3moe 8 layers, 32 experts top-4, F16").
  public var description: String {
    let n = Int(les_model_desc(handle, nil, 0))
    var buf = [CChar](repeating: 0, count: max(n, 0) + 1)
    _ = les_model_desc(handle, &buf, buf.count)
    return String(cString: buf)
  }

  /// GGUF metadata value of `key` as text, nil if absent.
  public func metadata(_ key: String) -> String? {
    let n = Int(les_model_meta_str(handle, key, nil, 0))
    if n < 0 { return nil }
    var buf = [CChar](repeating: 0, count: n + 1)
    _ = les_model_meta_str(handle, key, &buf, buf.count)
    return String(cString: buf)
  }

  /// Token ids of `text` (UTF-8). addSpecial: BOS/EOS as the vocabulary requests;
  /// parseSpecial: control-token text becomes that token.
  public func tokenize(_ text: String, addSpecial: Bool = true, parseSpecial: Bool = false) throws -> [Int32] {
    let utf8 = Array(text.utf8CString)  // NUL-terminated; the length passed excludes the NUL
    let length = utf8.count - 1
    var tokens = [les_token](repeating: 0, count: length + 8)
    var n: Int32 = 0
    var status = les_tokenize(handle, utf8, length, addSpecial, parseSpecial, &tokens, Int32(tokens.count), &n)
    if status == LES_ERR_INVALID_ARGUMENT && Int(n) > tokens.count {  // buffer too small: n is the size needed
      tokens = [les_token](repeating: 0, count: Int(n))
      status = les_tokenize(handle, utf8, length, addSpecial, parseSpecial, &tokens, n, &n)
    }
    try check(status)
    return Array(tokens.prefix(Int(n)))
  }

  /// The bytes of one token's text (may be part of a UTF-8 character).
  public func tokenBytes(_ token: Int32) throws -> [UInt8] {
    var buf = [CChar](repeating: 0, count: 64)
    var n = 0
    var status = les_token_to_piece(handle, token, &buf, buf.count, &n)
    if status == LES_ERR_INVALID_ARGUMENT && n > buf.count {
      buf = [CChar](repeating: 0, count: n)
      status = les_token_to_piece(handle, token, &buf, buf.count, &n)
    }
    try check(status)
    return buf.prefix(n).map { UInt8(bitPattern: $0) }
  }

  /// The text of a token sequence (pieces concatenated, then decoded as UTF-8).
  public func detokenize(_ tokens: [Int32]) throws -> String {
    var bytes: [UInt8] = []
    for t in tokens { bytes += try tokenBytes(t) }
    return String(decoding: bytes, as: UTF8.self)
  }
}

/// One generated token: its id and its text (whole UTF-8 characters; may be empty).
public struct Token: Sendable {
  public let id: Int32
  public let text: String
}

/// Sampling and stopping for `Context.tokens(prompt:params:)`; defaults from
/// `les_generate_default_params()`.
public struct GenerateParams: Sendable {
  public var maxTokens: Int32
  public var ignoreEOS: Bool
  /// 0 = greedy.
  public var temperature: Float
  public var topK: Int32
  public var topP: Float
  public var minP: Float
  public var repeatPenalty: Float
  public var presencePenalty: Float
  public var frequencyPenalty: Float
  /// Window of tokens for the penalties.
  public var penaltyLastN: Int32
  /// RNG seed; `LES_SEED_RANDOM` (the default) draws one, reported by GenerateStats.seed.
  public var seed: UInt64
  /// Control-token texts in the prompt (<|im_start|>, ...) become those tokens, as
  /// chat prompts from `Model.chatPrompt` need.
  public var parseSpecial: Bool
  /// Non-nil: the prompt is these token ids (BOS is the caller's to include) and
  /// the prompt string is ignored.
  public var promptTokens: [Int32]?
  /// Generation stops once the text ends with one of these.
  public var stop: [String] = []
  /// Speculative decoding with prompt lookup: n-grams of up to this many tokens
  /// (1...16) drafted from the text so far; 0 = off. Lossless (greedy output equals
  /// plain greedy decoding). At most one drafter: not with `draftModel`.
  public var lookupNgram: Int32
  /// Speculative decoding with a draft model of the same vocabulary, run resident
  /// on its own context (the Context keeps its weights while it uses it); nil = none.
  public var draftModel: Model?
  /// Most drafted tokens per verify pass, 1...64.
  public var draftMax: Int32
  /// Fewest drafts verified when offered, 0...draftMax; 0 lets the byte-aware
  /// length switch speculation off when it does not pay.
  public var draftMin: Int32
  /// Speculative decoding with the draft head stored in the context's own model
  /// (an MTP / nextn block); false = none. A model without one throws LESError
  /// (LES_ERR_UNSUPPORTED, naming the model). At most one drafter.
  public var mtp: Bool

  public init() {
    let d = les_generate_default_params()
    maxTokens = d.n_predict
    ignoreEOS = d.ignore_eos
    temperature = d.sampler.temperature
    topK = d.sampler.top_k
    topP = d.sampler.top_p
    minP = d.sampler.min_p
    repeatPenalty = d.sampler.repeat_penalty
    presencePenalty = d.sampler.presence_penalty
    frequencyPenalty = d.sampler.frequency_penalty
    penaltyLastN = d.sampler.penalty_last_n
    seed = d.sampler.seed
    parseSpecial = d.parse_special
    promptTokens = nil
    lookupNgram = d.lookup_ngram
    draftModel = nil
    draftMax = d.draft_max
    draftMin = d.draft_min
    mtp = d.mtp
  }

  /// Greedy decoding of at most `maxTokens` tokens.
  public static func greedy(maxTokens: Int32) -> GenerateParams {
    var p = GenerateParams()
    p.temperature = 0
    p.maxTokens = maxTokens
    return p
  }
}

/// One generation stream over a Model (KV cache, logits). Use it from one task or
/// thread at a time: a second call while one runs throws instead of racing (except
/// after a stream's consumer left early: then it waits for that generation to stop).
/// `cancel()`, the streaming statistics and the expert budget may be used from anywhere.
public final class Context: @unchecked Sendable {
  let handle: OpaquePointer
  public let model: Model
  private let state = NSCondition()
  private var busy = false          // guarded by state
  private var holder: TokenSink?    // the stream holding the context, if one does; guarded by state

  /// A context over `model`. contextLength: tokens the KV cache holds, 0 = the
  /// library default (min(training context, 4096)). expertBudgetBytes: 0 keeps
  /// the routed experts resident; > 0 streams them from the file through an
  /// expert cache of that many bytes (below the minimum: LESError naming it).
  /// prefetchCandidates: lookahead experts per layer, -1 = top-k + 2, 0 = none.
  /// memoryLimitBytes: 0 = none; > 0 bounds the whole process's peak resident set
  /// and, with expertBudgetBytes 0, chooses the budget (`memoryPlan()` tells the
  /// split; an impossible limit throws with the arithmetic). ioBackend: how expert
  /// bytes are read (LES_IO_AUTO, LES_IO_PREAD, LES_IO_DISPATCH_IO on Apple).
  /// draftModel: the model this context will decode with as `GenerateParams.draftModel`;
  /// with a memory limit its weights, KV cache and scratch are counted in it
  /// (`memoryPlan().draftBytes`; a limit that cannot hold it too throws naming the draft
  /// model). vision: the encoder whose images this context will take; with a limit its
  /// weights and encode scratch are counted (`memoryPlan().visionBytes`). Both nil = none,
  /// ignored without a limit, kept alive for the creating call only (the context does
  /// not hold them).
  public init(model: Model, contextLength: Int32 = 0, threads: Int32 = 0,
              expertBudgetBytes: UInt64 = 0, prefetchCandidates: Int32 = -1,
              memoryLimitBytes: UInt64 = 0, ioBackend: les_io_backend = LES_IO_AUTO,
              eviction: les_eviction_policy = LES_EVICTION_ADAPTIVE, kvType: les_kv_type = LES_KV_F16,
              draftModel: Model? = nil, vision: Vision? = nil) throws {
    // struct_size is this header's sizeof, set by les_context_default_params().
    var params = les_context_default_params()
    params.n_ctx = contextLength
    params.n_threads = threads
    params.expert_budget_bytes = expertBudgetBytes
    params.prefetch_candidates = prefetchCandidates
    params.memory_limit_bytes = memoryLimitBytes
    params.io_backend = ioBackend
    params.eviction = eviction
    params.kv_type = kvType
    params.draft_model = draftModel?.handle
    params.vision = vision?.handle
    var ctx: OpaquePointer?
    // The draft model and the encoder stay alive (not deinitialised) until the call returns.
    try withExtendedLifetime((draftModel, vision)) {
      try check(les_context_create(model.handle, &params, &ctx))
    }
    guard let ctx else { throw LESError.invalid("les_context_create returned no context") }
    handle = ctx
    HandleLedger.adopt(ctx, "les_context")
    self.model = model
  }

  deinit { HandleLedger.free(handle, les_context_free) }

  /// Runs body as the context's one caller (Session.swift and the others use it too).
  /// A stream whose consumer has left (`stream`) still holds the context until its
  /// generation stops (next token or prompt chunk): this waits for that; any other holder
  /// makes it throw (invalid argument, "already in use").
  func exclusive<R>(_ body: () throws -> R) throws -> R { try exclusive(for: nil, body) }

  /// exclusive for the thread of `sink`'s stream: throws cancelled when its consumer
  /// left before the generation started.
  func exclusive<R>(for sink: TokenSink?, _ body: () throws -> R) throws -> R {
    state.lock()
    while busy, let h = holder, h.consumerLeft { state.wait() }
    if let sink, sink.consumerLeft {
      state.unlock()
      throw LESError(code: LES_ERR_CANCELLED.rawValue,
                     message: "the stream's consumer left before the generation started")
    }
    if busy {
      state.unlock()
      throw LESError.invalid("Context is already in use (one caller at a time; only cancel() may overlap)")
    }
    busy = true
    holder = sink
    state.unlock()
    defer {
      state.lock()
      busy = false
      holder = nil
      state.broadcast()
      state.unlock()
    }
    return try body()
  }

  /// Called when `sink`'s consumer ends its loop early or its task is cancelled: the
  /// generation stops before its next token or prompt chunk (the abort callback), and
  /// the next caller waits for that instead of finding the context in use.
  func consumerLeft(_ sink: TokenSink) {
    state.lock()
    sink.consumerLeft = true
    state.unlock()
  }

  /// Tokens in the KV cache.
  public var pastCount: Int32 { les_context_n_past(handle) }
  /// Tokens the KV cache holds.
  public var contextLength: Int32 { les_context_n_ctx(handle) }

  /// Appends `tokens` to the KV cache and runs the forward pass. On error nothing is appended.
  /// allLogits: keep every token's logits (`logits(at:)`), as perplexity or verification need.
  public func decode(_ tokens: [Int32], allLogits: Bool = false) throws {
    try exclusive {
      try tokens.withUnsafeBufferPointer { buf in
        let n = Int32(buf.count)
        try check(allLogits ? les_context_decode_all_logits(handle, buf.baseAddress, n)
                            : les_context_decode(handle, buf.baseAddress, n), context: handle)
      }
    }
  }

  /// A copy of token `i`'s logits of the last decode (negative counts from the end);
  /// nil out of range (after a plain decode only -1 exists).
  public func logits(at i: Int32) throws -> [Float]? {
    try exclusive { () -> [Float]? in
      guard let p = les_context_logits_ith(handle, i) else { return nil }
      return Array(UnsafeBufferPointer(start: p, count: Int(model.vocabularySize)))
    }
  }

  /// A copy of the last decoded token's logits (vocabularySize floats), nil before any decode.
  public func logits() throws -> [Float]? {
    try exclusive { () -> [Float]? in
      guard let p = les_context_logits(handle) else { return nil }
      return Array(UnsafeBufferPointer(start: p, count: Int(model.vocabularySize)))
    }
  }

  /// Empties the KV cache.
  public func reset() throws { try exclusive { try check(les_context_reset(handle), context: handle) } }

  /// Keeps the first `keep` positions of the KV cache.
  public func trim(to keep: Int32) throws { try exclusive { try check(les_context_trim(handle, keep), context: handle) } }

  /// Statistics of the last generation on this context (les_context_generate_stats).
  public func lastStats() throws -> GenerateStats {
    try exclusive {
      var s = les_generate_stats()
      s.struct_size = UInt32(MemoryLayout<les_generate_stats>.size)
      try check(les_context_generate_stats(handle, &s), context: handle)
      return GenerateStats(s)
    }
  }

  /// Asks a running generation to stop after the current token; when none runs, the
  /// next one ends at once with a cancelled LESError (the cancel stays pending). Thread-safe.
  public func cancel() { les_context_cancel(handle) }

  /// Streams the tokens generated after `prompt` (les_generate on a dedicated
  /// thread, since it blocks). Ending the consumer's loop early, or cancelling its
  /// task, stops the generation before its next token or prompt chunk; the next call
  /// on the context waits for that. `cancel()` from elsewhere
  /// ends the stream with a LESError whose isCancelled is true. The KV cache keeps
  /// prompt and output (what was generated before the stop).
  public func tokens(prompt: String, params: GenerateParams = GenerateParams()) -> AsyncThrowingStream<Token, Error> {
    tokens(prompt: prompt, images: [], params: params)
  }

  /// As `tokens(prompt:params:)` with images (les_generate_with_images): `prompt`
  /// holds one `Vision.marker` per image and images[i] goes where the i-th marker is
  /// (for a chat prompt put the markers in the user message and set parseSpecial).
  /// Errors: invalid argument (the marker count differs from images.count, an image
  /// of another model, promptTokens set), context full (the whole prompt does not
  /// fit: nothing is decoded), unsupported (mtp after image positions).
  public func tokens(prompt: String, images: [Image],
                     params: GenerateParams = GenerateParams()) -> AsyncThrowingStream<Token, Error> {
    stream { sink in try self.generate(prompt: prompt, images: images, params: params, sink: sink) }
  }

  /// Runs `body` as the context's one caller on a dedicated thread (les_generate
  /// blocks), streaming what it hands to the sink; the stream ends with body's error.
  func stream(_ body: @escaping @Sendable (TokenSink) throws -> Void) -> AsyncThrowingStream<Token, Error> {
    AsyncThrowingStream { continuation in
      let sink = TokenSink(continuation)
      // Holds the context until the stream ends, so the handle outlives this call. Not
      // les_context_cancel: a cancel that arrived just after the generation ended would
      // stay pending and stop the next one (les_generate.h).
      continuation.onTermination = { [self] termination in
        if case .cancelled = termination { self.consumerLeft(sink) }
      }
      let thread = Thread { [self] in
        do {
          try exclusive(for: sink) { try body(sink) }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      thread.name = "les.generate"
      thread.start()
    }
  }

  /// les_generate / les_generate_with_images with `params`, each token to `sink`.
  /// Call inside exclusive (stream does).
  func generate(prompt: String, images: [Image], params: GenerateParams, sink: TokenSink) throws {
    var p = les_generate_default_params()
    p.n_predict = params.maxTokens
    p.ignore_eos = params.ignoreEOS
    p.sampler.temperature = params.temperature
    p.sampler.top_k = params.topK
    p.sampler.top_p = params.topP
    p.sampler.min_p = params.minP
    p.sampler.repeat_penalty = params.repeatPenalty
    p.sampler.presence_penalty = params.presencePenalty
    p.sampler.frequency_penalty = params.frequencyPenalty
    p.sampler.penalty_last_n = params.penaltyLastN
    p.sampler.seed = params.seed
    p.parse_special = params.parseSpecial
    p.lookup_ngram = params.lookupNgram
    p.draft_max = params.draftMax
    p.draft_min = params.draftMin
    p.mtp = params.mtp
    p.draft_model = params.draftModel?.handle
    // Stop strings as C strings that live for the call (a NUL would cut one short: refused).
    if let i = params.stop.firstIndex(where: { $0.utf8.contains(0) }) {
      throw LESError.invalid("stop[\(i)] holds U+0000, which a stop string cannot hold")
    }
    let cStops: [UnsafeMutablePointer<CChar>?] = params.stop.map { strdup($0) }
    defer { cStops.forEach { free($0) } }
    let stopPointers: [UnsafePointer<CChar>?] = cStops.map { UnsafePointer($0) }
    let callback: les_token_callback = { token, piece, length, userData in
      let sink = Unmanaged<TokenSink>.fromOpaque(userData!).takeUnretainedValue()
      let text = String(decoding: UnsafeRawBufferPointer(start: piece, count: length), as: UTF8.self)
      return sink.deliver(Token(id: token, text: text))
    }
    let userData = Unmanaged.passUnretained(sink).toOpaque()
    // Polled before the prompt, between its chunks and before each token: a consumer that
    // left stops the call there, a long prefill included (unlike les_context_cancel, nothing
    // stays pending).
    p.abort_callback = { userData in Unmanaged<TokenSink>.fromOpaque(userData!).takeUnretainedValue().consumerLeft }
    p.abort_user_data = userData
    let status: les_status = stopPointers.withUnsafeBufferPointer { stops in
      p.stop = stops.isEmpty ? nil : stops.baseAddress
      p.n_stop = Int32(stops.count)
      // The draft model (if any) stays alive for the call; token prompts are borrowed for it.
      return withExtendedLifetime((params.draftModel, images)) { () -> les_status in
        if images.isEmpty, let ids = params.promptTokens {
          return ids.withUnsafeBufferPointer { buf in
            p.prompt_tokens = buf.baseAddress
            p.n_prompt_tokens = Int32(buf.count)
            return les_generate(handle, nil, &p, callback, userData)
          }
        }
        // The prompt's UTF-8 bytes with their length (prompt_text): U+0000 stays text, where a
        // C string would end. A trailing 0 keeps the buffer non-empty; it is not counted.
        let text: [UInt8] = Array(prompt.utf8) + [0]
        return text.withUnsafeBufferPointer { bytes -> les_status in
          bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) { chars -> les_status in
            p.prompt_text = chars
            p.prompt_text_len = bytes.count - 1
            if !images.isEmpty {  // the images stay alive for the call (held by `images`)
              let imagePointers: [OpaquePointer?] = images.map { $0.handle }
              return imagePointers.withUnsafeBufferPointer { imgs in
                les_generate_with_images(handle, nil, imgs.baseAddress, Int32(imgs.count), &p, callback, userData)
              }
            }
            return les_generate(handle, nil, &p, callback, userData)
          }
        }
      }
    }
    // The consumer went away: the stream is over, nothing to report.
    if sink.consumerGone || sink.consumerLeft { return }
    try check(status, context: handle)
  }
}

/// Statistics of one generation (les_generate_stats). The speculative fields are 0
/// without a drafter; a target pass is a verify pass or a plain one-token pass.
public struct GenerateStats: Sendable {
  public let promptTokens: Int32
  public let generated: Int32
  public let prefillSeconds: Double
  public let decodeSeconds: Double
  /// Tokens emitted per second of the whole decode phase (drafting and verifying included).
  public let decodeTokensPerSecond: Double
  public let decoded: Int32
  public let targetPasses: Int32
  public let verifyPasses: Int32
  public let drafted: Int32
  public let draftVerified: Int32
  public let draftAccepted: Int32
  /// Tokens the target passes produced (accepted drafts plus one per pass).
  public let passTokens: Int32
  /// Sums over target passes of their expert union (distinct (layer, expert) pairs) and its bytes.
  public let unionExperts: Int64
  public let unionBytes: UInt64
  /// Expert bytes read from the file during target passes (0 when resident).
  public let expertBytesRead: UInt64
  public let draftSeconds: Double
  /// The sampler's seed (the drawn one for LES_SEED_RANDOM).
  public let seed: UInt64
  /// Why generation ended: "eos", "stop_string", "n_predict", "context_full" or "cancelled".
  public let stopReason: String

  init(_ s: les_generate_stats) {
    seed = s.seed
    stopReason = String(cString: les_stop_reason_name(s.stop_reason))
    promptTokens = s.n_prompt_tokens
    generated = s.n_generated
    prefillSeconds = s.prefill_seconds
    decodeSeconds = s.decode_seconds
    decodeTokensPerSecond = s.decode_tokens_per_second
    decoded = s.n_decoded
    targetPasses = s.n_target_passes
    verifyPasses = s.n_verify_passes
    drafted = s.n_drafted
    draftVerified = s.n_draft_verified
    draftAccepted = s.n_draft_accepted
    passTokens = s.n_pass_tokens
    unionExperts = s.union_experts
    unionBytes = s.union_bytes
    expertBytesRead = s.expert_bytes_read
    draftSeconds = s.draft_seconds
  }

  /// Accepted drafts per verified draft (0 when none was verified).
  public var acceptanceRate: Double { draftVerified > 0 ? Double(draftAccepted) / Double(draftVerified) : 0 }
}

/// Holds the stream's continuation for the C callbacks (passed as user_data).
final class TokenSink: @unchecked Sendable {
  let continuation: AsyncThrowingStream<Token, Error>.Continuation
  private(set) var consumerGone = false  // the generation thread's own flag
  private let leftLock = NSLock()
  private var left = false               // guarded by leftLock

  init(_ continuation: AsyncThrowingStream<Token, Error>.Continuation) { self.continuation = continuation }

  /// The consumer ended its loop or its task was cancelled (onTermination); read by the
  /// abort callback on the generation thread and by Context.exclusive.
  var consumerLeft: Bool {
    get { leftLock.lock(); defer { leftLock.unlock() }; return left }
    set { leftLock.lock(); left = newValue; leftLock.unlock() }
  }

  /// Called on the generation thread; false (stop) once the consumer is gone.
  func deliver(_ token: Token) -> Bool {
    if case .terminated = continuation.yield(token) {
      consumerGone = true
      return false
    }
    return true
  }
}
