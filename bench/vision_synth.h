// Random-weight GGUF files for bench_vision: an mmproj of SigLIP-so400m's
// shape and a one-block llama text model whose width matches it, so that
// llama.cpp's llama-mtmd-cli can encode the same images with the same
// encoder shape (bench/README.md, "Vision encode"). Weights are random: only
// times mean anything. Errors end the process (benchmark helper).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "kernels/fp16.h"

namespace les::bench {

[[noreturn]] inline void vision_synth_die(const std::string& m) {
  std::fprintf(stderr, "bench_vision: %s\n", m.c_str());
  std::exit(2);
}

// Tensors of tiled random halves: a pool of 65521 (prime) random values from a
// random start, random enough for timing and fast for 400M parameters.
class RandomF16 {
 public:
  explicit RandomF16(uint32_t seed) : rng_(seed) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    pool_.resize(65521);
    for (auto& x : pool_) x = u(rng_);
  }
  void add(gguf::GgufWriter& w, const std::string& name, std::vector<int64_t> ne, float scale) {
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    std::vector<fp16_t> scaled(pool_.size()), h(static_cast<size_t>(n));
    for (size_t i = 0; i < pool_.size(); ++i) scaled[i] = fp32_to_fp16(pool_[i] * scale);
    size_t at = rng_() % pool_.size();
    for (int64_t i = 0; i < n; ++i) {
      h[static_cast<size_t>(i)] = scaled[at];
      if (++at == scaled.size()) at = 0;
    }
    check(w.add_tensor(name, GgmlType::F16, ne, h.data(), h.size() * 2));
  }
  void add_f32(gguf::GgufWriter& w, const std::string& name, int64_t n, float base, float scale) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = base + u(rng_) * scale;
    check(w.add_tensor(name, GgmlType::F32, std::vector<int64_t>{n}, v.data(), v.size() * sizeof(float)));
  }
  static void check(const Status& s) {
    if (!s.ok()) vision_synth_die(s.message());
  }

 private:
  std::mt19937 rng_;
  std::vector<float> pool_;
};

// A random-weight mmproj of SigLIP-so400m's shape at `path`: E 1152, FFN 4304,
// 16 heads, `layers` blocks, merger after block 0, ViT-merger MLP 3E and
// projector 6E wide (the fixture's ratios), output width 2048, image size 448
// (MiniCPM-V's), F16 matrices.
inline void write_siglip_mmproj(const std::string& path, int layers) {
  const int64_t E = 1152, F = 4304, H = 16, P = 14, FD = 3 * E, FM = 6 * E, OUT = 2048;
  gguf::GgufWriter w;
  const auto ok = RandomF16::check;
  ok(w.set_string("general.architecture", "clip"));
  ok(w.set_bool("clip.has_vision_encoder", true));
  ok(w.set_string("clip.projector_type", "minicpmv4_6"));
  ok(w.set_bool("clip.use_gelu", true));
  ok(w.set_u32("clip.vision.image_size", 448));
  ok(w.set_u32("clip.vision.patch_size", P));
  ok(w.set_u32("clip.vision.embedding_length", E));
  ok(w.set_u32("clip.vision.feed_forward_length", F));
  ok(w.set_u32("clip.vision.block_count", static_cast<uint32_t>(layers)));
  ok(w.set_u32("clip.vision.projection_dim", OUT));
  ok(w.set_u32("clip.vision.attention.head_count", H));
  ok(w.set_f32("clip.vision.attention.layer_norm_epsilon", 1e-6f));
  const double half[3] = {0.5, 0.5, 0.5};
  ok(w.set_array_numbers("clip.vision.image_mean", gguf::ValueType::FLOAT32, half));
  ok(w.set_array_numbers("clip.vision.image_std", gguf::ValueType::FLOAT32, half));
  const int64_t wa[1] = {0};
  ok(w.set_array_ints("clip.vision.wa_layer_indexes", gguf::ValueType::INT32, wa));
  RandomF16 r(1);
  const float ws = 0.03f;
  r.add(w, "v.patch_embd.weight", {P, P, 3, E}, ws);
  r.add_f32(w, "v.patch_embd.bias", E, 0.0f, 0.02f);
  r.add(w, "v.position_embd.weight", {E, 4900}, 0.2f);
  for (int il = 0; il < layers; ++il) {
    const std::string b = "v.blk." + std::to_string(il) + ".";
    for (const char* ln : {"ln1", "ln2"}) {
      r.add_f32(w, b + ln + ".weight", E, 1.0f, 0.1f);
      r.add_f32(w, b + ln + ".bias", E, 0.0f, 0.02f);
    }
    for (const char* m : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
      r.add(w, b + m + ".weight", {E, E}, ws);
      r.add_f32(w, b + m + ".bias", E, 0.0f, 0.02f);
    }
    r.add(w, b + "ffn_up.weight", {E, F}, ws);
    r.add_f32(w, b + "ffn_up.bias", F, 0.0f, 0.02f);
    r.add(w, b + "ffn_down.weight", {F, E}, ws);
    r.add_f32(w, b + "ffn_down.bias", E, 0.0f, 0.02f);
  }
  const std::string vm = "v.vit_merger.";
  r.add_f32(w, vm + "ln1.weight", E, 1.0f, 0.1f);
  r.add_f32(w, vm + "ln1.bias", E, 0.0f, 0.02f);
  for (const char* m : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
    r.add(w, vm + m + ".weight", {E, E}, ws);
    r.add_f32(w, vm + m + ".bias", E, 0.0f, 0.02f);
  }
  r.add_f32(w, vm + "ds_ln.weight", 4 * E, 1.0f, 0.1f);
  r.add_f32(w, vm + "ds_ln.bias", 4 * E, 0.0f, 0.02f);
  r.add(w, vm + "ds_ffn_up.weight", {4 * E, FD}, ws);
  r.add_f32(w, vm + "ds_ffn_up.bias", FD, 0.0f, 0.02f);
  r.add(w, vm + "ds_ffn_down.weight", {FD, E}, ws);
  r.add_f32(w, vm + "ds_ffn_down.bias", E, 0.0f, 0.02f);
  r.add_f32(w, "v.post_ln.weight", E, 1.0f, 0.1f);
  r.add_f32(w, "v.post_ln.bias", E, 0.0f, 0.02f);
  r.add_f32(w, "mm.input_norm.weight", 4 * E, 1.0f, 0.1f);
  r.add_f32(w, "mm.input_norm.bias", 4 * E, 0.0f, 0.02f);
  r.add(w, "mm.up.weight", {4 * E, FM}, ws);
  r.add_f32(w, "mm.up.bias", FM, 0.0f, 0.02f);
  r.add(w, "mm.down.weight", {FM, OUT}, ws);
  r.add_f32(w, "mm.down.bias", OUT, 0.0f, 0.02f);
  ok(w.write_to_file(path));
}

