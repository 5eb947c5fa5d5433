// A sampler on its own (les_sampler.h), for apps that call Context.decode and pick
// tokens themselves. One caller at a time; freed on deinit.
import CLes

public final class Sampler {
  let handle: OpaquePointer

  /// A sampler with the sampling fields of `params` (temperature, topK, topP, minP,
  /// penalties, penaltyLastN, seed). Throws LESError naming a bad field.
  public init(params: GenerateParams = GenerateParams()) throws {
    var p = les_sampler_default_params()
    p.temperature = params.temperature
    p.top_k = params.topK
    p.top_p = params.topP
    p.min_p = params.minP
    p.repeat_penalty = params.repeatPenalty
    p.presence_penalty = params.presencePenalty
    p.frequency_penalty = params.frequencyPenalty
    p.penalty_last_n = params.penaltyLastN
    p.seed = params.seed
    var s: OpaquePointer?
    try check(les_sampler_create(&p, &s))
    guard let s else { throw LESError.invalid("les_sampler_create returned no sampler") }
    handle = s
    HandleLedger.adopt(s, "les_sampler")
  }

  deinit { HandleLedger.free(handle, les_sampler_free) }

  /// The next token from `logits` (vocabularySize floats); not recorded until accept(_:).
  public func sample(_ logits: [Float]) throws -> Int32 {
    var token: les_token = -1
    try check(les_sampler_sample(handle, logits, Int32(logits.count), &token))
    return token
  }

  /// Records a token in the penalty window.
  public func accept(_ token: Int32) throws { try check(les_sampler_accept(handle, token)) }
  /// Clears the penalty window and restarts the random sequence from the seed.
  public func reset() { les_sampler_reset(handle) }
  /// The seed in use (the drawn one for LES_SEED_RANDOM).
  public var seed: UInt64 { les_sampler_seed(handle) }
}
