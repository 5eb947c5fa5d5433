#include "support/tiny_model.h"

#include <catch2/catch.hpp>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"

namespace les::test {

// Model's test access (model.h): its configuration and weights, mutable.
struct ModelAccess {
  static ArchConfig& config(Model& m) { return m.cfg_; }
  static ModelWeights& weights(Model& m) { return m.w_; }
};

std::vector<float> randn(size_t n, float scale, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TinyModel build_tiny_model(const TinySpec& s) {
  gguf::GgufWriter w;
  const std::string a = s.arch + ".";
  REQUIRE(w.set_string("general.architecture", s.arch).ok());
  REQUIRE(w.set_u32(a + "block_count", static_cast<uint32_t>(s.n_layer)).ok());
  REQUIRE(w.set_u32(a + "embedding_length", static_cast<uint32_t>(s.n_embd)).ok());
  REQUIRE(w.set_u32(a + "attention.head_count", static_cast<uint32_t>(s.n_head)).ok());
  REQUIRE(w.set_u32(a + "attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv)).ok());
  REQUIRE(w.set_u32(a + "attention.key_length", static_cast<uint32_t>(s.head_dim)).ok());
  REQUIRE(w.set_u32(a + "attention.value_length", static_cast<uint32_t>(s.head_dim)).ok());
  REQUIRE(w.set_f32(a + "attention.layer_norm_rms_epsilon", 1e-6f).ok());
  REQUIRE(w.set_f32(a + "rope.freq_base", 10000.0f).ok());
  REQUIRE(w.set_u32(a + "context_length", 64).ok());
  REQUIRE(w.set_u32(a + "expert_count", static_cast<uint32_t>(s.n_expert)).ok());
  REQUIRE(w.set_u32(a + "expert_used_count", static_cast<uint32_t>(s.n_expert_used)).ok());
  REQUIRE(w.set_u32(a + "expert_feed_forward_length", static_cast<uint32_t>(s.n_ff_exp)).ok());
  for (const auto& [k, v] : s.extra_f32) REQUIRE(w.set_f32(a + k, static_cast<float>(v)).ok());
  for (const auto& [k, v] : s.extra_u32) REQUIRE(w.set_u32(a + k, v).ok());
  for (const auto& [k, v] : s.extra_bool) REQUIRE(w.set_bool(a + k, v).ok());
  for (const auto& [k, v] : s.extra_str) REQUIRE(w.set_string(a + k, v).ok());

  std::mt19937 rng(1234);
  auto add = [&](const std::string& name, std::vector<int64_t> ne, float scale, float offset = 0.0f) {
    if (name == s.drop_tensor) return;
    if (name == s.bad_shape_tensor) ne[0] += 1;
    size_t n = 1;
    for (int64_t x : ne) n *= static_cast<size_t>(x);
    std::vector<float> v = randn(n, scale, rng);
    for (float& x : v) x += offset;
    if (auto rt = s.raw_type.find(name); rt != s.raw_type.end()) {
      const auto row = ggml_row_bytes(rt->second, ne[0]);
      REQUIRE(row.has_value());
      std::vector<uint8_t> zeros(*row * (n / static_cast<size_t>(ne[0])));
      REQUIRE(w.add_tensor(name, rt->second, ne, zeros.data(), zeros.size()).ok());
      return;
    }
    if (name == s.f16_norm_tensor) {
      std::vector<fp16_t> h(n);
      for (size_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(v[i]);
      REQUIRE(w.add_tensor(name, GgmlType::F16, ne, h.data(), n * 2).ok());
      return;
    }
    REQUIRE(w.add_tensor(name, GgmlType::F32, ne, v.data(), n * 4).ok());
  };
  const int64_t E = s.n_embd, Dq = s.n_head * s.head_dim, Dk = s.n_head_kv * s.head_dim;
  add("token_embd.weight", {E, s.n_vocab}, 0.5f);
  add("output_norm.weight", {E}, 0.1f, 1.0f);
  add("output.weight", {E, s.n_vocab}, 0.3f);
  for (int il = 0; il < s.n_layer; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    add(b + "attn_norm.weight", {E}, 0.1f, 1.0f);
    add(b + "attn_q.weight", {E, Dq}, 0.2f);
    add(b + "attn_k.weight", {E, Dk}, 0.2f);
    add(b + "attn_v.weight", {E, Dk}, 0.2f);
    add(b + "attn_output.weight", {Dq, E}, 0.2f);
    add(b + "attn_q_norm.weight", {s.head_dim}, 0.1f, 1.0f);
    add(b + "attn_k_norm.weight", {s.head_dim}, 0.1f, 1.0f);
    add(b + "ffn_norm.weight", {E}, 0.1f, 1.0f);
    add(b + "ffn_gate_inp.weight", {E, s.n_expert}, 0.4f);
    add(b + "ffn_gate_exps.weight", {E, s.n_ff_exp, s.n_expert}, 0.2f);
    add(b + "ffn_up_exps.weight", {E, s.n_ff_exp, s.n_expert}, 0.2f);
    add(b + "ffn_down_exps.weight", {s.n_ff_exp, E, s.n_expert}, 0.2f);
  }
  TinyModel tm;
  tm.bytes = w.write_to_memory();
  auto f = gguf::GgufFile::parse(tm.bytes.data(), tm.bytes.size());
  REQUIRE(f.ok());
  auto m = Model::from_gguf(std::move(f).value(), {});
  if (!m.ok()) {
    tm.status = m.status();
    return tm;
  }
  tm.model = std::move(m).value();
  ArchConfig& cfg = ModelAccess::config(*tm.model);
  if (s.gating) cfg.gating = *s.gating;
  if (s.renorm) cfg.moe_renorm = *s.renorm;
  if (s.weights_scale) cfg.moe_weights_scale = *s.weights_scale;
  if (s.exp_probs_b) {
    std::vector<LayerWeights>& layers = ModelAccess::weights(*tm.model).layers;
    tm.bias.resize(layers.size());
    for (size_t il = 0; il < layers.size(); ++il) {
      tm.bias[il] = randn(static_cast<size_t>(s.n_expert), 0.3f, rng);
      WeightView v;
      v.data = reinterpret_cast<const uint8_t*>(tm.bias[il].data());
      v.type = GgmlType::F32;
      v.ne[0] = s.n_expert;
      v.row_bytes = static_cast<size_t>(s.n_expert) * sizeof(float);
      v.name = "blk." + std::to_string(il) + ".exp_probs_b.bias";
      layers[il].exp_probs_b = std::move(v);
    }
  }
  return tm;
}

}  // namespace les::test
