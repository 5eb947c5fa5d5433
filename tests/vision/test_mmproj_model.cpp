// The mmproj loader on the fixture (hyper-parameters, tensors) and on damaged
// copies of it written with LES's GGUF writer: another projector type, a text
// model of another width, a missing key or tensor, a wrong shape, a truncated
// file, random damage to the metadata. Each is refused with a status naming
// what is wrong, never a crash.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "support/fixtures.h"
#include "support/gguf_copy.h"
#include "vision/mmproj_model.h"
#include "vision/vision_encoder.h"

using les::StatusCode;
using les::vision::MmprojModel;

namespace {

const char* kMmproj = "multimodal/mmproj-minicpmv4_6-tiny-F16.gguf";

// A copy of `src` at temp_dir()/name without the key `drop_key` and the
// tensor `drop_tensor` ("" drops nothing), and with tensor `shrink` (if any)
// written with its last dimension halved.
std::string damaged_copy(const std::string& src, const std::string& name, const std::string& drop_key,
                         const std::string& drop_tensor, const std::string& shrink = "",
                         const std::function<std::string(const std::string&)>& rename = {}) {
  const std::string dst = les::test::temp_dir() + "/" + name;
  auto in = les::gguf::GgufFile::open(src);
  REQUIRE(in.ok());
  les::gguf::GgufWriter w;
  REQUIRE(w.set_alignment((*in)->alignment()).ok());
  for (const auto& kv : (*in)->metadata())
    if (kv.key != drop_key && kv.key != "general.alignment") REQUIRE(w.set(kv.key, kv.value).ok());
  for (const auto& t : (*in)->tensors()) {
    if (t.name == drop_tensor) continue;
    const auto data = (*in)->tensor_data(t);
    std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
    size_t bytes = data.size();
    if (t.name == shrink) {
      ne.back() /= 2;
      bytes /= 2;
    }
    const std::string out_name = rename ? rename(t.name) : t.name;
    REQUIRE(w.add_tensor(out_name, t.type, std::span<const int64_t>(ne), data.data(), bytes).ok());
  }
  REQUIRE(w.write_to_file(dst).ok());
  return dst;
}

bool mentions(const les::Status& st, const std::string& what) { return st.message().find(what) != std::string::npos; }

}  // namespace

TEST_CASE("mmproj loader reads the fixture's hyper-parameters and tensors", "[vision]") {
  LES_REQUIRE_FIXTURE(path, kMmproj);
  auto m = MmprojModel::load(path, 256);
  REQUIRE(m.ok());
  const auto& h = (*m)->hparams();
  CHECK(h.image_size == 224);
  CHECK(h.patch_size == 14);
  CHECK(h.n_embd == 64);
  CHECK(h.n_ff == 128);
  CHECK(h.n_layer == 3);
  CHECK(h.n_head == 4);
  CHECK(h.head_dim() == 16);
  CHECK(h.projection_dim == 256);
  CHECK(h.eps == Approx(1e-6f));
  CHECK(h.image_mean[0] == 0.5f);
  CHECK(h.image_std[2] == 0.5f);
  CHECK(h.insert_layer_id == 1);
  CHECK(h.n_merge == 4);
  CHECK(h.n_ff_ds == 192);
  CHECK(h.n_ff_mm == 384);
  CHECK(h.n_embd_out == 256);
  const auto& w = (*m)->weights();
  CHECK(w.patch_w.cols() == 3 * 14 * 14);
  CHECK(w.patch_w.rows() == 64);
  CHECK(w.layers.size() == 3);
  CHECK(w.layers[2].q_b.present());
  CHECK_FALSE(w.layers[0].ls1.present());
  CHECK_FALSE(w.pre_ln_w.present());
  CHECK(w.post_ln_w.present());
  CHECK(w.proj.down_w.rows() == 256);
}

TEST_CASE("mmproj loader refuses another projector type by name", "[vision]") {
  LES_REQUIRE_FIXTURE(path, kMmproj);
  const std::string dst = les::test::temp_dir() + "/resampler.gguf";
  les::test::copy_gguf_with_strings(path, dst, {{"clip.projector_type", "resampler"}});
  auto m = MmprojModel::load(dst);
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == StatusCode::unsupported);
  CHECK(mentions(m.status(), "'resampler'"));
  CHECK(mentions(m.status(), "minicpmv4_6"));

  const std::string llama = les::test::temp_dir() + "/not-clip.gguf";
  les::test::copy_gguf_with_strings(path, llama, {{"general.architecture", "llama"}});
  auto l = MmprojModel::load(llama);
  REQUIRE_FALSE(l.ok());
  CHECK(mentions(l.status(), "'llama'"));
}

TEST_CASE("mmproj loader refuses a text model of another width", "[vision]") {
  LES_REQUIRE_FIXTURE(path, kMmproj);
  auto m = MmprojModel::load(path, 512);
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == StatusCode::invalid_argument);
  CHECK(mentions(m.status(), "256"));
  CHECK(mentions(m.status(), "512"));
}

