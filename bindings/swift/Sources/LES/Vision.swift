// Image input (les_vision.h): `Vision` (an mmproj encoder bound to a Model) makes
// `Image`s, which `Context.tokens(prompt:images:params:)` and
// `Context.appendImage(_:)` decode in place of tokens.
import CLes
import Foundation

/// A vision encoder ("mmproj" GGUF) for one Model. Thread-safe: any number of
/// threads may encode and read `stats()` at once (encodes take turns on the
/// encoder's own lock). Freed on deinit; the Images it made stay valid.
public final class Vision: @unchecked Sendable {
  let handle: OpaquePointer
  public let model: Model

  /// The text that stands for an image in a prompt ("<__media__>"), one per image.
  public static let marker = LES_MEDIA_MARKER

  /// Loads the encoder in `mmprojPath` for `model`. threads: encoder threads
  /// including the caller, 0 = the model's. releaseAfterEncode: unmap the weights
  /// after each encode and map them again for the next (same embeddings, less
  /// memory between encodes). Throws LESError, the message naming the problem:
  /// unsupported (another projector; a model without the image marker tokens),
  /// invalid argument (the projector's width differs from the model's; both named),
  /// I/O, format.
  public init(model: Model, mmprojPath: String, threads: Int32 = 0, releaseAfterEncode: Bool = false) throws {
    var params = les_vision_default_params()
    params.n_threads = threads
    params.release_after_encode = releaseAfterEncode
    var vision: OpaquePointer?
    try check(les_vision_load(model.handle, mmprojPath, &params, &vision))
    guard let vision else { throw LESError.invalid("les_vision_load returned no vision") }
    handle = vision
    HandleLedger.adopt(vision, "les_vision")
    self.model = model
  }

  deinit { HandleLedger.free(handle, les_vision_free) }

  /// Encodes an RGB8 image: `rgb` holds width x height pixels, row-major from the
  /// top row, 3 bytes per pixel, no row padding. Throws LESError: invalid argument
  /// (width or height <= 0, a size other than width * height * 3, more than 2^26
  /// pixels), out of memory.
  public func encode(rgb: [UInt8], width: Int32, height: Int32) throws -> Image {
    // The C call reads width * height * 3 bytes; sizes <= 0 it refuses itself (its message).
    if width > 0, height > 0, rgb.count != Int(width) * Int(height) * 3 {
      throw LESError.invalid("rgb holds \(rgb.count) bytes, \(width) x \(height) x 3 expected")
    }
    var image: OpaquePointer?
    try rgb.withUnsafeBufferPointer { try check(les_vision_encode_rgb(handle, $0.baseAddress, width, height, &image)) }
    return try Image(image)
  }

  /// Decodes and encodes an image file (PNG, JPEG, binary PPM/PGM). Throws LESError:
  /// I/O (cannot open or read it; named), format (no such image, corrupt, truncated).
  public func encode(contentsOf url: URL) throws -> Image {
    var image: OpaquePointer?
    try check(les_vision_encode_file(handle, url.path, &image))
    return try Image(image)
  }

  /// Decodes and encodes an image file's bytes held in memory (e.g. a base64-decoded
  /// data: URL). Throws LESError: format (no such image), invalid argument (empty).
  public func encode(data: Data) throws -> Image {
    var image: OpaquePointer?
    let status = data.withUnsafeBytes {
      les_vision_encode_memory(handle, $0.bindMemory(to: UInt8.self).baseAddress, $0.count, &image)
    }
    try check(status)
    return try Image(image)
  }

  /// What the encoder has done so far (les_vision_get_stats).
  public func stats() throws -> VisionStats {
    var s = les_vision_stats()
    s.struct_size = UInt32(MemoryLayout<les_vision_stats>.size)
    try check(les_vision_get_stats(handle, &s))
    return VisionStats(s)
  }
}

/// One encoded image: immutable and thread-safe (append it to several contexts on
/// several threads at once). Freed on deinit; outlives its Vision.
public final class Image: @unchecked Sendable {
  let handle: OpaquePointer

  init(_ handle: OpaquePointer?) throws {
    guard let handle else { throw LESError.invalid("the encoder returned no image") }
    self.handle = handle
    HandleLedger.adopt(handle, "les_image")
  }

  deinit { HandleLedger.free(handle, les_image_free) }

  /// Decoder positions it takes in a context: embedding rows plus marker tokens.
  public var tokenCount: Int32 { les_image_n_tokens(handle) }
}

/// What a Vision has done (les_vision_stats). Bytes are bytes, times milliseconds.
public struct VisionStats: Sendable {
  public let imagesEncoded: Int64
  /// Encoder runs (an overview plus its slices per image).
  public let chunksEncoded: Int64
  /// Embedding rows produced (marker tokens not counted).
  public let imageTokens: Int64
  public let encodeMillisecondsTotal: Double
  public let lastEncodeMilliseconds: Double
  /// The encoder's weight bytes, and of those the bytes mapped now (0 after a release).
  public let weightBytes: UInt64
  public let weightBytesResident: UInt64
  /// Times the weights were mapped (1 + reloads after releases).
  public let weightLoads: Int64
  /// What an encode needs at its peak: weights + encode scratch.
  public let memoryBytes: UInt64

  init(_ s: les_vision_stats) {
    imagesEncoded = s.n_images_encoded
    chunksEncoded = s.n_chunks_encoded
    imageTokens = s.n_image_tokens
    encodeMillisecondsTotal = s.encode_ms_total
    lastEncodeMilliseconds = s.last_encode_ms
    weightBytes = s.weight_bytes
    weightBytesResident = s.weight_bytes_resident
    weightLoads = s.n_weight_loads
    memoryBytes = s.memory_bytes
  }
}

extension Context {
  /// Appends `image` after what the context holds: its marker tokens and embedding
  /// rows take the next `image.tokenCount` positions. Errors leave the context
  /// unchanged: context full (too few positions left; both counts named), invalid
  /// argument (an image of another model).
  public func appendImage(_ image: Image) throws {
    try exclusive {
      try withExtendedLifetime(image) { try check(les_context_append_image(handle, image.handle), context: handle) }
    }
  }
}