// A one-block llama text model of width n_embd (16 heads, FFN 256, F16) with
// the vocabulary of `vocab_gguf` (every tokenizer.* key copied: the fixture's
// qwen35moe-mm-F16.gguf has the four image marker tokens llama.cpp's mtmd
// looks up), written to `path`. Only for llama-mtmd-cli to accept an mmproj of
// output width n_embd; its text is meaningless.
inline void write_marker_text_model(const std::string& path, const std::string& vocab_gguf, int64_t n_embd) {
  auto in = gguf::GgufFile::open(vocab_gguf);
  if (!in.ok()) vision_synth_die(in.status().message());
  gguf::GgufWriter w;
  const auto ok = RandomF16::check;
  ok(w.set_string("general.architecture", "llama"));
  int64_t n_vocab = 0;
  for (const auto& kv : (*in)->metadata()) {
    if (kv.key.rfind("tokenizer.", 0) != 0) continue;
    ok(w.set(kv.key, kv.value));
    if (kv.key == "tokenizer.ggml.tokens" && kv.value.as_array() != nullptr)
      n_vocab = static_cast<int64_t>(kv.value.as_array()->count);
  }
  if (n_vocab < 1) vision_synth_die(vocab_gguf + " has no tokenizer.ggml.tokens");
  const int64_t E = n_embd, F = 256;
  ok(w.set_u32("llama.context_length", 4096));
  ok(w.set_u32("llama.embedding_length", static_cast<uint32_t>(E)));
  ok(w.set_u32("llama.block_count", 1));
  ok(w.set_u32("llama.feed_forward_length", static_cast<uint32_t>(F)));
  ok(w.set_u32("llama.attention.head_count", 16));
  ok(w.set_u32("llama.attention.head_count_kv", 16));
  ok(w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-6f));
  RandomF16 r(2);
  r.add(w, "token_embd.weight", {E, n_vocab}, 0.05f);
  r.add_f32(w, "output_norm.weight", E, 1.0f, 0.1f);
  r.add(w, "output.weight", {E, n_vocab}, 0.05f);
  r.add_f32(w, "blk.0.attn_norm.weight", E, 1.0f, 0.1f);
  for (const char* m : {"attn_q", "attn_k", "attn_v", "attn_output"}) r.add(w, std::string("blk.0.") + m + ".weight", {E, E}, 0.02f);
  r.add_f32(w, "blk.0.ffn_norm.weight", E, 1.0f, 0.1f);
  r.add(w, "blk.0.ffn_gate.weight", {E, F}, 0.02f);
  r.add(w, "blk.0.ffn_up.weight", {E, F}, 0.02f);
  r.add(w, "blk.0.ffn_down.weight", {F, E}, 0.02f);
  ok(w.write_to_file(path));
}

}  // namespace les::bench
