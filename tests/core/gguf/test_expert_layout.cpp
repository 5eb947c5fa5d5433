// ExpertLayout on original (per_tensor) files: the ranges of every expert are
// the slabs of the three 3-D tensors, checked against the bytes in the
// mapping; bad indices and inconsistent tensors give clear errors.
// (The contiguous layout is tested with the repacker, test_expert_repack.cpp.)
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/gguf/expert_layout.h"
#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "support/fixtures.h"

using namespace les;

namespace {

// Bytes [r.offset, r.end()) of the mapped file.
std::span<const uint8_t> file_bytes(const gguf::GgufFile& f, const FileRange& r) {
  const gguf::TensorInfo& t0 = f.tensors().front();
  const uint8_t* base = f.tensor_data(t0).data() - t0.file_offset;
  return {base + r.offset, r.length};
}

}  // namespace

TEST_CASE("ExpertLayout per_tensor: ranges are the slabs of the 3-D tensors", "[expert_layout]") {
  for (const char* rel : {"trained/tiny-qwen3moe-F16.gguf", "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf",
                          "trained/tiny-qwen3moe-Q4_K_M.gguf"}) {
    LES_REQUIRE_FIXTURE(path, rel);
    INFO(rel);
    auto f = gguf::GgufFile::open(path);
    REQUIRE(f.ok());
    auto x = ExpertLayout::from_file(**f);
    REQUIRE(x.ok());
    CHECK(x->kind() == ExpertLayoutKind::per_tensor);
    CHECK(x->n_layer() == 8);
    CHECK(x->n_moe_layers() == 8);
    CHECK(x->n_expert() == 32);
    for (int32_t l = 0; l < x->n_layer(); ++l) {
      const LayerExpertInfo& li = x->layer(l);
      REQUIRE(li.present);
      CHECK(li.blob_stride == 0);
      CHECK(li.gate.cols == li.down.rows);
      CHECK(li.gate.rows == li.down.cols);
      const gguf::TensorInfo* g = (*f)->find_tensor("blk." + std::to_string(l) + ".ffn_gate_exps.weight");
      const gguf::TensorInfo* d = (*f)->find_tensor("blk." + std::to_string(l) + ".ffn_down_exps.weight");
      REQUIRE(g);
      REQUIRE(d);
      CHECK(li.gate.type == g->type);
      CHECK(li.down.type == d->type);
      CHECK(li.gate.bytes * 32 == g->n_bytes);
      for (int32_t e : {0, 7, 31}) {
        auto r = x->ranges(l, e);
        REQUIRE(r.ok());
        REQUIRE(r->n_reads == 3);
        CHECK(r->reads[0].offset == r->gate.offset);
        CHECK(r->read_dest_offset[2] == li.gate.bytes + li.up.bytes);
        const auto want_g = (*f)->tensor_data(*g).subspan(static_cast<size_t>(e) * li.gate.bytes, li.gate.bytes);
        const auto want_d = (*f)->tensor_data(*d).subspan(static_cast<size_t>(e) * li.down.bytes, li.down.bytes);
        const auto got_g = file_bytes(**f, r->gate), got_d = file_bytes(**f, r->down);
        CHECK(got_g.data() == want_g.data());
        CHECK(got_d.data() == want_d.data());
        CHECK(r->gate.length == li.gate.bytes);
      }
    }
  }
}

TEST_CASE("ExpertLayout: out-of-range layer / expert are invalid_argument", "[expert_layout]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  auto f = gguf::GgufFile::open(path);
  REQUIRE(f.ok());
  auto x = ExpertLayout::from_file(**f);
  REQUIRE(x.ok());
  for (auto [l, e] : std::vector<std::pair<int, int>>{{-1, 0}, {8, 0}, {0, -1}, {0, 32}}) {
    auto r = x->ranges(l, e);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(r.status().message(), Catch::Contains("out of range"));
  }
}

namespace {

// A GGUF with 2 blocks; `drop` names an expert tensor to omit, `down_ne0` the down tensor's ne0.
std::vector<uint8_t> expert_file(const std::string& drop, int64_t down_ne0, const std::string& layout = "") {
  gguf::GgufWriter w;
  REQUIRE(w.set_string("general.architecture", "qwen3moe").ok());
  REQUIRE(w.set_u32("qwen3moe.block_count", 2).ok());
  if (!layout.empty()) REQUIRE(w.set_string(kExpertLayoutKey, layout).ok());
  const int64_t E = 32, F = 16, X = 4;
  std::vector<float> buf(static_cast<size_t>(E * F * X), 0.5f);
  auto add = [&](const std::string& name, std::vector<int64_t> ne) {
    if (name == drop) return;
    REQUIRE(w.add_tensor(name, GgmlType::F32, ne, buf.data(), static_cast<size_t>(ne[0] * ne[1] * ne[2]) * 4).ok());
  };
  add("blk.1.ffn_gate_exps.weight", {E, F, X});
  add("blk.1.ffn_up_exps.weight", {E, F, X});
  add("blk.1.ffn_down_exps.weight", {down_ne0, E, X});
  return w.write_to_memory();
}

}  // namespace

TEST_CASE("ExpertLayout: dense layers, incomplete or inconsistent expert tensors", "[expert_layout]") {
  {
    const auto bytes = expert_file("", 16);
    auto f = gguf::GgufFile::parse(bytes.data(), bytes.size());
    REQUIRE(f.ok());
    auto x = ExpertLayout::from_file(**f);
    REQUIRE(x.ok());
    CHECK_FALSE(x->layer(0).present);
    CHECK(x->layer(1).present);
    CHECK(x->n_moe_layers() == 1);
    auto r = x->ranges(0, 0);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("no routed experts"));
    CHECK(x->layer(1).down.bytes == 16 * 32 * 4);
  }
  {
    const auto bytes = expert_file("blk.1.ffn_up_exps.weight", 16);
    auto f = gguf::GgufFile::parse(bytes.data(), bytes.size());
    REQUIRE(f.ok());
    auto x = ExpertLayout::from_file(**f);
    REQUIRE_FALSE(x.ok());
    CHECK(x.status().code() == StatusCode::format);
    CHECK_THAT(x.status().message(), Catch::Contains("blk.1.ffn_up_exps.weight"));
  }
  {
    const auto bytes = expert_file("", 8);
    auto f = gguf::GgufFile::parse(bytes.data(), bytes.size());
    REQUIRE(f.ok());
    auto x = ExpertLayout::from_file(**f);
    REQUIRE_FALSE(x.ok());
    CHECK_THAT(x.status().message(), Catch::Contains("shapes disagree"));
  }
  {
    const auto bytes = expert_file("", 16, "striped");
    auto f = gguf::GgufFile::parse(bytes.data(), bytes.size());
    REQUIRE(f.ok());
    auto x = ExpertLayout::from_file(**f);
    REQUIRE_FALSE(x.ok());
    CHECK(x.status().code() == StatusCode::unsupported);
    CHECK_THAT(x.status().message(), Catch::Contains("striped"));
  }
  {
    // "contiguous" without its keys.
    const auto bytes = expert_file("", 16, kExpertLayoutContiguous);
    auto f = gguf::GgufFile::parse(bytes.data(), bytes.size());
    REQUIRE(f.ok());
    auto x = ExpertLayout::from_file(**f);
    REQUIRE_FALSE(x.ok());
    CHECK(x.status().code() == StatusCode::format);
    CHECK_THAT(x.status().message(), Catch::Contains(kExpertLayoutVersionKey));
  }
}
