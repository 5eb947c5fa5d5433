// Loads and stores of trivially copyable values (F16/BF16 scalars, ggml block
// structs) at any byte address, for the scalar reference kernels.
//
// Rows handed to the kernel table can sit at any byte offset (a tensor inside
// a mmapped file, a KV-cache row, a test's deliberately misaligned buffer), so
// forming a typed reference to them (`x[b].d`, `y[i] = h`) would be undefined
// behaviour when the address is not a multiple of alignof(T). These helpers go
// through std::memcpy on bytes instead, which compilers lower to a plain
// (unaligned-capable) load or store on x86-64 and AArch64.
//
// Element i of a row starts at byte i * sizeof(T) from `base`.
// Thread-safety: pure functions; the caller owns the memory.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace les::kernels {

// Value of element i of the row of Ts at `base` (any alignment).
template <typename T>
inline T load_unaligned(const void* base, int64_t i) {
  static_assert(std::is_trivially_copyable_v<T>);
  T v;
  std::memcpy(&v, static_cast<const unsigned char*>(base) + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

// Writes v as element i of the row of Ts at `base` (any alignment).
template <typename T>
inline void store_unaligned(void* base, int64_t i, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::memcpy(static_cast<unsigned char*>(base) + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

}  // namespace les::kernels
