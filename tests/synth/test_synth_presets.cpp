// Synth presets at CI and real scale: the qwen3-30b-a3b plan has the real
// model's shapes and ~13 GB of Q3_K experts, the qwen35-35b-a3b plan the
// hybrid layer pattern and ~13.8 GB of Q3_K experts (checked from the plans,
// not written); a small-scale qwen35-35b-a3b variant loads, runs and routes
// over its experts; the small preset written with the block_pool generator loads,
// runs, is deterministic and thread-count independent, and its weights have
// the plan's spread; role types (experts / output) are honoured.
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <set>

#include "core/model/context.h"
#include "core/gguf/gguf_reader.h"
#include "core/model/hparams.h"
#include "core/model/model.h"
#include "synth/synth_model.h"
#include "kernels/block_formats.h"
#include "kernels/ref.h"
#include "support/fixtures.h"

using namespace les;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

uint64_t plan_bytes(const std::vector<SynthTensor>& plan, bool experts_only) {
  uint64_t total = 0;
  for (const SynthTensor& t : plan) {
    if (experts_only && t.name.find("_exps") == std::string::npos) continue;
    uint64_t rows = 1;
    for (size_t d = 1; d < t.ne.size(); ++d) rows *= static_cast<uint64_t>(t.ne[d]);
    total += *ggml_row_bytes(t.type, t.ne[0]) * rows;
  }
  return total;
}

}  // namespace

TEST_CASE("synth qwen3-30b-a3b preset: real shapes, Q3_K experts ~12.5 GB", "[synth]") {
  auto p = synth_preset("qwen3-30b-a3b");
  REQUIRE(p.ok());
  CHECK(p->n_layer == 48);
  CHECK(p->n_expert == 128);
  CHECK(p->n_expert_used == 8);
  CHECK(p->n_embd == 2048);
  CHECK(p->n_ff_exp == 768);
  CHECK(p->n_head == 32);
  CHECK(p->n_head_kv == 4);
  CHECK(p->head_dim == 128);
  CHECK(p->default_expert_type == GgmlType::Q3_K);
  const auto plan = synth_tensor_plan(
      *p, SynthTypes{p->default_type, p->default_expert_type, p->default_output_type}, p->n_vocab_pad);
  for (const SynthTensor& t : plan) {
    if (t.name == "blk.0.ffn_down_exps.weight") {
      CHECK(t.ne == std::vector<int64_t>{768, 2048, 128});
      CHECK(t.type == GgmlType::Q3_K);  // 768 = 3 x 256: whole K-quant blocks
    }
    if (t.name == "output.weight") CHECK(t.type == GgmlType::Q6_K);
    if (t.name == "token_embd.weight") CHECK(t.ne == std::vector<int64_t>{2048, 151936});
    if (t.name == "blk.47.attn_q.weight") CHECK(t.type == GgmlType::Q4_K);
    if (t.name == "blk.47.ffn_gate_inp.weight") CHECK(t.type == GgmlType::F32);
  }
  // 48 x 128 experts x 3 x 675840 bytes.
  CHECK(plan_bytes(plan, true) == 48ull * 128 * 3 * 675840);
  const double gb = static_cast<double>(plan_bytes(plan, false)) / 1e9;
  CHECK(gb > 12.5);
  CHECK(gb < 13.5);
}

