// See aligned_buffer_pool.h.
#include "support/aligned_buffer_pool.h"

#include <limits>
#include <mutex>
#include <new>
#include <string>

namespace les::io {

namespace {
bool is_power_of_two(size_t x) { return x != 0 && (x & (x - 1)) == 0; }
}  // namespace

struct AlignedBufferPoolState {
  AlignedBytes arena;
  size_t buffer_bytes = 0;  // stride, a multiple of alignment
  size_t alignment = 0;
  uint32_t capacity = 0;
  mutable std::mutex mu;
  std::vector<uint32_t> free_list;  // guarded by mu
  std::vector<uint8_t> in_use;      // guarded by mu; catches a double release
};

void AlignedBuffer::release() noexcept {
  if (!state_) return;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->in_use[index_]) {
      state_->in_use[index_] = 0;
      state_->free_list.push_back(index_);
    }
  }
  state_.reset();
  data_ = nullptr;
  size_ = 0;
  index_ = 0;
}

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : state_(std::move(other.state_)), index_(other.index_), data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.index_ = 0;
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    release();
    state_ = std::move(other.state_);
    index_ = other.index_;
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
    other.index_ = 0;
  }
  return *this;
}

Result<AlignedBufferPool> AlignedBufferPool::create(size_t buffer_bytes, uint32_t n_buffers,
                                                    size_t alignment) {
  if (buffer_bytes == 0 || n_buffers == 0) {
    return invalid_argument_error("aligned buffer pool: buffer_bytes (" + std::to_string(buffer_bytes) +
                                  ") and n_buffers (" + std::to_string(n_buffers) +
                                  ") must be > 0");
  }
  if (!is_power_of_two(alignment) || alignment < sizeof(void*)) {
    return invalid_argument_error("aligned buffer pool: alignment " + std::to_string(alignment) +
                                  " is not a power of two >= " + std::to_string(sizeof(void*)));
  }
  if (buffer_bytes > std::numeric_limits<size_t>::max() / 2) {
    return invalid_argument_error("aligned buffer pool: buffer_bytes " + std::to_string(buffer_bytes) +
                                  " too large");
  }
  const size_t stride = (buffer_bytes + alignment - 1) / alignment * alignment;
  if (stride > std::numeric_limits<size_t>::max() / n_buffers) {
    return invalid_argument_error("aligned buffer pool: " + std::to_string(n_buffers) + " x " +
                                  std::to_string(stride) + " bytes overflows");
  }
  auto arena = AlignedBytes::allocate(stride * n_buffers, alignment);
  if (!arena.ok()) return arena.status().with_context("aligned buffer pool");
  auto state = std::make_shared<AlignedBufferPoolState>();
  state->arena = std::move(arena).value();
  state->buffer_bytes = stride;
  state->alignment = alignment;
  state->capacity = n_buffers;
  state->in_use.assign(n_buffers, 0);
  state->free_list.reserve(n_buffers);
  // Hand out low indices first (pop_back), which keeps tests predictable.
  for (uint32_t i = n_buffers; i-- > 0;) state->free_list.push_back(i);
  return AlignedBufferPool(std::move(state));
}

Result<AlignedBuffer> AlignedBufferPool::acquire() {
  uint32_t index = 0;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->free_list.empty()) {
      return out_of_memory_error("aligned buffer pool exhausted: all " +
                                 std::to_string(state_->capacity) + " buffers of " +
                                 std::to_string(state_->buffer_bytes) + " bytes are in use");
    }
    index = state_->free_list.back();
    state_->free_list.pop_back();
    state_->in_use[index] = 1;
  }
  std::byte* p = state_->arena.data() + static_cast<size_t>(index) * state_->buffer_bytes;
  return AlignedBuffer(state_, index, p, state_->buffer_bytes);
}

size_t AlignedBufferPool::buffer_bytes() const noexcept { return state_->buffer_bytes; }
uint32_t AlignedBufferPool::capacity() const noexcept { return state_->capacity; }
size_t AlignedBufferPool::alignment() const noexcept { return state_->alignment; }

uint32_t AlignedBufferPool::available() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return static_cast<uint32_t>(state_->free_list.size());
}

std::vector<std::span<std::byte>> AlignedBufferPool::regions() const {
  std::vector<std::span<std::byte>> out;
  out.reserve(state_->capacity);
  for (uint32_t i = 0; i < state_->capacity; ++i) {
    out.emplace_back(state_->arena.data() + static_cast<size_t>(i) * state_->buffer_bytes,
                     state_->buffer_bytes);
  }
  return out;
}

}  // namespace les::io
