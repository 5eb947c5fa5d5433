// A Context as a conversation (les_session.h): the tokens it holds, and its state
// saved to / restored from bytes or a file. One caller at a time, as every
// context call.
import CLes
import Foundation

extension Context {
  /// The ids the context holds: KV cache positions in order, then the pending token.
  public func heldTokens() throws -> [Int32] { try exclusive { try readHeldTokens() } }

  /// heldTokens() for a caller already inside exclusive.
  func readHeldTokens() throws -> [Int32] {
    var ids = [les_token](repeating: 0, count: Int(les_context_n_past(handle)) + 1)  // + the pending token
    var n: Int32 = 0
    var status = les_context_tokens(handle, &ids, Int32(ids.count), &n)
    if status == LES_ERR_INVALID_ARGUMENT && Int(n) > ids.count {  // too small: n is the count
      ids = [les_token](repeating: 0, count: Int(n))
      status = les_context_tokens(handle, &ids, n, &n)
    }
    try check(status, context: handle)
    return Array(ids.prefix(Int(n)))
  }

  /// The state (tokens, KV cache, the model's fingerprint), to restore into this
  /// context or a new one over the same model.
  public func saveState() throws -> Data {
    try exclusive {
      var size = 0
      try check(les_context_state_size(handle, &size), context: handle)
      var data = Data(count: size)
      var written = 0
      let status = data.withUnsafeMutableBytes { les_context_state_save(handle, $0.baseAddress, size, &written) }
      try check(status, context: handle)
      return data.prefix(written)
    }
  }

  /// Restores a saved state; generation continues as if it had never been saved.
  /// Errors leave the context unchanged: format (truncated, corrupted), invalid
  /// argument (another model, KV type), unsupported (newer format), context full.
  public func restoreState(_ state: Data) throws {
    try exclusive {
      let status = state.withUnsafeBytes { les_context_state_load(handle, $0.baseAddress, $0.count) }
      try check(status, context: handle)
    }
  }

  /// The same through a file (written to PATH.tmp, then renamed); I/O errors name the path.
  public func saveState(to url: URL) throws {
    try exclusive { try check(les_context_state_save_file(handle, url.path), context: handle) }
  }

  public func restoreState(from url: URL) throws {
    try exclusive { try check(les_context_state_load_file(handle, url.path), context: handle) }
  }
}