TEST_CASE("synth qwen35-35b-a3b preset: hybrid layer pattern, real shapes, Q3_K experts ~13.8 GB", "[synth]") {
  auto p = synth_preset("qwen35-35b-a3b");
  REQUIRE(p.ok());
  CHECK(p->arch == "qwen35moe");
  CHECK(p->n_layer == 40);
  CHECK(p->n_embd == 2048);
  CHECK(p->n_expert == 256);
  CHECK(p->n_expert_used == 8);
  CHECK(p->n_ff_exp == 512);
  CHECK(p->n_ff_shexp == 512);
  CHECK(p->n_vocab_pad == 248320);
  const auto plan = synth_tensor_plan(
      *p, SynthTypes{p->default_type, p->default_expert_type, p->default_output_type}, p->n_vocab_pad);
  int n_linear = 0, n_full = 0;
  for (const SynthTensor& t : plan) {
    if (t.name.find("attn_qkv.weight") != std::string::npos) {
      ++n_linear;
      // q and k: 16 k-heads x 128, v: 32 v-heads x 128.
      CHECK(t.ne == std::vector<int64_t>{2048, 8192});
      CHECK(t.type == GgmlType::Q4_K);
    }
    if (t.name.find("attn_q.weight") != std::string::npos) {
      ++n_full;
      CHECK(t.ne == std::vector<int64_t>{2048, 2 * 16 * 256});  // q and its output gate per head
    }
    if (t.name == "blk.3.attn_k.weight") CHECK(t.ne == std::vector<int64_t>{2048, 2 * 256});
    if (t.name == "blk.39.attn_output.weight") CHECK(t.ne == std::vector<int64_t>{16 * 256, 2048});
    if (t.name == "blk.0.ssm_conv1d.weight") CHECK((t.ne == std::vector<int64_t>{4, 8192} && t.type == GgmlType::F32));
    if (t.name == "blk.0.ssm_a") CHECK((t.init == SynthInit::uniform_range && t.hi < 0));  // -exp(A_log) < 0
    if (t.name == "blk.0.ssm_out.weight") CHECK(t.ne == std::vector<int64_t>{4096, 2048});
    if (t.name == "blk.0.ssm_alpha.weight") CHECK(t.ne == std::vector<int64_t>{2048, 32});
    if (t.name == "blk.5.ffn_down_exps.weight") {
      CHECK(t.ne == std::vector<int64_t>{512, 2048, 256});
      CHECK(t.type == GgmlType::Q3_K);
    }
    if (t.name == "blk.5.ffn_down_shexp.weight") CHECK((t.ne == std::vector<int64_t>{512, 2048} && t.type == GgmlType::Q4_K));
    if (t.name == "blk.5.ffn_gate_inp_shexp.weight") CHECK(t.ne == std::vector<int64_t>{2048});
    if (t.name == "blk.5.ffn_norm.weight") FAIL("qwen35moe's FFN norm is post_attention_norm");
    if (t.name == "token_embd.weight") CHECK(t.ne == std::vector<int64_t>{2048, 248320});
    if (t.name == "output.weight") CHECK(t.type == GgmlType::Q4_K);
  }
  CHECK(n_linear == 30);
  CHECK(n_full == 10);
  // 40 layers x 256 experts x 3 matrices x (512 rows of 8 Q3_K blocks of 110 bytes).
  CHECK(plan_bytes(plan, true) == 40ull * 256 * 3 * 450560);
  const double gb = static_cast<double>(plan_bytes(plan, false)) / 1e9;
  CHECK(gb > 14.5);
  CHECK(gb < 15.5);
}

