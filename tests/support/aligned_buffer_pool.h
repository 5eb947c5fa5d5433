// AlignedBufferPool (fixed-size buffers carved from one aligned arena,
// handed out as move-only AlignedBuffer handles that are released exactly
// once): test and benchmark support, not part of the library. The engine's
// reads go into the expert cache's slots instead (registered with the
// backend by sched::SlotRegistration; see io/io_backend.h). Tests and
// bench_io use the pool to read into aligned memory and to register buffers
// with a backend (IoBackend::register_buffers(pool.regions())).
//
// Ownership: the arena lives until the pool and every handle taken from it
// are gone, so a handle that outlives its pool is still safe to use and to drop.
// Thread-safety: acquire/release and the counters are thread-safe (a mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "io/aligned_bytes.h"
#include "util/status.h"

namespace les::io {

class AlignedBufferPool;
struct AlignedBufferPoolState;  // shared by the pool and its handles

// A handle to one buffer of an AlignedBufferPool. Move-only; the buffer goes
// back to the pool exactly once: on release() or destruction, whichever comes
// first. A moved-from or released handle is empty (data() == nullptr).
// Thread-safety: a handle is used by one thread at a time; releasing is
// thread-safe with respect to the pool.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(AlignedBuffer&& other) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { release(); }

  // Returns the buffer to its pool; no-op on an empty handle.
  void release() noexcept;

  bool empty() const noexcept { return data_ == nullptr; }
  std::byte* data() const noexcept { return data_; }
  size_t size() const noexcept { return size_; }
  std::span<std::byte> span() const noexcept { return {data_, size_}; }
  // Position of this buffer in the pool, in [0, pool.capacity()).
  uint32_t index() const noexcept { return index_; }

 private:
  friend class AlignedBufferPool;
  AlignedBuffer(std::shared_ptr<AlignedBufferPoolState> state, uint32_t index, std::byte* data,
                size_t size)
      : state_(std::move(state)), index_(index), data_(data), size_(size) {}

  std::shared_ptr<AlignedBufferPoolState> state_;
  uint32_t index_ = 0;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// n_buffers buffers of buffer_bytes each (rounded up to the alignment), one
// contiguous arena. Movable, not copyable.
class AlignedBufferPool {
 public:
  // Errors: invalid_argument (zero sizes, alignment not a power of two,
  // size overflow), out_of_memory.
  static Result<AlignedBufferPool> create(size_t buffer_bytes, uint32_t n_buffers,
                                          size_t alignment = 4096);

  AlignedBufferPool(AlignedBufferPool&&) noexcept = default;
  AlignedBufferPool& operator=(AlignedBufferPool&&) noexcept = default;
  ~AlignedBufferPool() = default;

  // A free buffer (contents left from its previous use). Errors: out_of_memory
  // "pool exhausted" when every buffer is handed out.
  Result<AlignedBuffer> acquire();

  size_t buffer_bytes() const noexcept;
  uint32_t capacity() const noexcept;
  // Buffers currently free.
  uint32_t available() const;
  size_t alignment() const noexcept;
  // Every buffer's memory, index order; for IoBackend::register_buffers.
  std::vector<std::span<std::byte>> regions() const;

 private:
  explicit AlignedBufferPool(std::shared_ptr<AlignedBufferPoolState> s) : state_(std::move(s)) {}
  std::shared_ptr<AlignedBufferPoolState> state_;
};

}  // namespace les::io
