// Helpers shared by the src/io tests: a temp file whose every byte is a known
// function of its offset, and a request/verification toolkit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "support/fixtures.h"

namespace les::test {

// The byte stored at `offset` of every pattern file (a splitmix64 hash of the
// 8-byte word index, so any misplaced range shows).
inline uint8_t pattern_byte(uint64_t offset) {
  uint64_t z = (offset >> 3) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<uint8_t>(z >> ((offset & 7) * 8));
}

// Writes a pattern file of `size` bytes under the test temp dir; returns its path.
inline std::string write_pattern_file(const std::string& name, uint64_t size) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  std::vector<char> chunk(1 << 20);
  for (uint64_t pos = 0; pos < size;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), size - pos));
    for (size_t i = 0; i < n; ++i) chunk[i] = static_cast<char>(pattern_byte(pos + i));
    f.write(chunk.data(), static_cast<std::streamsize>(n));
    pos += n;
  }
  return path;
}

// Index of the first byte of dst[0, n) that differs from the pattern at
// `offset`, or n when all match.
inline size_t first_mismatch(const std::byte* dst, uint64_t offset, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<uint8_t>(dst[i]) != pattern_byte(offset + i)) return i;
  }
  return n;
}

}  // namespace les::test
