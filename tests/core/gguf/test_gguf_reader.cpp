// GgufFile against the llama.cpp fixtures: every GGUF opens, and known facts
// (from shared/fixtures/trained/README.md) read back.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "support/fixtures.h"

using les::GgmlType;
using les::gguf::GgufFile;
using les::gguf::ValueType;

namespace {

std::vector<std::string> fixture_ggufs(const std::string& subdir) {
  std::vector<std::string> out;
  const std::string dir = les::test::fixture_path(subdir);
  if (dir.empty()) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".gguf") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("every fixture GGUF opens and its tensors lie inside the file", "[gguf]") {
  size_t n_files = 0;
  for (const char* sub : {"trained", "synthetic", "tokenizer"}) {
    for (const std::string& path : fixture_ggufs(sub)) {
      INFO(path);
      auto f = GgufFile::open(path);
      REQUIRE(f.ok());
      const GgufFile& g = **f;
      CHECK((g.version() == 2 || g.version() == 3));
      CHECK(g.file_size() == std::filesystem::file_size(path));
      CHECK(g.data_offset() % g.alignment() == 0);
      CHECK_FALSE(g.metadata().empty());
      for (const auto& t : g.tensors()) {
        INFO(t.name);
        CHECK(t.file_offset == g.data_offset() + t.data_offset);
        CHECK(t.file_offset + t.n_bytes <= g.file_size());
        CHECK(t.n_bytes == t.row_bytes() * static_cast<uint64_t>(t.ne[1] * t.ne[2] * t.ne[3]));
        CHECK(g.tensor_data(t).size() == t.n_bytes);
        CHECK(g.find_tensor(t.name) == &t);
      }
      ++n_files;
    }
  }
  if (!les::test::any_skipped()) CHECK(n_files >= 20);
}

TEST_CASE("tiny-qwen3moe-F16 metadata and tensor table", "[gguf]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  auto f = GgufFile::open(path);
  REQUIRE(f.ok());
  const GgufFile& g = **f;
  CHECK(g.version() == 3);
  CHECK(g.architecture() == "qwen3moe");
  CHECK(*g.get_uint("qwen3moe.block_count") == 8);
  CHECK(*g.get_uint("qwen3moe.embedding_length") == 256);
  CHECK(*g.get_uint("qwen3moe.attention.head_count") == 4);
  CHECK(*g.get_uint("qwen3moe.attention.head_count_kv") == 2);
  CHECK(*g.get_uint("qwen3moe.expert_count") == 32);
  CHECK(*g.get_uint("qwen3moe.expert_used_count") == 4);
  CHECK(*g.get_uint("qwen3moe.expert_feed_forward_length") == 64);
  CHECK(*g.get_uint("qwen3moe.context_length") == 256);
  CHECK(*g.get_int("qwen3moe.block_count") == 8);
  CHECK(*g.get_float("qwen3moe.rope.freq_base") == 10000.0);
  CHECK(*g.get_float("qwen3moe.attention.layer_norm_rms_epsilon") == Approx(1e-6).epsilon(1e-6));
  CHECK(*g.get_uint("general.file_type") == 1);
  CHECK(*g.get_string("tokenizer.ggml.model") == "llama");
  CHECK(*g.get_string("tokenizer.ggml.pre") == "default");
  CHECK(*g.get_bool("tokenizer.ggml.add_bos_token") == true);
  CHECK(*g.get_bool("tokenizer.ggml.add_eos_token") == false);

  auto tokens = g.get_array("tokenizer.ggml.tokens");
  REQUIRE(tokens.ok());
  CHECK((*tokens)->elem_type == ValueType::STRING);
  CHECK((*tokens)->count == 8192);
  REQUIRE((*tokens)->string_at(0) != nullptr);
  CHECK(*(*tokens)->string_at(0) == "<unk>");
  CHECK(*(*tokens)->string_at(1) == "<s>");
  CHECK(*(*tokens)->string_at(2) == "</s>");
  CHECK(*(*tokens)->string_at(3) == "<0x00>");
  CHECK((*tokens)->string_at(8192) == nullptr);
  auto types = g.get_array("tokenizer.ggml.token_type");
  REQUIRE(types.ok());
  CHECK((*types)->elem_type == ValueType::INT32);
  CHECK((*types)->count == 8192);
  CHECK(*(*types)->int_at(3) == 6);  // byte-fallback piece
  auto scores = g.get_array("tokenizer.ggml.scores");
  REQUIRE(scores.ok());
  CHECK((*scores)->elem_type == ValueType::FLOAT32);
  CHECK((*scores)->float_at(100).has_value());

  const auto* gate = g.find_tensor("blk.0.ffn_gate_exps.weight");
  REQUIRE(gate != nullptr);
  CHECK(gate->n_dims == 3);
  CHECK(gate->ne == std::array<int64_t, 4>{256, 64, 32, 1});
  CHECK(gate->type == GgmlType::F16);
  CHECK(gate->n_bytes == 256u * 64 * 32 * 2);
  CHECK(gate->data_offset % g.alignment() == 0);
  const auto* down = g.find_tensor("blk.7.ffn_down_exps.weight");
  REQUIRE(down != nullptr);
  CHECK(down->ne == std::array<int64_t, 4>{64, 256, 32, 1});
  const auto* router = g.find_tensor("blk.3.ffn_gate_inp.weight");
  REQUIRE(router != nullptr);
  CHECK(router->type == GgmlType::F32);
  CHECK(router->ne == std::array<int64_t, 4>{256, 32, 1, 1});
  const auto* embd = g.find_tensor("token_embd.weight");
  REQUIRE(embd != nullptr);
  CHECK(embd->ne == std::array<int64_t, 4>{256, 8192, 1, 1});
  CHECK(g.find_tensor("blk.8.ffn_gate_exps.weight") == nullptr);

  // Total parameters from the README.
  int64_t params = 0;
  for (const auto& t : g.tensors()) params += t.n_elements();
  CHECK(params == 18420992);
}

TEST_CASE("typed getters report missing keys and wrong types", "[gguf]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  auto f = GgufFile::open(path);
  REQUIRE(f.ok());
  const GgufFile& g = **f;
  auto missing = g.get_uint("qwen3moe.no_such_key");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == les::StatusCode::format);
  CHECK(missing.status().message() == "key 'qwen3moe.no_such_key' is missing");
  CHECK(*g.get_uint_or("qwen3moe.no_such_key", 7) == 7);
  CHECK(*g.get_float_or("qwen3moe.no_such_key", 0.5) == 0.5);
  CHECK(*g.get_bool_or("qwen3moe.no_such_key", true) == true);
  CHECK(*g.get_string_or("qwen3moe.no_such_key", "x") == "x");
  auto wrong = g.get_uint("general.architecture");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().message() == "key 'general.architecture' has type STRING, expected an unsigned integer");
  CHECK_FALSE(g.get_uint_or("general.architecture", 1).ok());
  CHECK_FALSE(g.get_string("qwen3moe.block_count").ok());
  CHECK_FALSE(g.get_bool("qwen3moe.block_count").ok());
  CHECK_FALSE(g.get_array("qwen3moe.block_count").ok());
  CHECK(g.find("general.architecture") != nullptr);
  CHECK(g.find("general.nope") == nullptr);
}

TEST_CASE("metadata-only open keeps the tensor table but no data", "[gguf]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  les::gguf::ReadOptions opts;
  opts.use_mmap = false;
  auto f = GgufFile::open(path, opts);
  REQUIRE(f.ok());
  REQUIRE_FALSE((*f)->tensors().empty());
  const auto& t = (*f)->tensors().front();
  CHECK(t.n_bytes > 0);
  CHECK((*f)->tensor_data(t).empty());
}

TEST_CASE("open reports io errors for missing files", "[gguf]") {
  auto f = GgufFile::open("/nonexistent/dir/model.gguf");
  REQUIRE_FALSE(f.ok());
  CHECK(f.status().code() == les::StatusCode::io);
  CHECK(f.status().message().find("/nonexistent/dir/model.gguf") != std::string::npos);
}