TEST_CASE("mmproj loader names a missing key, a missing tensor and a wrong shape", "[vision]") {
  LES_REQUIRE_FIXTURE(path, kMmproj);
  auto k = MmprojModel::load(damaged_copy(path, "no-key.gguf", "clip.vision.block_count", ""));
  REQUIRE_FALSE(k.ok());
  CHECK(k.status().code() == StatusCode::format);
  CHECK(mentions(k.status(), "clip.vision.block_count"));

  auto t = MmprojModel::load(damaged_copy(path, "no-tensor.gguf", "", "v.blk.1.attn_k.weight"));
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == StatusCode::format);
  CHECK(mentions(t.status(), "v.blk.1.attn_k.weight"));

  auto s = MmprojModel::load(damaged_copy(path, "shape.gguf", "", "", "v.vit_merger.ds_ln.weight"));
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == StatusCode::format);
  CHECK(mentions(s.status(), "v.vit_merger.ds_ln.weight"));
  CHECK(mentions(s.status(), "[128]"));

  auto p = MmprojModel::load(damaged_copy(path, "patch.gguf", "", "", "v.patch_embd.weight"));
  REQUIRE_FALSE(p.ok());
  CHECK(mentions(p.status(), "v.patch_embd.weight"));

  // Optional tensors may be absent: the loader accepts a file without post_ln.
  auto o = MmprojModel::load(damaged_copy(path, "no-post-ln.gguf", "", "v.post_ln.bias"));
  REQUIRE(o.ok());
  CHECK_FALSE((*o)->weights().post_ln_b.present());
}

TEST_CASE("mmproj loader refuses truncated files", "[vision]") {
  LES_REQUIRE_FIXTURE(path, kMmproj);
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 4096);
  for (size_t keep : {size_t{0}, size_t{3}, size_t{200}, size_t{4000}, bytes.size() / 2, bytes.size() - 1}) {
    const std::string dst = les::test::temp_dir() + "/trunc-" + std::to_string(keep) + ".gguf";
    std::ofstream(dst, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(keep));
    auto m = MmprojModel::load(dst);
    INFO("kept " << keep << " bytes");
    REQUIRE_FALSE(m.ok());
    CHECK(mentions(m.status(), dst));
  }
  auto missing = MmprojModel::load(les::test::temp_dir() + "/does-not-exist.gguf");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::io);
}

TEST_CASE("mmproj loader reads FFN matrices named the other way round, as llama.cpp does", "[vision]") {
  LES_REQUIRE_FIXTURE(path, kMmproj);
  // Block 1's ffn_up.* are written as ffn_down.* and the other way round.
  auto swap = [](const std::string& n) {
    const std::string up = "v.blk.1.ffn_up.", down = "v.blk.1.ffn_down.";
    if (n.rfind(up, 0) == 0) return down + n.substr(up.size());
    if (n.rfind(down, 0) == 0) return up + n.substr(down.size());
    return n;
  };
  auto a = MmprojModel::load(path);
  auto b = MmprojModel::load(damaged_copy(path, "swapped-ffn.gguf", "", "", "", swap));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  const auto& la = (*a)->weights().layers[1];
  const auto& lb = (*b)->weights().layers[1];
  REQUIRE(lb.up_w.rows() == 128);
  REQUIRE(lb.down_w.rows() == 64);
  CHECK(std::memcmp(la.up_w.data, lb.up_w.data, la.up_w.slab_bytes()) == 0);
  CHECK(std::memcmp(la.down_w.data, lb.down_w.data, la.down_w.slab_bytes()) == 0);
  CHECK(std::memcmp(la.up_b.data, lb.up_b.data, 128 * sizeof(float)) == 0);
  CHECK(std::memcmp(la.down_b.data, lb.down_b.data, 64 * sizeof(float)) == 0);
}

TEST_CASE("mmproj loader survives damaged metadata bytes", "[vision]") {
  LES_REQUIRE_FIXTURE(path, kMmproj);
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto f = les::gguf::GgufFile::open(path);
  REQUIRE(f.ok());
  const size_t header = static_cast<size_t>((*f)->data_offset());  // keys and tensor infos
  REQUIRE(header < bytes.size());
  std::mt19937 rng(19);
  int refused = 0, loaded = 0;
  for (int i = 0; i < 150; ++i) {
    std::vector<char> b = bytes;
    for (int k = 0; k < 1 + i % 3; ++k) b[rng() % header] = static_cast<char>(rng());
    const std::string dst = les::test::temp_dir() + "/mutated.gguf";
    std::ofstream(dst, std::ios::binary | std::ios::trunc).write(b.data(), static_cast<std::streamsize>(b.size()));
    auto m = MmprojModel::load(dst);
    if (!m.ok()) {
      ++refused;
      CHECK_FALSE(m.status().message().empty());
      continue;
    }
    ++loaded;  // a harmless byte (a string's content, say): the encoder must still run or refuse
    les::vision::VisionEncoder enc(**m, nullptr);
    std::vector<float> img(3 * 56 * 56, 0.1f), out;
    const les::Status st = enc.encode(img.data(), 56, 56, out);
    if (st.ok()) CHECK(out.size() == static_cast<size_t>((*m)->hparams().n_embd_out));
  }
  CHECK(refused > 0);
  INFO("loaded " << loaded);
}
