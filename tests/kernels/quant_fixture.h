// Helpers for tests that read shared/fixtures/quant (fixtures README section 4):
// whole-file readers for raw little-endian float32 and ggml block bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace les::test {

// The whole file as bytes; fails the current test if it cannot be read.
inline std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// The whole file as float32 values; fails the test if its size is not a multiple of 4.
inline std::vector<float> read_file_f32(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  REQUIRE(bytes.size() % 4 == 0);
  std::vector<float> v(bytes.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace les::test
