// Robustness of GgufFile::parse: thousands of deterministic (seeded)
// corruptions of a valid file must each either parse or fail with a format /
// unsupported status: never crash, hang, or read out of bounds (this test
// runs under ASan+UBSan in CI). When a variant parses, every value and every
// tensor byte is touched so out-of-bounds spans would be caught.
//
// Setting LES_GGUF_CORPUS_DIR=<dir> also writes the base file there (a seed
// corpus for fuzz/fuzz_gguf.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "support/fixtures.h"

using les::GgmlType;
using les::StatusCode;
using les::gguf::Array;
using les::gguf::GgufFile;
using les::gguf::GgufWriter;
using les::gguf::Value;
using les::gguf::ValueType;

namespace {

// The base file: every value type, nested arrays, tokenizer arrays, and
// tensors of several types (a few KB, so it also serves as a fuzz seed).
std::vector<uint8_t> make_base_file() {
  GgufWriter w;
  auto must = [](les::Status s) { REQUIRE(s.ok()); };
  must(w.set_string("general.architecture", "qwen3moe"));
  must(w.set_u8("t.u8", 7));
  must(w.set_i8("t.i8", -7));
  must(w.set_u16("t.u16", 700));
  must(w.set_i16("t.i16", -700));
  must(w.set_u32("qwen3moe.block_count", 2));
  must(w.set_i32("t.i32", -70000));
  must(w.set_f32("qwen3moe.rope.freq_base", 10000.0f));
  must(w.set_bool("t.bool", true));
  must(w.set_u64("t.u64", 1ull << 40));
  must(w.set_i64("t.i64", -(1ll << 40)));
  must(w.set_f64("t.f64", 0.125));
  must(w.set_array_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a", "b", "ab"}));
  const std::vector<double> scores{0, 0, 0, -1, -2, -3};
  must(w.set_array_numbers("tokenizer.ggml.scores", ValueType::FLOAT32, scores));
  const std::vector<int64_t> types{2, 3, 3, 1, 1, 1};
  must(w.set_array_ints("tokenizer.ggml.token_type", ValueType::INT32, types));
  must(w.set_array_strings("tokenizer.ggml.merges", {"a b"}));
  must(w.set_array_bools("t.bools", {true, false}));
  const std::vector<int64_t> u16s{1, 2, 3};
  must(w.set_array_ints("t.u16s", ValueType::UINT16, u16s));
  Array inner;
  inner.elem_type = ValueType::STRING;
  inner.items = {Value::from_string("x"), Value::from_string("yz")};
  inner.count = 2;
  Array outer;
  outer.elem_type = ValueType::ARRAY;
  outer.items = {Value::from_array(inner), Value::from_array(Array{ValueType::UINT64, {}, {}, 0})};
  outer.count = 2;
  must(w.set("t.nested", Value::from_array(outer)));

  std::mt19937 rng(42);
  auto bytes = [&rng](size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(rng());
    return v;
  };
  struct T {
    const char* name;
    GgmlType type;
    std::vector<int64_t> ne;
    size_t n_bytes;
  };
  const T tensors[] = {{"token_embd.weight", GgmlType::F16, {16, 6}, 16 * 6 * 2},
                       {"blk.0.ffn_gate_inp.weight", GgmlType::F32, {16, 4}, 16 * 4 * 4},
                       {"blk.0.ffn_gate_exps.weight", GgmlType::Q4_K, {256, 2, 4}, 144 * 2 * 4},
                       {"blk.0.ffn_down_exps.weight", GgmlType::Q8_0, {32, 2, 4}, 34 * 2 * 4},
                       {"output_norm.weight", GgmlType::F32, {16}, 64}};
  for (const T& t : tensors) {
    const auto data = bytes(t.n_bytes);
    must(w.add_tensor(t.name, t.type, t.ne, data.data(), data.size()));
  }
  return w.write_to_memory();
}

// Offsets of the u32 and u64 fields of a *valid* image, found by walking it
// (trusted input: the base file).
struct Fields {
  std::vector<size_t> u32s;  // value types, n_dims, ggml types
  std::vector<size_t> u64s;  // counts, string lengths, array counts, ne, offsets
  size_t header_end = 0;     // end of the tensor infos
};

class Walker {
 public:
  Walker(const std::vector<uint8_t>& d, Fields& f) : d_(d), f_(f) {}
  void run() {
    pos_ = 8;
    const uint64_t n_tensors = u64(), n_kv = u64();
    for (uint64_t i = 0; i < n_kv; ++i) {
      str();
      value(u32());
    }
    for (uint64_t i = 0; i < n_tensors; ++i) {
      str();
      const uint32_t n_dims = u32();
      for (uint32_t k = 0; k < n_dims; ++k) u64();
      u32();
      u64();
    }
    f_.header_end = pos_;
  }

 private:
  uint32_t u32() {
    f_.u32s.push_back(pos_);
    uint32_t v;
    std::memcpy(&v, &d_[pos_], 4);
    pos_ += 4;
    return v;
  }
  uint64_t u64() {
    f_.u64s.push_back(pos_);
    uint64_t v;
    std::memcpy(&v, &d_[pos_], 8);
    pos_ += 8;
    return v;
  }
  void str() { pos_ += u64(); }
  void value(uint32_t type) {
    const auto t = static_cast<ValueType>(type);
    if (t == ValueType::STRING) return str();
    if (t == ValueType::ARRAY) {
      const uint32_t et = u32();
      const uint64_t n = u64();
      for (uint64_t i = 0; i < n; ++i) value(et);
      return;
    }
    pos_ += les::gguf::value_type_size(t);
  }
  const std::vector<uint8_t>& d_;
  Fields& f_;
  size_t pos_ = 0;
};

// Touches everything a successful parse exposes.
uint64_t touch(const GgufFile& g) {
  uint64_t h = 0;
  for (const auto& kv : g.metadata()) {
    h += kv.key.size();
    if (const Array* a = kv.value.as_array()) {
      for (uint64_t i = 0; i < a->count; ++i) {
        auto v = a->value_at(i);
        if (v && v->as_string()) h += v->as_string()->size();
      }
    } else if (const std::string* s = kv.value.as_string()) {
      h += s->size();
    }
  }
  for (const auto& t : g.tensors()) {
    // The span is contiguous: its first and last bytes inside the buffer put
    // all of it inside (ASan checks both reads).
    auto span = g.tensor_data(t);
    if (span.size() != t.n_bytes) FAIL("tensor_data size differs from n_bytes");
    if (!span.empty()) h += span.front() + span.back();
  }
  return h;
}

struct Tally {
  int parsed = 0;
  int rejected = 0;
};

void check_variant(const std::vector<uint8_t>& img, Tally& tally, const char* kind, int i) {
  auto r = GgufFile::parse(img.data(), img.size());
  if (r.ok()) {
    (void)touch(**r);
    ++tally.parsed;
    return;
  }
  ++tally.rejected;
  const StatusCode c = r.status().code();
  if (c != StatusCode::format && c != StatusCode::unsupported) {
    INFO(kind << " variant " << i << ": " << r.status().to_string());
    FAIL("unexpected status code");
  }
  if (r.status().message().empty()) FAIL("empty error message");
}

// Runs `n` seeded mutations of `base`. Returns the tally.
Tally mutate(const std::vector<uint8_t>& base, int n, uint32_t seed) {
  Fields f;
  Walker(base, f).run();
  REQUIRE(!f.u64s.empty());
  std::mt19937_64 rng(seed);
  auto pick = [&rng](size_t n) { return static_cast<size_t>(rng() % n); };
  const uint64_t huge[] = {~0ull, 1ull << 63, (1ull << 63) - 1, 1ull << 32, 0xffffffffull, base.size(),
                           base.size() + 1, 0, 1ull << 40};
  Tally tally;
  std::vector<uint8_t> img;
  for (int i = 0; i < n; ++i) {
    img = base;
    const int kind = i % 8;
    // Most mutations aim at the header (where the parser works); some anywhere.
    const size_t span = (rng() % 4 == 0) ? img.size() : f.header_end;
    switch (kind) {
      case 0:
      case 1: {  // 1-4 bit flips
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < flips; ++k) img[pick(span)] ^= static_cast<uint8_t>(1u << (rng() % 8));
        check_variant(img, tally, "bit flip", i);
        break;
      }
      case 2: {  // truncation at a field boundary or anywhere
        size_t at;
        if (rng() % 2 == 0) {
          const auto& v = (rng() % 2 == 0) ? f.u64s : f.u32s;
          at = v[pick(v.size())] + static_cast<size_t>(rng() % 9);
        } else {
          at = pick(img.size());
        }
        img.resize(std::min(at, img.size()));
        check_variant(img, tally, "truncation", i);
        break;
      }
      case 3: {  // inserted bytes
        const size_t at = pick(span);
        const size_t len = 1 + static_cast<size_t>(rng() % 16);
        std::vector<uint8_t> ins(len);
        for (auto& b : ins) b = static_cast<uint8_t>(rng());
        img.insert(img.begin() + static_cast<std::ptrdiff_t>(at), ins.begin(), ins.end());
        check_variant(img, tally, "insertion", i);
        break;
      }
      case 4: {  // deleted bytes
        const size_t at = pick(span);
        const size_t len = std::min<size_t>(1 + static_cast<size_t>(rng() % 16), img.size() - at);
        img.erase(img.begin() + static_cast<std::ptrdiff_t>(at), img.begin() + static_cast<std::ptrdiff_t>(at + len));
        check_variant(img, tally, "deletion", i);
        break;
      }
      case 5:
      case 6: {  // a u64 field (count, length, ne, offset) overwritten with a huge or edge value
        const size_t at = f.u64s[pick(f.u64s.size())];
        uint64_t v = huge[pick(std::size(huge))];
        if (rng() % 3 == 0) v = rng();
        std::memcpy(&img[at], &v, 8);
        check_variant(img, tally, "u64 overwrite", i);
        break;
      }
      case 7: {  // a u32 field (type, n_dims) overwritten
        const size_t at = f.u32s[pick(f.u32s.size())];
        const uint32_t choices[] = {0, 1, 4, 5, 8, 9, 12, 13, 40, 0xffffffffu, static_cast<uint32_t>(rng())};
        const uint32_t v = choices[pick(std::size(choices))];
        std::memcpy(&img[at], &v, 4);
        check_variant(img, tally, "u32 overwrite", i);
        break;
      }
    }
  }
  // Every truncation of the header must be rejected (each byte of a small
  // header; ~2048 evenly spaced cuts of a large one).
  const size_t step = std::max<size_t>(1, f.header_end / 2048);
  for (size_t at = 0; at < f.header_end; at += step) {
    img.assign(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(at));
    auto r = GgufFile::parse(img.data(), img.size());
    if (r.ok()) {
      INFO("truncated at " << at);
      FAIL("a truncated header parsed");
    }
    ++tally.rejected;
  }
  std::fprintf(stderr, "gguf mutation (seed %u, %zu-byte base): %d parsed, %d rejected\n", seed, base.size(),
               tally.parsed, tally.rejected);
  return tally;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("5000 seeded mutations of a writer-made file parse or fail cleanly", "[gguf][mutation]") {
  const std::vector<uint8_t> base = make_base_file();
  REQUIRE(base.size() <= (1u << 20));
  auto r = GgufFile::parse(base.data(), base.size());
  REQUIRE(r.ok());
  if (const char* dir = std::getenv("LES_GGUF_CORPUS_DIR"); dir && *dir) {
    std::filesystem::create_directories(dir);
    std::ofstream(std::string(dir) + "/base.gguf", std::ios::binary)
        .write(reinterpret_cast<const char*>(base.data()), static_cast<std::streamsize>(base.size()));
  }
  const Tally t = mutate(base, 5000, 0x67677566u);
  // Both outcomes occur: the mutations are neither all harmless nor all fatal.
  CHECK(t.parsed > 100);
  CHECK(t.rejected > 1000);
}

TEST_CASE("mutations of llama.cpp's imatrix-train.gguf parse or fail cleanly", "[gguf][mutation]") {
  LES_REQUIRE_FIXTURE(path, "trained/imatrix-train.gguf");
  const std::vector<uint8_t> base = read_file(path);
  REQUIRE(GgufFile::parse(base.data(), base.size()).ok());
  const Tally t = mutate(base, 400, 7);
  CHECK(t.parsed > 0);
  CHECK(t.rejected > 0);
}
