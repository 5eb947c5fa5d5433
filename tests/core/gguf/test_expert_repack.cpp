// les repack: the trained fixture files and a synthetic model are repacked
// into the contiguous expert layout, verified expert by expert, and give
// bit-identical logits when loaded; the layout's ranges are one aligned read
// holding the original bytes; malformed inputs and unwritable outputs give
// clear errors.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/model/context.h"
#include "core/gguf/expert_layout.h"
#include "core/gguf/expert_repack.h"
#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "core/model/model.h"
#include "synth/synth_model.h"
#include "support/fixtures.h"

using namespace les;

namespace {

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Logits of every position of `tokens` (one decode, all_logits).
std::vector<float> all_logits(const std::string& path, const std::vector<int32_t>& tokens) {
  ModelParams mp;
  mp.n_threads = 2;
  auto m = Model::load(path, mp);
  REQUIRE(m.ok());
  ContextParams cp;
  cp.n_ctx = 64;
  auto ctx = Context::create(**m, cp);
  REQUIRE(ctx.ok());
  REQUIRE((*ctx)->decode(tokens, /*all_logits=*/true).ok());
  const auto l = (*ctx)->logits_all();
  std::vector<float> out(l.begin(), l.end());
  // A second, single-token decode (the decode path, not only prefill).
  const int32_t next = tokens[1];
  REQUIRE((*ctx)->decode(std::span<const int32_t>(&next, 1)).ok());
  const auto d = (*ctx)->logits();
  out.insert(out.end(), d.begin(), d.end());
  return out;
}

// Repacks `src`, checks the report, the layout and the ranges' bytes, and that
// logits on both files are bit-identical.
void check_repack(const std::string& src, const std::string& name) {
  const std::string out = test::temp_dir() + "/" + name + ".contiguous.gguf";
  auto rep = repack_experts(src, out);
  INFO(rep.status().to_string());
  REQUIRE(rep.ok());
  auto a = gguf::GgufFile::open(src);
  auto b = gguf::GgufFile::open(out);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  auto xa = ExpertLayout::from_file(**a);
  auto xb = ExpertLayout::from_file(**b);
  REQUIRE(xa.ok());
  REQUIRE(xb.ok());
  CHECK(xb->kind() == ExpertLayoutKind::contiguous);
  CHECK(rep->experts_verified == static_cast<uint64_t>(xa->n_moe_layers()) * static_cast<uint64_t>(xa->n_expert()));
  CHECK(rep->out_file_bytes == (*b)->file_size());
  CHECK(xb->n_expert() == xa->n_expert());
  CHECK((*b)->alignment() == 4096);

  const auto& t0 = (*a)->tensors().front();
  const uint8_t* pa = (*a)->tensor_data(t0).data() - t0.file_offset;
  const auto& u0 = (*b)->tensors().front();
  const uint8_t* pb = (*b)->tensor_data(u0).data() - u0.file_offset;
  for (int32_t l = 0; l < xb->n_layer(); ++l) {
    const LayerExpertInfo& li = xb->layer(l);
    REQUIRE(li.present == xa->layer(l).present);
    if (!li.present) continue;
    CHECK(li.blob_stride % 4096 == 0);
    CHECK(li.blob_stride >= li.expert_bytes);
    CHECK(li.blob_stride < li.expert_bytes + 4096);
    CHECK((*b)->find_tensor("blk." + std::to_string(l) + ".ffn_gate_exps.weight") == nullptr);
    for (int32_t e = 0; e < xb->n_expert(); ++e) {
      auto ra = xa->ranges(l, e);
      auto rb = xb->ranges(l, e);
      REQUIRE(ra.ok());
      REQUIRE(rb.ok());
      REQUIRE(rb->n_reads == 1);
      CHECK(rb->reads[0].offset % 4096 == 0);
      CHECK(rb->reads[0].length == li.expert_bytes);
      // The one read, laid out as gate | up | down, equals the three reads of the original.
      std::vector<uint8_t> want(li.expert_bytes);
      for (size_t k = 0; k < ra->n_reads; ++k)
        std::memcpy(want.data() + ra->read_dest_offset[k], pa + ra->reads[k].offset, ra->reads[k].length);
      REQUIRE(std::memcmp(want.data(), pb + rb->reads[0].offset, li.expert_bytes) == 0);
      // Padding after the blob is zero.
      for (uint64_t p = li.expert_bytes; p < li.blob_stride; p += 97) REQUIRE(pb[rb->reads[0].offset + p] == 0);
    }
  }
  CHECK(verify_repacked(src, out).ok());

  const std::vector<int32_t> tokens = {1, 17, 42, 5, 99, 23};
  const auto la = all_logits(src, tokens);
  const auto lb = all_logits(out, tokens);
  REQUIRE(la.size() == lb.size());
  CHECK(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)) == 0);
}

}  // namespace

