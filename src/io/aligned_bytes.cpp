#include "io/aligned_bytes.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace les::io {

namespace {
bool is_power_of_two(size_t x) { return x != 0 && (x & (x - 1)) == 0; }
}  // namespace

Result<AlignedBytes> AlignedBytes::allocate(size_t size, size_t alignment) {
  if (!is_power_of_two(alignment) || alignment < sizeof(void*)) {
    return invalid_argument_error("aligned allocation: alignment " + std::to_string(alignment) +
                                  " is not a power of two >= " + std::to_string(sizeof(void*)));
  }
  if (size == 0) return AlignedBytes();
  if (size > std::numeric_limits<size_t>::max() - alignment) {
    return invalid_argument_error("aligned allocation: size " + std::to_string(size) + " overflows");
  }
  const size_t rounded = (size + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (p == nullptr) {
    return out_of_memory_error("aligned allocation of " + std::to_string(rounded) + " bytes failed");
  }
  std::memset(p, 0, rounded);
  return AlignedBytes(static_cast<std::byte*>(p), size);
}

AlignedBytes::AlignedBytes(AlignedBytes&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

AlignedBytes& AlignedBytes::operator=(AlignedBytes&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

AlignedBytes::~AlignedBytes() { std::free(data_); }

}  // namespace les::io
