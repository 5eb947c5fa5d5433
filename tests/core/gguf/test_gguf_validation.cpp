// GgufFile::parse rejects each kind of malformed file with a format (or
// unsupported) status naming the field and byte offset. Each case is a
// hand-made image (tests/core/gguf/gguf_bytes.h).
#include <catch2/catch.hpp>

#include <string>

#include "core/gguf/gguf_bytes.h"
#include "core/gguf/gguf_reader.h"

using les::StatusCode;
using les::gguf::GgufFile;
using les::test::GgufBytes;

namespace {

constexpr uint32_t kF32 = 0, kQ4_K = 12;
constexpr uint32_t kU32 = 4, kI32 = 5, kF32v = 6, kBool = 7, kStr = 8, kArr = 9;

// Parses and returns the error message; fails the test if parsing succeeds or
// the code differs.
std::string parse_error(const GgufBytes& g, StatusCode code = StatusCode::format) {
  auto r = GgufFile::parse(g.b.data(), g.b.size());
  REQUIRE_FALSE(r.ok());
  INFO(r.status().to_string());
  CHECK(r.status().code() == code);
  return r.status().message();
}

bool ok(const GgufBytes& g) {
  auto r = GgufFile::parse(g.b.data(), g.b.size());
  if (!r.ok()) UNSCOPED_INFO(r.status().to_string());
  return r.ok();
}

// A valid file with one F32 tensor {8} at offset 0.
GgufBytes one_tensor(uint64_t offset = 0, std::vector<uint64_t> ne = {8}, uint32_t type = kF32) {
  GgufBytes g;
  g.header(1, 1).kv_str("general.architecture", "x").tensor("w", ne, type, offset).pad().zeros(64);
  return g;
}

}  // namespace

TEST_CASE("the hand-made baseline files parse", "[gguf][validation]") {
  CHECK(ok(one_tensor()));
  GgufBytes empty;
  empty.header(0, 0);
  CHECK(ok(empty));
  CHECK(ok(empty.header(0, 0, 2)));  // v2 has the same layout
}

TEST_CASE("header errors", "[gguf][validation]") {
  GgufBytes g;
  CHECK(parse_error(g) == "header magic: file ends after 0 bytes, 4 more needed (at byte 0)");
  g.raw("GGUX", 4).u32(3).u64(0).u64(0);
  CHECK(parse_error(g) == "header: magic 47 47 55 58 is not \"GGUF\" (at byte 0)");

  GgufBytes v1;
  v1.header(0, 0, 1);
  CHECK(parse_error(v1, StatusCode::unsupported).find("version 1 is not supported") != std::string::npos);
  GgufBytes v4;
  v4.header(0, 0, 4);
  CHECK(parse_error(v4, StatusCode::unsupported) == "header: GGUF version 4 is not supported (only 2 and 3) (at byte 4)");
  GgufBytes be;
  be.header(0, 0, 0x03000000);
  CHECK(parse_error(be, StatusCode::unsupported).find("big-endian") != std::string::npos);

  GgufBytes trunc;
  trunc.raw("GGUF", 4).u32(3).u64(0);
  CHECK(parse_error(trunc) == "header n_kv: file ends after 16 bytes, 8 more needed (at byte 16)");
  GgufBytes many_kv;
  many_kv.header(0, 1ull << 60);
  CHECK(parse_error(many_kv) == "header: n_kv 1152921504606846976 cannot fit in the 0 bytes left in the file (at byte 16)");
  GgufBytes many_t;
  many_t.header(~0ull, 0).zeros(100);
  CHECK(parse_error(many_t).find("n_tensors 18446744073709551615 cannot fit") != std::string::npos);
}