TEST_CASE("repack: trained fixture files, bytes verified and logits bit-identical", "[expert_repack]") {
  for (const char* rel : {"trained/tiny-qwen3moe-F16.gguf", "trained/tiny-qwen3moe-Q4_K_M.gguf",
                          "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf"}) {
    LES_REQUIRE_FIXTURE(src, rel);
    INFO(rel);
    check_repack(src, std::filesystem::path(rel).stem().string());
  }
}

TEST_CASE("repack: a synthetic Q4_K model", "[expert_repack]") {
  auto preset = synth_preset("tiny");
  REQUIRE(preset.ok());
  SynthOptions so;
  so.type = GgmlType::Q4_K;
  so.n_threads = 2;
  const std::string src = test::temp_dir() + "/synth-tiny-q4k.gguf";
  REQUIRE(write_synth_model(*preset, so, src).ok());
  check_repack(src, "synth-tiny-q4k");
}

TEST_CASE("repack: verification finds a changed byte", "[expert_repack]") {
  LES_REQUIRE_FIXTURE(src, "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf");
  const std::string out = test::temp_dir() + "/tamper.gguf";
  REQUIRE(repack_experts(src, out, {.verify = false}).ok());
  auto bytes = read_file(out);
  auto b = gguf::GgufFile::parse(bytes.data(), bytes.size());
  REQUIRE(b.ok());
  auto x = ExpertLayout::from_file(**b);
  REQUIRE(x.ok());
  auto r = x->ranges(5, 17);
  REQUIRE(r.ok());
  bytes[r->down.offset + 10] ^= 0x40;
  write_file(out, bytes);
  auto v = verify_repacked(src, out);
  REQUIRE_FALSE(v.ok());
  CHECK(v.status().code() == StatusCode::internal);
  CHECK_THAT(v.status().message(), Catch::Contains("layer 5 expert 17: down matrix differs"));
}

