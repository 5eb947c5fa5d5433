// GgufWriter: round trips through GgufFile, input validation, and byte-exact
// re-writing of llama.cpp fixture files.
#include <catch2/catch.hpp>

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

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Value nested_array() {
  // [[1, 2], [3]] of INT16, inside an array of arrays, inside another array.
  auto ints = [](std::vector<int16_t> xs) {
    Array a;
    a.elem_type = ValueType::INT16;
    a.count = xs.size();
    a.packed.resize(xs.size() * 2);
    std::memcpy(a.packed.data(), xs.data(), a.packed.size());
    return Value::from_array(std::move(a));
  };
  Array inner;
  inner.elem_type = ValueType::ARRAY;
  inner.items = {ints({1, 2}), ints({3})};
  inner.count = 2;
  Array outer;
  outer.elem_type = ValueType::ARRAY;
  outer.items = {Value::from_array(inner), Value::from_array(Array{ValueType::ARRAY, {}, {}, 0})};
  outer.count = 2;
  return Value::from_array(std::move(outer));
}

}  // namespace

TEST_CASE("writer round-trips every value type, nested arrays and tensors", "[gguf][writer]") {
  GgufWriter w;
  REQUIRE(w.set_u8("t.u8", 200).ok());
  REQUIRE(w.set_i8("t.i8", -100).ok());
  REQUIRE(w.set_u16("t.u16", 65000).ok());
  REQUIRE(w.set_i16("t.i16", -30000).ok());
  REQUIRE(w.set_u32("t.u32", 4000000000u).ok());
  REQUIRE(w.set_i32("t.i32", -2000000000).ok());
  REQUIRE(w.set_f32("t.f32", 1.5e-6f).ok());
  REQUIRE(w.set_bool("t.bool", true).ok());
  REQUIRE(w.set_string("t.string", std::string("h\0llo", 5)).ok());
  REQUIRE(w.set_u64("t.u64", 18000000000000000000ull).ok());
  REQUIRE(w.set_i64("t.i64", -9000000000000000000ll).ok());
  REQUIRE(w.set_f64("t.f64", 3.141592653589793).ok());
  REQUIRE(w.set_array_strings("tokenizer.ggml.tokens", {"<unk>", "", "a b"}).ok());
  const std::vector<double> scores{0.0, -1.25, 7.5};
  REQUIRE(w.set_array_numbers("tokenizer.ggml.scores", ValueType::FLOAT32, scores).ok());
  const std::vector<int64_t> types{2, 1, 6};
  REQUIRE(w.set_array_ints("tokenizer.ggml.token_type", ValueType::INT32, types).ok());
  const std::vector<int64_t> u64s{0, 1, 1ll << 62};
  REQUIRE(w.set_array_ints("t.arr_u64", ValueType::UINT64, u64s).ok());
  REQUIRE(w.set_array_numbers("t.arr_f64", ValueType::FLOAT64, scores).ok());
  REQUIRE(w.set_array_bools("t.arr_bool", {true, false, true}).ok());
  REQUIRE(w.set("t.nested", nested_array()).ok());
  REQUIRE(w.set_u32("t.replaced", 1).ok());
  REQUIRE(w.set_string("t.replaced", "second").ok());  // replaces in place, keeps position
  REQUIRE(w.set_alignment(64).ok());

  const auto f32 = random_bytes(8 * 3 * 4, 1);
  const auto f16 = random_bytes(64 * 2 * 2, 2);
  const auto q4k = random_bytes(144 * 3, 3);
  const auto q8_0 = random_bytes(34 * 2 * 2 * 2, 4);
  const std::vector<int64_t> ne_f32{8, 3};
  const std::vector<int64_t> ne_f16{64, 2};
  const std::vector<int64_t> ne_q4k{256, 3, 1};
  const std::vector<int64_t> ne_q8{32, 2, 2, 2};
  REQUIRE(w.add_tensor("a.f32", GgmlType::F32, ne_f32, f32.data(), f32.size()).ok());
  REQUIRE(w.add_tensor("b.f16", GgmlType::F16, ne_f16, f16.data(), f16.size()).ok());
  REQUIRE(w.add_tensor("c.q4k", GgmlType::Q4_K, ne_q4k, q4k.data(), q4k.size()).ok());
  REQUIRE(w.add_tensor("d.q8_0", GgmlType::Q8_0, ne_q8, q8_0.data(), q8_0.size()).ok());

  const std::vector<uint8_t> image = w.write_to_memory();
  CHECK(image.size() % 64 == 0);
  auto r = GgufFile::parse(image.data(), image.size());
  REQUIRE(r.ok());
  const GgufFile& g = **r;
  CHECK(g.version() == 3);
  CHECK(g.alignment() == 64);
  CHECK(g.metadata().size() == w.n_keys());
  CHECK(g.metadata()[19].key == "t.replaced");
  CHECK(*g.get_string("t.replaced") == "second");
  CHECK(*g.get_uint("t.u8") == 200);
  CHECK(g.find("t.u8")->type() == ValueType::UINT8);
  CHECK(*g.get_int("t.i8") == -100);
  CHECK(*g.get_uint("t.u16") == 65000);
  CHECK(*g.get_int("t.i16") == -30000);
  CHECK(*g.get_uint("t.u32") == 4000000000u);
  CHECK(*g.get_int("t.i32") == -2000000000);
  CHECK(*g.get_float("t.f32") == static_cast<double>(1.5e-6f));
  CHECK(*g.get_bool("t.bool"));
  CHECK(*g.get_string("t.string") == std::string("h\0llo", 5));
  CHECK(*g.get_uint("t.u64") == 18000000000000000000ull);
  CHECK_FALSE(g.get_int("t.u64").ok());  // does not fit int64
  CHECK(*g.get_int("t.i64") == -9000000000000000000ll);
  CHECK_FALSE(g.get_uint("t.i64").ok());  // negative
  CHECK(*g.get_float("t.f64") == 3.141592653589793);
  const Array* toks = *g.get_array("tokenizer.ggml.tokens");
  REQUIRE(toks->count == 3);
  CHECK(*toks->string_at(2) == "a b");
  CHECK(*toks->string_at(1) == "");
  CHECK(*(*g.get_array("tokenizer.ggml.scores"))->float_at(1) == -1.25);
  CHECK(*(*g.get_array("tokenizer.ggml.token_type"))->int_at(2) == 6);
  CHECK(*(*g.get_array("t.arr_u64"))->uint_at(2) == (1ull << 62));
  CHECK(*(*g.get_array("t.arr_bool"))->bool_at(1) == false);
  CHECK(*(*g.get_array("t.arr_bool"))->bool_at(2) == true);
  const Value* nested = g.find("t.nested");
  REQUIRE(nested != nullptr);
  CHECK(*nested == nested_array());
  const Array* inner = nested->as_array()->items[0].as_array();
  CHECK(*inner->items[0].as_array()->int_at(1) == 2);
  CHECK(*inner->items[1].as_array()->int_at(0) == 3);
  // Every value compares equal to what was set.
  for (const auto& kv : g.metadata()) {
    INFO(kv.key);
    CHECK(kv.value.type() == g.find(kv.key)->type());
  }

  struct Expect {
    const char* name;
    GgmlType type;
    std::vector<int64_t> ne;
    const std::vector<uint8_t>* bytes;
  };
  const Expect expect[] = {{"a.f32", GgmlType::F32, ne_f32, &f32},
                           {"b.f16", GgmlType::F16, ne_f16, &f16},
                           {"c.q4k", GgmlType::Q4_K, ne_q4k, &q4k},
                           {"d.q8_0", GgmlType::Q8_0, ne_q8, &q8_0}};
  REQUIRE(g.tensors().size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    const auto& t = g.tensors()[i];
    INFO(t.name);
    CHECK(t.name == expect[i].name);
    CHECK(t.type == expect[i].type);
    CHECK(t.n_dims == expect[i].ne.size());
    for (size_t d = 0; d < 4; ++d) CHECK(t.ne[d] == (d < expect[i].ne.size() ? expect[i].ne[d] : 1));
    CHECK(t.data_offset % 64 == 0);
    auto span = g.tensor_data(t);
    CHECK(std::vector<uint8_t>(span.begin(), span.end()) == *expect[i].bytes);
  }

  // The file path gives the same bytes.
  const std::string path = les::test::temp_dir() + "/roundtrip.gguf";
  REQUIRE(w.write_to_file(path).ok());
  CHECK(read_file(path) == image);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_CASE("writer rejects invalid input with invalid_argument", "[gguf][writer]") {
  GgufWriter w;
  CHECK(w.set_u32("", 1).code() == StatusCode::invalid_argument);
  CHECK(w.set_u32(std::string(70000, 'k'), 1).code() == StatusCode::invalid_argument);
  CHECK(w.set_string("general.alignment", "32").code() == StatusCode::invalid_argument);
  CHECK(w.set_u32("general.alignment", 48).message() == "key 'general.alignment' = 48 is not a power of two");
  CHECK(w.set_alignment(0).code() == StatusCode::invalid_argument);
  CHECK(w.set_array_ints("tokenizer.ggml.tokens", ValueType::INT32, std::vector<int64_t>{1}).code() ==
        StatusCode::invalid_argument);
  CHECK(w.set_array_ints("t.x", ValueType::UINT8, std::vector<int64_t>{256}).code() == StatusCode::invalid_argument);
  CHECK(w.set_array_ints("t.x", ValueType::INT8, std::vector<int64_t>{-129}).code() == StatusCode::invalid_argument);
  CHECK(w.set_array_numbers("t.x", ValueType::INT32, std::vector<double>{0.5}).code() == StatusCode::invalid_argument);
  CHECK(w.set_array_numbers("t.x", ValueType::STRING, std::vector<double>{1}).code() == StatusCode::invalid_argument);
  Array bad;
  bad.elem_type = ValueType::UINT32;
  bad.count = 2;
  bad.packed.resize(4);  // one element's bytes for count 2
  CHECK(w.set("t.bad", Value::from_array(bad)).code() == StatusCode::invalid_argument);
  // Nesting deeper than 8.
  Value deep = Value::from_array(Array{ValueType::UINT8, {}, {}, 0});
  for (int i = 0; i < 9; ++i) deep = Value::from_array(Array{ValueType::ARRAY, {deep}, {}, 1});
  CHECK(w.set("t.deep", deep).code() == StatusCode::invalid_argument);
  CHECK(w.n_keys() == 0);

  const std::vector<uint8_t> buf(4096);
  const std::vector<int64_t> ne{32, 2};
  CHECK(w.add_tensor("", GgmlType::F32, ne, buf.data(), 256).code() == StatusCode::invalid_argument);
  CHECK(w.add_tensor(std::string(65, 'n'), GgmlType::F32, ne, buf.data(), 256).code() == StatusCode::invalid_argument);
  CHECK(w.add_tensor("t", GgmlType::F32, ne, buf.data(), 255).message() ==
        "tensor 't': 255 data bytes given, F32 with this shape needs 256");
  CHECK(w.add_tensor("t", GgmlType::Q4_K, ne, buf.data(), 144).code() == StatusCode::invalid_argument);  // 32 % 256
  CHECK(w.add_tensor("t", static_cast<GgmlType>(4), ne, buf.data(), 256).code() == StatusCode::invalid_argument);
  CHECK(w.add_tensor("t", GgmlType::F32, std::vector<int64_t>{}, buf.data(), 0).code() == StatusCode::invalid_argument);
  CHECK(w.add_tensor("t", GgmlType::F32, std::vector<int64_t>{1, 1, 1, 1, 1}, buf.data(), 4).code() ==
        StatusCode::invalid_argument);
  CHECK(w.add_tensor("t", GgmlType::F32, std::vector<int64_t>{0, 2}, buf.data(), 0).code() ==
        StatusCode::invalid_argument);
  CHECK(w.add_tensor("t", GgmlType::F32, std::vector<int64_t>{1ll << 40, 1ll << 40}, buf.data(), 0).code() ==
        StatusCode::invalid_argument);
  CHECK(w.add_tensor("t", GgmlType::F32, ne, nullptr, 256).code() == StatusCode::invalid_argument);
  REQUIRE(w.add_tensor("t", GgmlType::F32, ne, buf.data(), 256).ok());
  CHECK(w.add_tensor("t", GgmlType::F32, ne, buf.data(), 256).message() == "tensor 't': duplicate tensor name");
  CHECK(w.n_tensors() == 1);

  CHECK(w.write_to_file("/nonexistent/dir/x.gguf").code() == StatusCode::io);
}

TEST_CASE("re-writing llama.cpp fixtures reproduces them byte for byte", "[gguf][writer]") {
  for (const char* rel : {"trained/tiny-qwen3moe-Q4_K_M.gguf", "trained/imatrix-train.gguf",
                          "synthetic/qwen2moe-Q4_K_M.gguf", "tokenizer/ggml-vocab-llama-spm.gguf"}) {
    LES_REQUIRE_FIXTURE(path, rel);
    INFO(rel);
    auto r = GgufFile::open(path);
    REQUIRE(r.ok());
    const GgufFile& g = **r;
    GgufWriter w;
    for (const auto& kv : g.metadata()) REQUIRE(w.set(kv.key, kv.value).ok());
    for (const auto& t : g.tensors()) {
      auto data = g.tensor_data(t);
      REQUIRE(w.add_tensor(t.name, t.type, std::span<const int64_t>(t.ne.data(), t.n_dims), data.data(), data.size())
                  .ok());
    }
    const std::vector<uint8_t> image = w.write_to_memory();
    // Metadata and tensor bytes read back identical.
    auto back = GgufFile::parse(image.data(), image.size());
    REQUIRE(back.ok());
    REQUIRE((*back)->metadata().size() == g.metadata().size());
    for (size_t i = 0; i < g.metadata().size(); ++i) {
      CHECK((*back)->metadata()[i].key == g.metadata()[i].key);
      CHECK((*back)->metadata()[i].value == g.metadata()[i].value);
    }
    REQUIRE((*back)->tensors().size() == g.tensors().size());
    for (size_t i = 0; i < g.tensors().size(); ++i) {
      const auto& a = g.tensors()[i];
      const auto& b = (*back)->tensors()[i];
      CHECK(a.name == b.name);
      CHECK(a.data_offset == b.data_offset);
      auto da = g.tensor_data(a);
      auto db = (*back)->tensor_data(b);
      CHECK(std::equal(da.begin(), da.end(), db.begin(), db.end()));
    }
    // And the whole file is the same bytes llama.cpp wrote.
    const std::vector<uint8_t> original = read_file(path);
    CHECK(image.size() == original.size());
    const bool identical = image == original;
    CHECK(identical);
  }
}