TEST_CASE("metadata value errors", "[gguf][validation]") {
  GgufBytes unknown_type;
  unknown_type.header(0, 1).key("a.b", 13).u32(0);
  CHECK(parse_error(unknown_type) == "key 'a.b': unknown value type 13 (at byte 35)");

  GgufBytes long_str;
  long_str.header(0, 1).key("a.s", kStr).u64(1000).raw("abc", 3);
  CHECK(parse_error(long_str) == "key 'a.s': length 1000 exceeds the 3 bytes left in the file (at byte 39)");

  GgufBytes huge_key;
  huge_key.header(0, 1).u64(~0ull).zeros(16);
  CHECK(parse_error(huge_key) == "key 0: length 18446744073709551615 exceeds the limit of 65535 (at byte 24)");

  GgufBytes empty_key;
  empty_key.header(0, 1).key("", kU32).u32(1);
  CHECK(parse_error(empty_key) == "key 0: empty key (at byte 24)");

  GgufBytes big_array;
  big_array.header(0, 1).key("a.arr", kArr).u32(kU32).u64(1ull << 62).zeros(8);
  CHECK(parse_error(big_array) == "key 'a.arr': 4611686018427387904 elements of UINT32 exceed the 8 bytes left in the "
                                  "file (at byte 45)");
  GgufBytes big_str_array;
  big_str_array.header(0, 1).key("a.arr", kArr).u32(kStr).u64(3).zeros(16);
  CHECK(parse_error(big_str_array).find("3 elements of STRING cannot fit in the 16 bytes") != std::string::npos);

  GgufBytes deep;
  deep.header(0, 1).key("a.deep", kArr);
  for (int i = 0; i < 9; ++i) deep.u32(kArr).u64(1);
  deep.u32(kU32).u64(0);
  CHECK(parse_error(deep).find("arrays nested deeper than 8") != std::string::npos);
  GgufBytes deep_ok;  // depth 8 is allowed
  deep_ok.header(0, 1).key("a.deep", kArr);
  for (int i = 0; i < 7; ++i) deep_ok.u32(kArr).u64(1);
  deep_ok.u32(kU32).u64(0);
  CHECK(ok(deep_ok));

  GgufBytes bad_bool;
  bad_bool.header(0, 1).key("a.flag", kBool).u8(2);
  CHECK(parse_error(bad_bool) == "key 'a.flag': BOOL byte 2 is neither 0 nor 1 (at byte 42)");
  GgufBytes bad_bool_arr;
  bad_bool_arr.header(0, 1).key("a.flags", kArr).u32(kBool).u64(2).u8(1).u8(7);
  CHECK(parse_error(bad_bool_arr).find("a.flags'[1]: BOOL byte 7") != std::string::npos);

  GgufBytes dup;
  dup.header(0, 2).kv_u32("a.x", 1).kv_u32("a.x", 2);
  CHECK(parse_error(dup) == "key 'a.x': duplicate key (at byte 43)");

  GgufBytes trunc_value;
  trunc_value.header(0, 1).key("a.x", kU32).u8(1);
  CHECK(parse_error(trunc_value).find("key 'a.x': file ends") != std::string::npos);
}

TEST_CASE("well-known keys must have their documented types", "[gguf][validation]") {
  GgufBytes align_str;
  align_str.header(0, 1).kv_str("general.alignment", "32");
  CHECK(parse_error(align_str) == "key 'general.alignment' has type STRING, expected UINT32 (at byte 24)");
  GgufBytes align_3;
  align_3.header(0, 1).kv_u32("general.alignment", 3);
  CHECK(parse_error(align_3) == "key 'general.alignment' = 3 is not a power of two (at byte 24)");
  GgufBytes align_0;
  align_0.header(0, 1).kv_u32("general.alignment", 0);
  CHECK(parse_error(align_0).find("is not a power of two") != std::string::npos);
  GgufBytes arch;
  arch.header(0, 1).kv_u32("general.architecture", 1);
  CHECK(parse_error(arch).find("expected STRING") != std::string::npos);

  GgufBytes tokens;
  tokens.header(0, 1).key("tokenizer.ggml.tokens", kArr).u32(kI32).u64(1).i32(5);
  CHECK(parse_error(tokens) ==
        "key 'tokenizer.ggml.tokens' is an array of INT32, expected an array of STRING (at byte 24)");
  GgufBytes scores;
  scores.header(0, 1).key("tokenizer.ggml.scores", kArr).u32(kI32).u64(1).i32(5);
  CHECK(parse_error(scores).find("expected an array of FLOAT32") != std::string::npos);
  GgufBytes types;
  types.header(0, 1).key("tokenizer.ggml.token_type", kArr).u32(kF32v).u64(1).f32(1);
  CHECK(parse_error(types).find("expected an array of INT32") != std::string::npos);
  GgufBytes merges;
  merges.header(0, 1).key("tokenizer.ggml.merges", kArr).u32(kU32).u64(1).u32(5);
  CHECK(parse_error(merges).find("expected an array of STRING") != std::string::npos);
  GgufBytes merges_scalar;
  merges_scalar.header(0, 1).kv_str("tokenizer.ggml.merges", "a b");
  CHECK(parse_error(merges_scalar).find("has type STRING, expected ARRAY") != std::string::npos);

  GgufBytes mismatch;
  mismatch.header(0, 2).key("tokenizer.ggml.tokens", kArr).u32(kStr).u64(2).str("a").str("b");
  mismatch.key("tokenizer.ggml.scores", kArr).u32(kF32v).u64(1).f32(0);
  CHECK(parse_error(mismatch) == "key 'tokenizer.ggml.scores' has 1 elements but tokenizer.ggml.tokens has 2 (at byte 87)");
}