TEST_CASE("repack: malformed inputs and bad outputs give clear errors", "[expert_repack]") {
  const std::string dir = test::temp_dir();
  SECTION("a file without experts") {
    gguf::GgufWriter w;
    REQUIRE(w.set_string("general.architecture", "llama").ok());
    REQUIRE(w.set_u32("llama.block_count", 1).ok());
    std::vector<float> x(64, 1.0f);
    REQUIRE(w.add_tensor("blk.0.ffn_up.weight", GgmlType::F32, std::vector<int64_t>{8, 8}, x.data(), 256).ok());
    REQUIRE(w.write_to_file(dir + "/dense.gguf").ok());
    auto r = repack_experts(dir + "/dense.gguf", dir + "/dense.out.gguf");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(r.status().message(), Catch::Contains("no routed expert tensors"));
    CHECK_FALSE(std::filesystem::exists(dir + "/dense.out.gguf"));
  }
  SECTION("a truncated file") {
    LES_REQUIRE_FIXTURE(src, "trained/tiny-qwen3moe-F16.gguf");
    auto bytes = read_file(src);
    bytes.resize(bytes.size() / 2);
    write_file(dir + "/truncated.gguf", bytes);
    auto r = repack_experts(dir + "/truncated.gguf", dir + "/truncated.out.gguf");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::format);
    CHECK_THAT(r.status().message(), Catch::Contains("tensor"));
    CHECK_FALSE(std::filesystem::exists(dir + "/truncated.out.gguf"));
  }
  SECTION("a missing input") {
    auto r = repack_experts(dir + "/does-not-exist.gguf", dir + "/x.gguf");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::io);
    CHECK_THAT(r.status().message(), Catch::Contains("does-not-exist.gguf"));
  }
  SECTION("an output path that cannot be written") {
    LES_REQUIRE_FIXTURE(src, "trained/tiny-qwen3moe-F16.gguf");
    auto r = repack_experts(src, dir + "/no/such/dir/out.gguf");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::io);
    CHECK_THAT(r.status().message(), Catch::Contains("no/such/dir/out.gguf"));
  }
  SECTION("the same path twice, and an already repacked input") {
    LES_REQUIRE_FIXTURE(src, "trained/tiny-qwen3moe-F16.gguf");
    auto r = repack_experts(src, src);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("same file"));
    REQUIRE(repack_experts(src, dir + "/once.gguf", {.verify = false}).ok());
    r = repack_experts(dir + "/once.gguf", dir + "/twice.gguf");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("already has the contiguous expert layout"));
  }
  SECTION("a repacked file whose layout keys are damaged does not load") {
    LES_REQUIRE_FIXTURE(src, "trained/tiny-qwen3moe-F16.gguf");
    REQUIRE(repack_experts(src, dir + "/keys.gguf", {.verify = false}).ok());
    auto f = gguf::GgufFile::open(dir + "/keys.gguf");
    REQUIRE(f.ok());
    // Rewrite with gate_type of layer 3 changed to Q8_0 (blob stride no longer matches).
    gguf::GgufWriter w;
    for (const auto& kv : (*f)->metadata()) {
      if (kv.key == kExpertLayoutGateTypeKey) {
        std::vector<int64_t> t(8, static_cast<int64_t>(GgmlType::F16));
        t[3] = static_cast<int64_t>(GgmlType::Q8_0);
        REQUIRE(w.set_array_ints(kv.key, gguf::ValueType::INT32, t).ok());
      } else {
        REQUIRE(w.set(kv.key, kv.value).ok());
      }
    }
    for (const auto& t : (*f)->tensors()) {
      const auto d = (*f)->tensor_data(t);
      REQUIRE(w.add_tensor(t.name, t.type, std::span<const int64_t>(t.ne.data(), t.n_dims), d.data(), d.size()).ok());
    }
    REQUIRE(w.write_to_file(dir + "/keys-bad.gguf").ok());
    auto m = Model::load(dir + "/keys-bad.gguf", {});
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().code() == StatusCode::format);
    CHECK_THAT(m.status().message(), Catch::Contains("blk.3.ffn_exps_packed.weight"));
  }
}

TEST_CASE("repack: damaged layout metadata never crashes, and accepted layouts stay inside the file",
          "[expert_repack]") {
  LES_REQUIRE_FIXTURE(src, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  const std::string out = test::temp_dir() + "/mutate.gguf";
  REQUIRE(repack_experts(src, out, {.verify = false}).ok());
  const std::vector<uint8_t> orig = read_file(out);
  // Byte offsets of every les.expert_layout* key in the header.
  const std::string needle = kExpertLayoutKey;
  std::vector<size_t> starts;
  for (size_t p = 0; p + needle.size() < 200000 && p + needle.size() < orig.size(); ++p)
    if (std::memcmp(orig.data() + p, needle.data(), needle.size()) == 0) starts.push_back(p);
  REQUIRE(starts.size() == 8);
  size_t n_tried = 0, n_accepted = 0;
  for (size_t s : starts) {
    // The key's last bytes, its type and its value (up to 48 bytes after the name).
    for (size_t p = s + needle.size(); p < s + needle.size() + 64 && p < orig.size(); ++p) {
      for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
        std::vector<uint8_t> bytes = orig;
        bytes[p] ^= flip;
        auto f = gguf::GgufFile::parse(bytes.data(), bytes.size());
        if (!f.ok()) continue;
        ++n_tried;
        auto x = ExpertLayout::from_file(**f);
        if (!x.ok()) {
          CHECK_FALSE(x.status().message().empty());
          continue;
        }
        ++n_accepted;
        for (int32_t l = 0; l < x->n_layer(); ++l) {
          if (!x->layer(l).present) continue;
          for (int32_t e : {0, x->n_expert() - 1}) {
            auto r = x->ranges(l, e);
            REQUIRE(r.ok());
            for (const FileRange& fr : r->read_ranges()) REQUIRE(fr.end() <= bytes.size());
          }
        }
        if (n_tried % 16 == 0) {
          auto m = Model::from_gguf(std::move(f).value(), {});
          if (!m.ok()) CHECK_FALSE(m.status().message().empty());
        }
      }
    }
  }
  CHECK(n_tried > 100);
  CHECK(n_accepted > 0);  // e.g. a flipped letter in a key name that is then ignored
}