TEST_CASE("synth qwen35-35b-a3b preset at small scale: loads, runs, routes over its experts", "[synth]") {
  auto p = synth_preset("qwen35-35b-a3b");
  REQUIRE(p.ok());
  // The preset's architecture and layer pattern at the fixtures' dims (2 x (3 linear + 1 full)).
  p->n_layer = 8;
  p->n_embd = 256;
  p->n_head = 4;
  p->n_head_kv = 2;
  p->head_dim = 128;
  p->n_rot = 32;
  p->rope_sections = {6, 5, 5, 0};
  p->n_expert = 16;
  p->n_expert_used = 4;
  p->n_ff_exp = 256;
  p->n_ff_shexp = 256;
  p->ssm_d_state = 64;
  p->ssm_n_group = 2;
  p->ssm_dt_rank = 4;
  p->n_vocab_pad = 2048;
  SynthOptions o;
  o.type = p->default_type;
  o.expert_type = p->default_expert_type;
  o.output_type = p->default_output_type;
  o.generator = SynthGenerator::block_pool;
  o.n_threads = 2;
  const std::string path = test::temp_dir() + "/qwen35-small.gguf";
  auto info = write_synth_model(*p, o, path);
  REQUIRE(info.ok());
  auto f = gguf::GgufFile::open(path);
  REQUIRE(f.ok());
  CHECK((*f)->find_tensor("blk.2.ssm_beta.weight")->type == GgmlType::Q4_K);
  CHECK((*f)->find_tensor("blk.3.ffn_up_exps.weight")->type == GgmlType::Q3_K);
  CHECK((*f)->find_tensor("blk.3.attn_qkv.weight") == nullptr);

  auto m = Model::load(path, {});
  REQUIRE(m.ok());
  const Hparams& hp = (*m)->hparams();
  CHECK(hp.arch == "qwen35moe");
  CHECK(hp.n_layer == 8);
  for (int32_t il = 0; il < 8; ++il) CHECK(hp.is_recurrent(il) == ((il + 1) % 4 != 0));
  CHECK(hp.n_ff_shexp == 256);
  CHECK(hp.n_rot == 32);
  CHECK(hp.rope_sections[0] == 6);
  CHECK(hp.ssm_d_inner == 256);
  CHECK(hp.n_vocab == 2048);
  auto ctx = Context::create(**m, {});
  REQUIRE(ctx.ok());
  std::vector<std::set<int32_t>> used(8);
  (*ctx)->set_router_observer([&](const RouterObservation& r) {
    for (int32_t i = 0; i < r.n_tokens * r.n_expert_used; ++i) used[static_cast<size_t>(r.layer)].insert(r.selected[i]);
  });
  std::vector<int32_t> many(64);
  for (int i = 0; i < 64; ++i) many[static_cast<size_t>(i)] = (37 * i + 11) % info->n_vocab;
  REQUIRE((*ctx)->decode(many, /*all_logits=*/true).ok());
  for (float v : (*ctx)->logits()) REQUIRE(std::isfinite(v));
  // Then decode: the recurrent state and the KV cache carry on.
  REQUIRE((*ctx)->decode(std::vector<int32_t>{5}).ok());
  for (float v : (*ctx)->logits()) REQUIRE(std::isfinite(v));
  // 64 tokens x top-4 of 16 experts: uniform routing would use all 16 per layer.
  for (size_t l = 0; l < used.size(); ++l) {
    INFO("layer " << l);
    CHECK(used[l].size() >= 12);
  }
}

