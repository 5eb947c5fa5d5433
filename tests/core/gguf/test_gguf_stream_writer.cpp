// GgufStreamWriter: the same bytes as the in-memory GgufWriter for the same
// keys and tensors (whole tensors, row ranges in shuffled order, several
// threads, alignments 32 and 4096, a fixture file re-streamed), and clear
// errors for bad use.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_stream_writer.h"
#include "core/gguf/gguf_writer.h"
#include "support/fixtures.h"

using namespace les;
using les::gguf::GgufStreamWriter;
using les::gguf::GgufWriter;

namespace {

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Spec {
  std::string name;
  GgmlType type;
  std::vector<int64_t> ne;
  std::vector<uint8_t> data;
};

std::vector<Spec> random_tensors(uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Spec> v = {{"token_embd.weight", GgmlType::Q4_K, {512, 33}, {}},
                         {"a.norm", GgmlType::F32, {7}, {}},
                         {"blk.0.ffn_down_exps.weight", GgmlType::Q3_K, {768, 16, 5}, {}},
                         {"blk.0.x", GgmlType::F16, {3, 5, 2, 2}, {}},
                         {"blk.0.q6", GgmlType::Q6_K, {256, 9}, {}},
                         {"raw", GgmlType::I8, {4097, 3}, {}}};
  for (Spec& s : v) {
    const uint64_t n = *gguf::checked_tensor_bytes(s.name, s.type, s.ne);
    s.data.resize(n);
    for (auto& b : s.data) b = static_cast<uint8_t>(rng());
  }
  return v;
}

void set_keys(GgufWriter& w, uint64_t alignment) {
  REQUIRE(w.set_string("general.architecture", "qwen3moe").ok());
  REQUIRE(w.set_u32("qwen3moe.block_count", 1).ok());
  REQUIRE(w.set_array_strings("tokenizer.ggml.tokens", {"a", "b", "c"}).ok());
  if (alignment != 32) REQUIRE(w.set_alignment(alignment).ok());
}

std::vector<uint8_t> in_memory(const std::vector<Spec>& specs, uint64_t alignment) {
  GgufWriter w;
  set_keys(w, alignment);
  for (const Spec& s : specs) REQUIRE(w.add_tensor(s.name, s.type, s.ne, s.data.data(), s.data.size()).ok());
  return w.write_to_memory();
}

}  // namespace

TEST_CASE("GgufStreamWriter: whole tensors give GgufWriter's bytes", "[gguf_stream_writer]") {
  for (uint64_t alignment : {uint64_t{32}, uint64_t{4096}}) {
    INFO("alignment " << alignment);
    const auto specs = random_tensors(7);
    const std::string path = test::temp_dir() + "/stream_whole_" + std::to_string(alignment) + ".gguf";
    GgufStreamWriter w;
    set_keys(w.metadata(), alignment);
    for (const Spec& s : specs) REQUIRE(w.declare_tensor(s.name, s.type, s.ne).ok());
    REQUIRE(w.begin(path).ok());
    // Reverse order: positioned writes do not depend on order.
    for (auto it = specs.rbegin(); it != specs.rend(); ++it) REQUIRE(w.write_tensor_data(it->name, it->data).ok());
    REQUIRE(w.finish().ok());
    const auto got = read_file(path);
    const auto want = in_memory(specs, alignment);
    CHECK(got.size() == w.file_size());
    REQUIRE(got.size() == want.size());
    CHECK(got == want);
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
    auto f = gguf::GgufFile::open(path);
    REQUIRE(f.ok());
    CHECK(*w.tensor_file_offset("raw") == (*f)->find_tensor("raw")->file_offset);
  }
}

TEST_CASE("GgufStreamWriter: finish's check sees the complete temporary file before the rename", "[gguf_stream_writer]") {
  const auto specs = random_tensors(11);
  for (const bool pass : {true, false}) {
    INFO("check passes: " << pass);
    const std::string path = test::temp_dir() + "/stream_checked_" + std::to_string(pass) + ".gguf";
    GgufStreamWriter w;
    set_keys(w.metadata(), 32);
    for (const Spec& s : specs) REQUIRE(w.declare_tensor(s.name, s.type, s.ne).ok());
    REQUIRE(w.begin(path).ok());
    for (const Spec& s : specs) REQUIRE(w.write_tensor_data(s.name, s.data).ok());
    bool called = false;
    const Status st = w.finish([&](const std::string& tmp) -> Status {
      called = true;
      CHECK(tmp == path + ".tmp");
      CHECK_FALSE(std::filesystem::exists(path));  // the final name only after the check
      CHECK(read_file(tmp) == in_memory(specs, 32));
      return pass ? Status() : internal_error("check failed");
    });
    CHECK(called);
    CHECK(st.ok() == pass);
    CHECK(std::filesystem::exists(path) == pass);
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));  // renamed, or removed with the failed check
    if (!pass) CHECK_THAT(st.message(), Catch::Contains("check failed"));
  }
}

