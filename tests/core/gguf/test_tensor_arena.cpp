// TensorArena (core/gguf/tensor_arena.h): the selected tensors' bytes read
// into LES's memory equal the file's, each 64-byte aligned; a file that
// changed between parsing and reading (truncated while the model loads) is an
// I/O error naming the file and a tensor it lost, never a signal.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/tensor_arena.h"
#include "support/fixtures.h"

namespace {

namespace fs = std::filesystem;
using les::gguf::GgufFile;
using les::gguf::TensorArena;
using les::gguf::TensorInfo;

constexpr const char* kModel = "trained/tiny-qwen3moe-F16.gguf";

bool dense(const TensorInfo& t) { return !t.name.ends_with("_exps.weight"); }

}  // namespace

TEST_CASE("TensorArena holds the selected tensors' bytes, 64-byte aligned", "[gguf][arena]") {
  LES_REQUIRE_FIXTURE(path, kModel);
  auto file = GgufFile::open(path);  // mapped: the reference bytes
  REQUIRE(file.ok());
  auto arena = TensorArena::read(**file, dense);
  REQUIRE(arena.ok());
  size_t n_dense = 0, n_bytes = 0;
  for (const TensorInfo& t : (*file)->tensors()) {
    INFO(t.name);
    const auto got = arena->find(t);
    if (!dense(t)) {
      CHECK(got.empty());
      continue;
    }
    ++n_dense;
    n_bytes += t.n_bytes;
    REQUIRE(got.size() == t.n_bytes);
    CHECK(reinterpret_cast<uintptr_t>(got.data()) % 64 == 0);
    const auto want = (*file)->tensor_data(t);
    CHECK(std::memcmp(got.data(), want.data(), want.size()) == 0);
  }
  CHECK(n_dense > 0);
  CHECK(n_dense < (*file)->tensors().size());  // the fixture has routed experts, left out
  CHECK(arena->n_tensors() == n_dense);
  CHECK(arena->n_bytes() >= n_bytes);
  CHECK(arena->n_bytes() < n_bytes + 64 * n_dense);
  CHECK_FALSE(arena->locked());
}

TEST_CASE("TensorArena: a file truncated after parsing is an I/O error naming the file and a lost tensor",
          "[gguf][arena]") {
  LES_REQUIRE_FIXTURE(fixture, kModel);
  const std::string path = les::test::temp_dir() + "/arena-truncated.gguf";
  fs::copy_file(fixture, path, fs::copy_options::overwrite_existing);
  auto file = GgufFile::open(path, les::gguf::ReadOptions{.use_mmap = false});
  REQUIRE(file.ok());
  const uint64_t size = (*file)->file_size();
  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(size / 2)) == 0);  // changed while the model loads
  auto arena = TensorArena::read(**file, [](const TensorInfo&) { return true; });
  REQUIRE_FALSE(arena.ok());
  const std::string msg = arena.status().message();
  INFO(msg);
  CHECK(arena.status().code() == les::StatusCode::io);
  CHECK(msg.find(path) != std::string::npos);
  CHECK(msg.find("changed while loading") != std::string::npos);
  CHECK(msg.find("tensor '") != std::string::npos);
  CHECK(msg.find(std::to_string(size / 2) + " bytes") != std::string::npos);
  fs::remove(path);
}

TEST_CASE("TensorArena: a file parsed from memory has no path to read from", "[gguf][arena]") {
  LES_REQUIRE_FIXTURE(path, kModel);
  auto mapped = GgufFile::open(path);
  REQUIRE(mapped.ok());
  // Only the header is parsed from the buffer; its tensors are never read.
  const auto first = (*mapped)->tensor_data((*mapped)->tensors().front());
  auto file = GgufFile::parse(first.data() - (*mapped)->tensors().front().file_offset, (*mapped)->file_size());
  REQUIRE(file.ok());
  auto arena = TensorArena::read(**file, dense);
  REQUIRE_FALSE(arena.ok());
  CHECK(arena.status().code() == les::StatusCode::invalid_argument);
}