TEST_CASE("tensor info errors", "[gguf][validation]") {
  // Byte offsets: header 24 + the architecture kv (8+20 + 4 + 8+1 = 41) = 65 where tensor 0 starts.
  const size_t t0 = 65;
  {
    GgufBytes g = one_tensor(0, {});
    CHECK(parse_error(g) == "tensor 0 'w': n_dims 0 is not in 1..4 (at byte " + std::to_string(t0 + 9) + ")");
  }
  CHECK(parse_error(one_tensor(0, {1, 1, 1, 1, 1})).find("n_dims 5 is not in 1..4") != std::string::npos);
  CHECK(parse_error(one_tensor(0, {8, 0})) ==
        "tensor 0 'w': ne[1] is zero (at byte " + std::to_string(t0 + 9 + 4 + 8) + ")");
  CHECK(parse_error(one_tensor(0, {1ull << 32, 1ull << 32})).find("element count overflows at ne[1]") !=
        std::string::npos);
  CHECK(parse_error(one_tensor(0, {~0ull})).find("element count overflows at ne[0]") != std::string::npos);
  CHECK(parse_error(one_tensor(0, {8}, 4)) ==
        "tensor 0 'w': unknown ggml type 4 (at byte " + std::to_string(t0 + 9 + 4 + 8) + ")");
  CHECK(parse_error(one_tensor(0, {8}, 99)).find("unknown ggml type 99") != std::string::npos);
  CHECK(parse_error(one_tensor(0, {32}, kQ4_K)).find("ne[0] = 32 is not a multiple of the Q4_K block size 256") !=
        std::string::npos);
  CHECK(parse_error(one_tensor(16)) ==
        "tensor 0 'w': offset 16 is not aligned to 32 (at byte " + std::to_string(t0 + 9 + 4 + 8 + 4) + ")");
  CHECK(parse_error(one_tensor(64)).find("bytes [64, +32) extend past the end of the data section (64 bytes)") !=
        std::string::npos);
  CHECK(parse_error(one_tensor(~0ull << 5)).find("extend past the end") != std::string::npos);
  // Byte size overflow: F64 elements, 2^61 * 2 elements * 8 bytes.
  CHECK(parse_error(one_tensor(0, {1ull << 61, 2}, 28)).find("byte size overflows") != std::string::npos);

  GgufBytes long_name;
  long_name.header(1, 0).tensor(std::string(65, 'n'), {8}, kF32, 0).pad().zeros(32);
  CHECK(parse_error(long_name) == "tensor 0 name: length 65 exceeds the limit of 64 (at byte 24)");
  GgufBytes empty_name;
  empty_name.header(1, 0).tensor("", {8}, kF32, 0).pad().zeros(32);
  CHECK(parse_error(empty_name).find("tensor 0: empty name") != std::string::npos);

  GgufBytes dup;
  dup.header(2, 0).tensor("w", {8}, kF32, 0).tensor("w", {8}, kF32, 32).pad().zeros(64);
  CHECK(parse_error(dup).find("tensor 1 'w': duplicate tensor name") != std::string::npos);

  GgufBytes overlap;
  overlap.header(2, 0).tensor("a", {16}, kF32, 0).tensor("b", {8}, kF32, 32).pad().zeros(96);
  CHECK(parse_error(overlap) == "tensor 1 'b': bytes at offset 32 overlap tensor 0 'a' (offset 0, 64 bytes) (at byte 57)");
  GgufBytes no_overlap;  // same layout, touching but not overlapping
  no_overlap.header(2, 0).tensor("a", {16}, kF32, 0).tensor("b", {8}, kF32, 64).pad().zeros(96);
  CHECK(ok(no_overlap));

  GgufBytes no_data;  // tensor info present, data section missing
  no_data.header(1, 0).tensor("w", {8}, kF32, 0);
  CHECK(parse_error(no_data).find("data section: starts at") != std::string::npos);

  GgufBytes trunc_info;
  trunc_info.header(1, 0).str("w").u32(2).u64(8).u32(0);
  CHECK(parse_error(trunc_info).find("tensor 0 'w' ne[1]: file ends") != std::string::npos);

  // Names from the file are printed escaped.
  GgufBytes odd_name;
  odd_name.header(1, 0).tensor(std::string("a\nb", 3), {8}, 4, 0).pad().zeros(32);
  CHECK(parse_error(odd_name).find("tensor 0 'a\\x0ab': unknown ggml type 4") != std::string::npos);
}

TEST_CASE("general.alignment sets the data section alignment", "[gguf][validation]") {
  GgufBytes g;
  g.header(1, 1).kv_u32("general.alignment", 64).tensor("w", {8}, kF32, 0).pad(64).zeros(64);
  auto r = GgufFile::parse(g.b.data(), g.b.size());
  REQUIRE(r.ok());
  CHECK((*r)->alignment() == 64);
  CHECK((*r)->data_offset() % 64 == 0);
  CHECK((*r)->tensors()[0].file_offset == (*r)->data_offset());

  GgufBytes misaligned;  // offset 32 is fine for the default but not for 64
  misaligned.header(1, 1).kv_u32("general.alignment", 64).tensor("w", {8}, kF32, 32).pad(64).zeros(128);
  CHECK(parse_error(misaligned).find("offset 32 is not aligned to 64") != std::string::npos);
}