TEST_CASE("GgufStreamWriter: shuffled row ranges from several threads", "[gguf_stream_writer]") {
  const auto specs = random_tensors(11);
  const std::string path = test::temp_dir() + "/stream_rows.gguf";
  GgufStreamWriter w;
  set_keys(w.metadata(), 32);
  for (const Spec& s : specs) REQUIRE(w.declare_tensor(s.name, s.type, s.ne).ok());
  REQUIRE(w.begin(path).ok());
  struct Piece {
    const Spec* s;
    int64_t r0, r1;
    size_t row_bytes;
  };
  std::vector<Piece> pieces;
  std::mt19937 rng(3);
  for (const Spec& s : specs) {
    int64_t rows = 1;
    for (size_t d = 1; d < s.ne.size(); ++d) rows *= s.ne[d];
    const size_t rb = s.data.size() / static_cast<size_t>(rows);
    for (int64_t r = 0; r < rows;) {
      const int64_t n = std::min<int64_t>(rows - r, 1 + static_cast<int64_t>(rng() % 4));
      pieces.push_back({&s, r, r + n, rb});
      r += n;
    }
  }
  std::shuffle(pieces.begin(), pieces.end(), rng);
  std::vector<std::thread> th;
  std::atomic<int> failures{0};
  for (int k = 0; k < 3; ++k) {
    th.emplace_back([&, k] {
      for (size_t i = static_cast<size_t>(k); i < pieces.size(); i += 3) {
        const Piece& p = pieces[i];
        const std::span<const uint8_t> bytes(p.s->data.data() + static_cast<size_t>(p.r0) * p.row_bytes,
                                             static_cast<size_t>(p.r1 - p.r0) * p.row_bytes);
        if (!w.write_rows(p.s->name, p.r0, bytes).ok()) ++failures;
      }
    });
  }
  for (auto& t : th) t.join();
  CHECK(failures == 0);
  REQUIRE(w.finish().ok());
  CHECK(read_file(path) == in_memory(specs, 32));
}

TEST_CASE("GgufStreamWriter: re-streaming a fixture file reproduces it byte for byte", "[gguf_stream_writer]") {
  LES_REQUIRE_FIXTURE(src, "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf");
  auto f = gguf::GgufFile::open(src);
  REQUIRE(f.ok());
  GgufStreamWriter w;
  for (const auto& kv : (*f)->metadata()) REQUIRE(w.metadata().set(kv.key, kv.value).ok());
  for (const auto& t : (*f)->tensors())
    REQUIRE(w.declare_tensor(t.name, t.type, std::span<const int64_t>(t.ne.data(), t.n_dims)).ok());
  const std::string path = test::temp_dir() + "/restream.gguf";
  REQUIRE(w.begin(path).ok());
  for (const auto& t : (*f)->tensors()) REQUIRE(w.write_tensor_data(t.name, (*f)->tensor_data(t)).ok());
  REQUIRE(w.finish().ok());
  CHECK(read_file(path) == read_file(src));
}

TEST_CASE("GgufStreamWriter: bad use gives clear errors", "[gguf_stream_writer]") {
  const std::string dir = test::temp_dir();
  std::vector<uint8_t> row(144 * 2);  // two Q4_K rows of 256
  SECTION("declaration errors") {
    GgufStreamWriter w;
    REQUIRE(w.declare_tensor("t", GgmlType::Q4_K, {256, 4}).ok());
    auto s = w.declare_tensor("t", GgmlType::F32, {4});
    CHECK_THAT(s.message(), Catch::Contains("duplicate"));
    s = w.declare_tensor("u", GgmlType::Q4_K, {100, 4});
    CHECK(s.code() == StatusCode::invalid_argument);
    CHECK_THAT(s.message(), Catch::Contains("block size"));
    CHECK(w.write_rows("t", 0, row).code() == StatusCode::invalid_argument);  // before begin()
  }
  SECTION("write errors and an incomplete file") {
    const std::string path = dir + "/incomplete.gguf";
    GgufStreamWriter w;
    REQUIRE(w.declare_tensor("t", GgmlType::Q4_K, {256, 4}).ok());
    REQUIRE(w.declare_tensor("n", GgmlType::F32, {4}).ok());
    REQUIRE(w.begin(path).ok());
    CHECK_THAT(w.write_rows("x", 0, row).message(), Catch::Contains("'x' was not declared"));
    CHECK_THAT(w.write_rows("t", 3, row).message(), Catch::Contains("past its 4 rows"));
    CHECK_THAT(w.write_rows("t", 0, std::span<const uint8_t>(row.data(), 100)).message(),
               Catch::Contains("whole rows"));
    REQUIRE(w.write_rows("t", 1, row).ok());
    CHECK_THAT(w.write_rows("t", 2, row).message(), Catch::Contains("overlap"));
    CHECK_THAT(w.write_rows("t", 0, row).message(), Catch::Contains("overlap"));
    CHECK_THAT(w.write_tensor_data("n", row).message(), Catch::Contains("needs 16"));
    auto s = w.finish();
    CHECK(s.code() == StatusCode::invalid_argument);
    CHECK_THAT(s.message(), Catch::Contains("tensor 't': only 288 of its 576 bytes"));
    CHECK_FALSE(std::filesystem::exists(path));
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  }
  SECTION("unwritable path") {
    GgufStreamWriter w;
    REQUIRE(w.declare_tensor("n", GgmlType::F32, {4}).ok());
    auto s = w.begin(dir + "/no/such/dir/x.gguf");
    CHECK(s.code() == StatusCode::io);
    CHECK_THAT(s.message(), Catch::Contains("no/such/dir/x.gguf.tmp"));
  }
  SECTION("abandoned writer removes its temporary file") {
    const std::string path = dir + "/abandoned.gguf";
    {
      GgufStreamWriter w;
      REQUIRE(w.declare_tensor("n", GgmlType::F32, {4}).ok());
      REQUIRE(w.begin(path).ok());
      CHECK(std::filesystem::exists(path + ".tmp"));
    }
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
    CHECK_FALSE(std::filesystem::exists(path));
  }
}
