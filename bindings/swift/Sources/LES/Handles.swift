// The ledger of live C handles. Every handle a wrapper object (Model, Context,
// Sampler, Vision, Image) takes from les.h is recorded when the object is made
// and removed when its deinit frees it, so a handle is freed exactly once: a
// second free of the same handle stops the process (precondition) instead of
// reaching the C library, and one never freed stays listed (`liveHandles`,
// which the deinit test reads). Thread-safe (one lock); costs one dictionary
// insert and removal per object.
import Foundation

final class HandleLedger: @unchecked Sendable {
  private static let shared = HandleLedger()
  private let lock = NSLock()
  private var live: [OpaquePointer: String] = [:]  // guarded by lock

  /// Records `handle` (of les type `kind`, e.g. "les_model") as owned by a new wrapper object.
  static func adopt(_ handle: OpaquePointer, _ kind: String) {
    let l = shared
    l.lock.lock()
    defer { l.lock.unlock() }
    precondition(l.live.updateValue(kind, forKey: handle) == nil, "\(kind) \(handle) adopted twice")
  }

  /// Frees `handle` with `free` once; the second time for the same handle is a precondition failure.
  static func free(_ handle: OpaquePointer, _ free: (OpaquePointer) -> Void) {
    let l = shared
    l.lock.lock()
    let kind = l.live.removeValue(forKey: handle)
    l.lock.unlock()
    precondition(kind != nil, "handle \(handle) freed twice or never adopted")
    free(handle)
  }

  /// How many handles of `kind` (nil: of every kind) are live.
  static func liveHandles(_ kind: String? = nil) -> Int {
    let l = shared
    l.lock.lock()
    defer { l.lock.unlock() }
    return kind.map { k in l.live.values.filter { $0 == k }.count } ?? l.live.count
  }
}
