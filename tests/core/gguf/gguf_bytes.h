// Test helper: builds GGUF images byte by byte, including malformed ones the
// GgufWriter refuses to produce (duplicate keys, misaligned offsets, ...).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace les::test {

class GgufBytes {
 public:
  std::vector<uint8_t> b;

  size_t size() const { return b.size(); }

  GgufBytes& u8(uint8_t v) { return raw(&v, 1); }
  GgufBytes& u32(uint32_t v) { return raw(&v, 4); }
  GgufBytes& u64(uint64_t v) { return raw(&v, 8); }
  GgufBytes& f32(float v) { return raw(&v, 4); }
  GgufBytes& i32(int32_t v) { return raw(&v, 4); }
  GgufBytes& str(const std::string& s) {
    u64(s.size());
    return raw(s.data(), s.size());
  }
  GgufBytes& raw(const void* p, size_t n) {
    const auto* c = static_cast<const uint8_t*>(p);
    b.insert(b.end(), c, c + n);
    return *this;
  }
  // "GGUF", version, n_tensors, n_kv.
  GgufBytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    raw("GGUF", 4);
    u32(version);
    u64(n_tensors);
    return u64(n_kv);
  }
  // Key and type tag; the caller appends the value.
  GgufBytes& key(const std::string& k, uint32_t type) {
    str(k);
    return u32(type);
  }
  GgufBytes& kv_u32(const std::string& k, uint32_t v) { return key(k, 4).u32(v); }
  GgufBytes& kv_str(const std::string& k, const std::string& v) { return key(k, 8).str(v); }
  // Tensor info: name, dims (ne0 first), ggml type, offset.
  GgufBytes& tensor(const std::string& name, const std::vector<uint64_t>& ne, uint32_t type, uint64_t offset) {
    str(name);
    u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t n : ne) u64(n);
    u32(type);
    return u64(offset);
  }
  // Zero padding to a multiple of `align`.
  GgufBytes& pad(size_t align = 32) {
    b.resize((b.size() + align - 1) / align * align, 0);
    return *this;
  }
  GgufBytes& zeros(size_t n) {
    b.resize(b.size() + n, 0);
    return *this;
  }
};

}  // namespace les::test