TEST_CASE("synth small preset, block_pool generator: loads, runs, deterministic", "[synth]") {
  auto p = synth_preset("small");
  REQUIRE(p.ok());
  SynthOptions o;
  o.type = p->default_type;
  o.expert_type = p->default_expert_type;
  o.output_type = p->default_output_type;
  o.generator = SynthGenerator::block_pool;
  o.n_threads = 1;
  const std::string d = test::temp_dir();
  auto info = write_synth_model(*p, o, d + "/small1.gguf");
  REQUIRE(info.ok());
  o.n_threads = 3;
  REQUIRE(write_synth_model(*p, o, d + "/small3.gguf").ok());
  CHECK(read_all(d + "/small1.gguf") == read_all(d + "/small3.gguf"));
  o.seed = 99;
  REQUIRE(write_synth_model(*p, o, d + "/small-seed.gguf").ok());
  CHECK(read_all(d + "/small1.gguf") != read_all(d + "/small-seed.gguf"));

  auto f = gguf::GgufFile::open(d + "/small1.gguf");
  REQUIRE(f.ok());
  CHECK((*f)->file_size() == info->file_bytes);
  CHECK(*(*f)->get_string("les.synth.generator") == "block_pool");
  const gguf::TensorInfo* down = (*f)->find_tensor("blk.7.ffn_down_exps.weight");
  REQUIRE(down);
  CHECK(down->type == GgmlType::Q4_K);
  CHECK((*f)->find_tensor("output.weight")->type == GgmlType::Q6_K);
  // Expert 5 of blk.7 down: standard deviation close to the plan's
  // 1/sqrt(n_ff_exp) x 1/sqrt(2 n_layer) (residual-branch scaling; a wrong
  // pool scale or layout would be far off), and its rows are not all equal.
  const int64_t cols = down->ne[0], rows = down->ne[1];
  const uint64_t rb = down->row_bytes();
  const uint8_t* slab = (*f)->tensor_data(*down).data() + 5 * rb * static_cast<uint64_t>(rows);
  std::vector<float> x(static_cast<size_t>(cols * rows));
  for (int64_t r = 0; r < rows; ++r)
    kernels::dequantize_row_q4_K_ref(reinterpret_cast<const block_q4_K*>(slab + r * rb), x.data() + r * cols, cols);
  double s2 = 0;
  for (float v : x) s2 += static_cast<double>(v) * v;
  const double sd = std::sqrt(s2 / static_cast<double>(x.size()));
  CHECK(sd == Approx(1.0 / std::sqrt(256.0) / std::sqrt(2.0 * 8)).epsilon(0.1));
  CHECK(std::memcmp(slab, slab + rb, rb) != 0);

  auto m = Model::load(d + "/small1.gguf", {});
  REQUIRE(m.ok());
  CHECK((*m)->hparams().n_expert == 32);
  auto ctx = Context::create(**m, {});
  REQUIRE(ctx.ok());
  const std::vector<int32_t> toks = {1, 100, 200, 300};
  REQUIRE((*ctx)->decode(toks).ok());
  for (float v : (*ctx)->logits()) REQUIRE(std::isfinite(v));

  // Routing must spread over the experts as a trained model's does, or an
  // expert-streaming benchmark on a synthetic model measures nothing: over 64
  // distinct tokens (256 picks of 32 experts; uniform routing would use 32 per
  // layer) every layer uses at least 24 experts. Without residual-branch
  // scaling the 30B preset used ~30 of 128.
  std::vector<std::set<int32_t>> used(8);
  (*ctx)->set_router_observer([&](const RouterObservation& o) {
    for (int32_t i = 0; i < o.n_tokens * o.n_expert_used; ++i) used[static_cast<size_t>(o.layer)].insert(o.selected[i]);
  });
  (*ctx)->reset();
  std::vector<int32_t> many(64);
  for (int i = 0; i < 64; ++i) many[static_cast<size_t>(i)] = (37 * i + 11) % static_cast<int32_t>(info->n_vocab);
  REQUIRE((*ctx)->decode(many, /*all_logits=*/true).ok());
  for (size_t l = 0; l < used.size(); ++l) {
    INFO("layer " << l);
    CHECK(used[l].size() >= 24);
  }
}

TEST_CASE("synth: vocab padding and role types", "[synth]") {
  auto p = synth_preset("tiny");
  REQUIRE(p.ok());
  p->n_vocab_pad = 700;
  SynthOptions o;
  o.type = GgmlType::F16;
  o.expert_type = GgmlType::Q8_0;
  o.output_type = GgmlType::F32;
  const std::string path = test::temp_dir() + "/tiny-roles.gguf";
  auto info = write_synth_model(*p, o, path);
  REQUIRE(info.ok());
  CHECK(info->n_vocab == 700);
  auto f = gguf::GgufFile::open(path);
  REQUIRE(f.ok());
  CHECK((*f)->find_tensor("blk.0.ffn_up_exps.weight")->type == GgmlType::Q8_0);
  CHECK((*f)->find_tensor("blk.0.attn_q.weight")->type == GgmlType::F16);
  CHECK((*f)->find_tensor("output.weight")->type == GgmlType::F32);
  CHECK((*f)->find_tensor("token_embd.weight")->ne[1] == 700);
  auto m = Model::load(path, {});
  REQUIRE(m.ok());
  CHECK((*m)->hparams().n_vocab == 700);
  // The padding tokens are never produced by tokenizing text.
  const auto ids = (*m)->tokenizer().tokenize("hello world, unused tokens stay unused", false, false);
  REQUIRE(ids.ok());
  auto tokens = (*f)->get_array("tokenizer.ggml.tokens");
  REQUIRE(tokens.ok());
  int32_t first_pad = 0;
  while ((*tokens)->string_at(static_cast<uint64_t>(first_pad))->rfind("<unused_", 0) != 0) ++first_pad;
  CHECK(first_pad > 259);
  for (int32_t id : *ids) CHECK(id < first_pad);
}
