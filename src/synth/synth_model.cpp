// Synthetic random-weight models; see synth_model.h.
#include "synth/synth_model.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <numbers>
#include <thread>
#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <tuple>

#include "core/gguf/gguf_stream_writer.h"
#include "core/gguf/gguf_writer.h"
#include "synth/synth_vocab.h"
#include "kernels/weight_quantizers.h"

namespace les {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t hash3(uint64_t seed, uint64_t stream, uint64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ stream) ^ index);
}

std::vector<SynthPreset> presets() {
  SynthPreset tiny;
  tiny.name = "tiny";
  tiny.arch = "qwen3moe";
  tiny.n_layer = 4;
  tiny.n_embd = 256;
  tiny.n_head = 4;
  tiny.n_head_kv = 2;
  tiny.head_dim = 64;
  tiny.n_expert = 8;
  tiny.n_expert_used = 2;
  tiny.n_ff_exp = 256;
  tiny.n_ctx_train = 2048;
  tiny.n_vocab_max = 1024;
  tiny.rope_freq_base = 1000000.0f;
  tiny.rms_eps = 1e-6f;

  // CI-sized MoE with the real model's proportions (experts Q4_K, ~70 MB).
  SynthPreset small = tiny;
  small.name = "small";
  small.n_layer = 8;
  small.n_embd = 512;
  small.n_head = 8;
  small.n_head_kv = 2;
  small.head_dim = 64;
  small.n_expert = 32;
  small.n_expert_used = 4;
  small.n_ff_exp = 256;
  small.n_ctx_train = 4096;
  small.n_vocab_max = 1024;
  small.default_type = GgmlType::Q4_K;
  small.default_expert_type = GgmlType::Q4_K;
  small.default_output_type = GgmlType::Q6_K;
  small.default_block_pool = true;

  // Qwen3-30B-A3B's shape (config.json of the released model): experts Q3_K
  // (~12.5 GB of experts), attention / token_embd Q4_K, output Q6_K, norms and
  // routers F32, vocabulary padded to the real 151936 entries.
  SynthPreset big = tiny;
  big.name = "qwen3-30b-a3b";
  big.n_layer = 48;
  big.n_embd = 2048;
  big.n_head = 32;
  big.n_head_kv = 4;
  big.head_dim = 128;
  big.n_expert = 128;
  big.n_expert_used = 8;
  big.n_ff_exp = 768;
  big.n_ctx_train = 40960;
  big.n_vocab_max = 1024;
  big.n_vocab_pad = 151936;
  big.rope_freq_base = 1000000.0f;
  big.default_type = GgmlType::Q4_K;
  big.default_expert_type = GgmlType::Q3_K;
  big.default_output_type = GgmlType::Q6_K;
  big.default_block_pool = true;

  // Qwen3.5-35B-A3B's shape (the text backbone of MiniCPM-V 4.7 35B-A3B;
  // docs/model-graphs.md section 4): 40 layers = 10 x (3 Gated DeltaNet + 1
  // gated full attention), 256 experts (top-8) of width 512 plus a shared
  // expert of 512, vocabulary padded to the real 248320 entries. Experts Q3_K
  // (~13.8 GB), every other matrix Q4_K (output included), norms, routers and
  // the F32-only ssm tensors F32. No MTP block (nextn_predict_layers absent).
  SynthPreset q35 = tiny;
  q35.name = "qwen35-35b-a3b";
  q35.arch = "qwen35moe";
  q35.n_layer = 40;
  q35.n_embd = 2048;
  q35.n_head = 16;
  q35.n_head_kv = 2;
  q35.head_dim = 256;
  q35.n_rot = 64;
  q35.rope_sections = {11, 11, 10, 0};
  q35.n_expert = 256;
  q35.n_expert_used = 8;
  q35.n_ff_exp = 512;
  q35.n_ff_shexp = 512;
  q35.ssm_d_conv = 4;
  q35.ssm_d_state = 128;
  q35.ssm_n_group = 16;
  q35.ssm_dt_rank = 32;
  q35.full_attention_interval = 4;
  q35.n_ctx_train = 262144;
  q35.n_vocab_max = 1024;
  q35.n_vocab_pad = 248320;
  q35.rope_freq_base = 10000000.0f;
  q35.default_type = GgmlType::Q4_K;
  q35.default_expert_type = GgmlType::Q3_K;
  q35.default_output_type = GgmlType::Q4_K;
  q35.default_block_pool = true;
  return {tiny, small, big, q35};
}

Status check_qwen35moe(const SynthPreset& p) {
  auto pos = [](int32_t v) { return v > 0; };
  if (!pos(p.n_rot) || !pos(p.n_ff_shexp) || !pos(p.ssm_d_conv) || !pos(p.ssm_d_state) || !pos(p.ssm_n_group) ||
      !pos(p.ssm_dt_rank) || !pos(p.full_attention_interval))
    return invalid_argument_error("synth: qwen35moe preset '" + p.name + "' has a non-positive dimension");
  if (p.n_rot > p.head_dim || p.n_rot % 2 != 0)
    return invalid_argument_error("synth: n_rot must be even and <= head_dim");
  int32_t sections = 0;
  for (int32_t v : p.rope_sections) {
    if (v < 0) return invalid_argument_error("synth: negative rope section");
    sections += v;
  }
  if (sections == 0 || 2 * sections > p.n_rot)
    return invalid_argument_error("synth: rope sections must sum to 1 .. n_rot / 2");
  if (p.ssm_dt_rank % p.ssm_n_group != 0)
    return invalid_argument_error("synth: ssm_n_group must divide ssm_dt_rank");
  if (p.ssm_d_conv > 64 || p.ssm_d_state > 1024 || p.ssm_dt_rank > 4096)
    return invalid_argument_error("synth: ssm sizes out of range (conv <= 64, state <= 1024, dt_rank <= 4096)");
  if (p.full_attention_interval > p.n_layer)
    return invalid_argument_error("synth: full_attention_interval > n_layer leaves no full-attention layer");
  return Status();
}

Status check_preset(const SynthPreset& p) {
  if (p.arch != "qwen3moe" && p.arch != "qwen35moe")
    return invalid_argument_error("synth: architecture '" + p.arch + "' is not supported (qwen3moe, qwen35moe)");
  auto pos = [](int32_t v) { return v > 0; };
  if (!pos(p.n_layer) || !pos(p.n_embd) || !pos(p.n_head) || !pos(p.n_head_kv) || !pos(p.head_dim) ||
      !pos(p.n_expert) || !pos(p.n_expert_used) || !pos(p.n_ff_exp) || !pos(p.n_ctx_train) || !pos(p.n_vocab_max))
    return invalid_argument_error("synth: preset '" + p.name + "' has a non-positive dimension");
  if (p.n_head % p.n_head_kv != 0) return invalid_argument_error("synth: n_head must be a multiple of n_head_kv");
  if (p.n_expert_used > p.n_expert) return invalid_argument_error("synth: n_expert_used > n_expert");
  if (p.head_dim % 2 != 0) return invalid_argument_error("synth: head_dim must be even (RoPE pairs)");
  if (p.n_vocab_pad < 0) return invalid_argument_error("synth: n_vocab_pad is negative");
  if (p.arch == "qwen35moe") return check_qwen35moe(p);
  return Status();
}

// One row through the weight quantiser of t (any type with one: F32, F16, BF16, Q4_0 ... Q8_0,
// Q2_K ... Q6_K, IQ4_NL), on this machine's best kernel tier (the bytes do not depend on it).
void quantize_row(GgmlType t, const float* x, void* y, int64_t n) {
  kernels::quantize_weights_row(kernels::default_kernel_table(), t, x, y, n, nullptr);
}

// Fills rows [r0, r1) of tensor t (rows of ne[0] elements) and encodes them
// into `out` (row_bytes each). Element e of the tensor is generated from
// (seed, t.stream, e), so any row range can be produced on its own.
void encode_rows(const SynthTensor& t, uint64_t seed, int64_t r0, int64_t r1, size_t row_bytes, uint8_t* out) {
  const int64_t cols = t.ne[0];
  std::vector<float> x(static_cast<size_t>(cols));
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const uint64_t e = static_cast<uint64_t>(r * cols + c);
      switch (t.init) {
        case SynthInit::normal: x[static_cast<size_t>(c)] = t.stddev * synth_normal(seed, t.stream, e); break;
        case SynthInit::uniform_norm:
          x[static_cast<size_t>(c)] = static_cast<float>(0.8 + 0.4 * synth_uniform(seed, t.stream, e));
          break;
        case SynthInit::uniform_range:
          x[static_cast<size_t>(c)] = static_cast<float>(t.lo + (t.hi - t.lo) * synth_uniform(seed, t.stream, e));
          break;
      }
    }
    quantize_row(t.type, x.data(), out + static_cast<size_t>(r - r0) * row_bytes, cols);
  }
}

Status write_tokenizer(gguf::GgufWriter& w, const SpmVocab& v) {
  std::vector<double> scores(v.scores.begin(), v.scores.end());
  std::vector<int64_t> types;
  for (int32_t t : v.types) types.push_back(t);
  LES_RETURN_IF_ERROR(w.set_string("tokenizer.ggml.model", "llama"));
  LES_RETURN_IF_ERROR(w.set_string("tokenizer.ggml.pre", "default"));
  LES_RETURN_IF_ERROR(w.set_array_strings("tokenizer.ggml.tokens", v.tokens));
  LES_RETURN_IF_ERROR(w.set_array_numbers("tokenizer.ggml.scores", gguf::ValueType::FLOAT32, scores));
  LES_RETURN_IF_ERROR(w.set_array_ints("tokenizer.ggml.token_type", gguf::ValueType::INT32, types));
  LES_RETURN_IF_ERROR(w.set_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(v.bos_id)));
  LES_RETURN_IF_ERROR(w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(v.eos_id)));
  LES_RETURN_IF_ERROR(w.set_u32("tokenizer.ggml.unknown_token_id", static_cast<uint32_t>(v.unk_id)));
  LES_RETURN_IF_ERROR(w.set_bool("tokenizer.ggml.add_bos_token", true));
  LES_RETURN_IF_ERROR(w.set_bool("tokenizer.ggml.add_eos_token", false));
  LES_RETURN_IF_ERROR(w.set_bool("tokenizer.ggml.add_space_prefix", true));
  return Status();
}

// The qwen35moe keys (docs/model-graphs.md section 4): shared expert, IMRoPE
// sections, Gated DeltaNet sizes and the layer pattern.
Status write_hybrid_metadata(gguf::GgufWriter& w, const SynthPreset& p) {
  const std::string a = p.arch + ".";
  const std::vector<int64_t> sections(p.rope_sections.begin(), p.rope_sections.end());
  LES_RETURN_IF_ERROR(w.set_u32(a + "expert_shared_feed_forward_length", static_cast<uint32_t>(p.n_ff_shexp)));
  LES_RETURN_IF_ERROR(w.set_array_ints(a + "rope.dimension_sections", gguf::ValueType::INT32, sections));
  LES_RETURN_IF_ERROR(w.set_u32(a + "ssm.conv_kernel", static_cast<uint32_t>(p.ssm_d_conv)));
  LES_RETURN_IF_ERROR(w.set_u32(a + "ssm.state_size", static_cast<uint32_t>(p.ssm_d_state)));
  LES_RETURN_IF_ERROR(w.set_u32(a + "ssm.group_count", static_cast<uint32_t>(p.ssm_n_group)));
  LES_RETURN_IF_ERROR(w.set_u32(a + "ssm.time_step_rank", static_cast<uint32_t>(p.ssm_dt_rank)));
  LES_RETURN_IF_ERROR(w.set_u32(a + "ssm.inner_size", static_cast<uint32_t>(p.ssm_dt_rank * p.ssm_d_state)));
  LES_RETURN_IF_ERROR(w.set_u32(a + "full_attention_interval", static_cast<uint32_t>(p.full_attention_interval)));
  return Status();
}

// general.file_type (llama_ftype) of a file whose matrices are all `t`.
uint32_t file_type(GgmlType t) {
  switch (t) {
    case GgmlType::F32: return 0;
    case GgmlType::F16: return 1;
    case GgmlType::Q4_0: return 2;
    case GgmlType::Q8_0: return 7;
    case GgmlType::Q3_K: return 12;  // Q3_K_M numbering is the closest; the file is uniform Q3_K
    case GgmlType::Q4_K: return 15;  // Q4_K_M
    case GgmlType::Q5_K: return 17;  // Q5_K_M
    case GgmlType::Q6_K: return 18;
    default: return 0;
  }
}

}  // namespace

float synth_normal(uint64_t seed, uint64_t stream, uint64_t index) {
  // Box-Muller on two 53-bit uniforms from two counter hashes.
  const uint64_t a = hash3(seed, stream, 2 * index), b = hash3(seed, stream, 2 * index + 1);
  const double u1 = (static_cast<double>(a >> 11) + 1.0) * (1.0 / 9007199254740992.0);  // (0, 1]
  const double u2 = static_cast<double>(b >> 11) * (1.0 / 9007199254740992.0);
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
}

double synth_uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return static_cast<double>(hash3(seed, stream, index) >> 11) * (1.0 / 9007199254740992.0);
}

std::vector<std::string> synth_preset_names() {
  std::vector<std::string> names;
  for (const auto& p : presets()) names.push_back(p.name);
  return names;
}

Result<SynthPreset> synth_preset(std::string_view name) {
  std::string known;
  for (const auto& p : presets()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  return invalid_argument_error("synth: unknown preset '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<SynthTensor> synth_tensor_plan(const SynthPreset& p, GgmlType weight_type, int64_t n_vocab) {
  return synth_tensor_plan(p, SynthTypes{weight_type, weight_type, weight_type}, n_vocab);
}

std::vector<SynthTensor> synth_tensor_plan(const SynthPreset& p, const SynthTypes& types, int64_t n_vocab) {
  std::vector<SynthTensor> plan;
  auto add = [&plan](std::string name, GgmlType type, std::vector<int64_t> ne, SynthInit init, float stddev,
                     float lo = 0, float hi = 0) {
    const uint64_t stream = plan.size();
    plan.push_back({std::move(name), type, std::move(ne), init, stddev, stream, lo, hi});
  };
  auto inv_sqrt = [](int64_t fan_in) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(fan_in))); };
  const GgmlType wt = types.matrix, xt = types.expert, f32 = GgmlType::F32;
  const auto normal = SynthInit::normal, norm = SynthInit::uniform_norm, range = SynthInit::uniform_range;
  const bool hybrid = p.arch == "qwen35moe";
  const int64_t E = p.n_embd, Q = int64_t{p.n_head} * p.head_dim, KV = int64_t{p.n_head_kv} * p.head_dim;
  const int64_t F = p.n_ff_exp, X = p.n_expert, S = p.n_ff_shexp;
  const int64_t Vi = int64_t{p.ssm_dt_rank} * p.ssm_d_state, C = 2 * int64_t{p.ssm_n_group} * p.ssm_d_state + Vi;
  // Residual-branch scaling (GPT-2, Radford et al. 2019: output projections
  // of the 2·n_layer residual branches scaled by 1/sqrt(2·n_layer)) and unit
  // embeddings keep each token's identity in the residual stream through the
  // stack. Without it every branch adds a vector as large as the embedding,
  // the flat attention of random weights averages positions, hidden states of
  // different tokens converge and the routers pick the same few experts for
  // every token (30B preset: ~30 of 128 experts per layer over 64 tokens),
  // which no expert-streaming benchmark should be run on.
  const float branch = static_cast<float>(1.0 / std::sqrt(2.0 * std::max(p.n_layer, 1)));
  add("token_embd.weight", wt, {E, n_vocab}, normal, 1.0f);
  for (int32_t l = 0; l < p.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    add(b + "attn_norm.weight", f32, {E}, norm, 0);
    if (hybrid && (l + 1) % p.full_attention_interval != 0) {
      // Gated DeltaNet: qkv channels feed the conv; z gates the output norm.
      add(b + "attn_qkv.weight", wt, {E, C}, normal, inv_sqrt(E));
      add(b + "attn_gate.weight", wt, {E, Vi}, normal, inv_sqrt(E));
      add(b + "ssm_conv1d.weight", f32, {p.ssm_d_conv, C}, normal, inv_sqrt(p.ssm_d_conv));
      add(b + "ssm_dt.bias", f32, {p.ssm_dt_rank}, range, 0, -7.0f, -2.3f);
      add(b + "ssm_a", f32, {p.ssm_dt_rank}, range, 0, -16.0f, -1.0f);
      add(b + "ssm_beta.weight", wt, {E, p.ssm_dt_rank}, normal, inv_sqrt(E));
      add(b + "ssm_alpha.weight", wt, {E, p.ssm_dt_rank}, normal, inv_sqrt(E));
      add(b + "ssm_norm.weight", f32, {p.ssm_d_state}, norm, 0);
      add(b + "ssm_out.weight", wt, {Vi, E}, normal, branch * inv_sqrt(Vi));
    } else {
      // qwen35moe's attn_q also holds a sigmoid output gate per head.
      add(b + "attn_q.weight", wt, {E, hybrid ? 2 * Q : Q}, normal, inv_sqrt(E));
      add(b + "attn_k.weight", wt, {E, KV}, normal, inv_sqrt(E));
      add(b + "attn_v.weight", wt, {E, KV}, normal, inv_sqrt(E));
      add(b + "attn_output.weight", wt, {Q, E}, normal, branch * inv_sqrt(Q));
      add(b + "attn_q_norm.weight", f32, {p.head_dim}, norm, 0);
      add(b + "attn_k_norm.weight", f32, {p.head_dim}, norm, 0);
    }
    add(b + (hybrid ? "post_attention_norm.weight" : "ffn_norm.weight"), f32, {E}, norm, 0);
    add(b + "ffn_gate_inp.weight", f32, {E, X}, normal, 1.5f * inv_sqrt(E));
    add(b + "ffn_gate_exps.weight", xt, {E, F, X}, normal, inv_sqrt(E));
    add(b + "ffn_up_exps.weight", xt, {E, F, X}, normal, inv_sqrt(E));
    add(b + "ffn_down_exps.weight", xt, {F, E, X}, normal, branch * inv_sqrt(F));
    if (hybrid) {
      add(b + "ffn_gate_inp_shexp.weight", f32, {E}, normal, inv_sqrt(E));
      add(b + "ffn_gate_shexp.weight", wt, {E, S}, normal, inv_sqrt(E));
      add(b + "ffn_up_shexp.weight", wt, {E, S}, normal, inv_sqrt(E));
      add(b + "ffn_down_shexp.weight", wt, {S, E}, normal, branch * inv_sqrt(S));
    }
  }
  add("output_norm.weight", f32, {E}, norm, 0);
  add("output.weight", types.output, {E, n_vocab}, normal, 0.2f);
  return plan;
}

namespace {

constexpr int64_t kPoolBlocks = 4096;
constexpr uint64_t kJobBytes = uint64_t{8} << 20;  // output bytes per generation job

// A pool of kPoolBlocks encoded units of `unit` elements (one quant block, or
// 256 elements of a plain type), all N(0, stddev^2).
struct BlockPool {
  int64_t unit = 0;
  size_t unit_bytes = 0;
  std::vector<uint8_t> bytes;
};

struct PoolKey {
  GgmlType type;
  int64_t unit;
  uint32_t stddev_bits;
  bool operator<(const PoolKey& o) const {
    return std::tie(type, unit, stddev_bits) < std::tie(o.type, o.unit, o.stddev_bits);
  }
};

// Elements per pool unit for tensor t, or 0 if t is generated exactly.
int64_t pool_unit(const SynthTensor& t) {
  if (t.init != SynthInit::normal || t.type == GgmlType::F32) return 0;
  const GgmlTypeTraits tr = ggml_type_traits(t.type);
  const int64_t unit = tr.is_quantized ? tr.block_size : 256;
  return t.ne[0] % unit == 0 ? unit : 0;
}

BlockPool make_pool(const PoolKey& k, uint64_t seed) {
  BlockPool pool;
  pool.unit = k.unit;
  pool.unit_bytes = *ggml_row_bytes(k.type, k.unit);
  pool.bytes.resize(pool.unit_bytes * kPoolBlocks);
  float stddev;
  std::memcpy(&stddev, &k.stddev_bits, sizeof stddev);
  const uint64_t stream = hash3(static_cast<uint64_t>(k.type), static_cast<uint64_t>(k.unit), k.stddev_bits) | (1ull << 63);
  std::vector<float> x(static_cast<size_t>(k.unit));
  for (int64_t b = 0; b < kPoolBlocks; ++b) {
    for (int64_t i = 0; i < k.unit; ++i)
      x[static_cast<size_t>(i)] = stddev * synth_normal(seed, stream, static_cast<uint64_t>(b * k.unit + i));
    quantize_row(k.type, x.data(), pool.bytes.data() + static_cast<size_t>(b) * pool.unit_bytes, k.unit);
  }
  return pool;
}

// Rows [r0, r1) of t from its pool: unit u of row r is pool entry hash(seed, stream, r * units + u).
void pooled_rows(const SynthTensor& t, const BlockPool& pool, uint64_t seed, int64_t r0, int64_t r1, uint8_t* out) {
  const int64_t units = t.ne[0] / pool.unit;
  const uint64_t stream = t.stream | (1ull << 62);
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t u = 0; u < units; ++u) {
      const uint64_t pick = hash3(seed, stream, static_cast<uint64_t>(r * units + u)) % kPoolBlocks;
      std::memcpy(out, pool.bytes.data() + pick * pool.unit_bytes, pool.unit_bytes);
      out += pool.unit_bytes;
    }
  }
}

// Appends <unused_N> tokens (type unused, score 0) up to n_vocab entries.
void pad_vocab(SpmVocab& v, int32_t n_vocab) {
  for (int32_t i = static_cast<int32_t>(v.tokens.size()); i < n_vocab; ++i) {
    v.tokens.push_back("<unused_" + std::to_string(i) + ">");
    v.scores.push_back(0.0f);
    v.types.push_back(5);  // llama_token_type UNUSED
  }
}

struct Job {
  size_t tensor;
  int64_t r0, r1;
};

}  // namespace

Result<SynthInfo> write_synth_model(const SynthPreset& p, const SynthOptions& opts, const std::string& path) {
  LES_RETURN_IF_ERROR(check_preset(p));
  const SynthTypes types{opts.type, opts.expert_type.value_or(opts.type), opts.output_type.value_or(opts.type)};
  for (GgmlType t : {types.matrix, types.expert, types.output})
    if (!kernels::weight_quantizer_available(t))
      return invalid_argument_error(std::string("synth: LES cannot write weights of type ") + ggml_type_name(t));
  LES_ASSIGN_OR_RETURN(SpmVocab vocab, learn_spm_vocab(default_vocab_text(), p.n_vocab_max));
  pad_vocab(vocab, p.n_vocab_pad);
  const int64_t n_vocab = static_cast<int64_t>(vocab.tokens.size());

  gguf::GgufStreamWriter sw;
  gguf::GgufWriter& w = sw.metadata();
  const std::string a = p.arch;
  LES_RETURN_IF_ERROR(w.set_string("general.architecture", a));
  LES_RETURN_IF_ERROR(w.set_string("general.name", "les-synth-" + p.name + "-" + a));
  LES_RETURN_IF_ERROR(w.set_u32(kSynthVersionKey, static_cast<uint32_t>(kSynthVersion)));
  LES_RETURN_IF_ERROR(w.set_string("les.synth.preset", p.name));
  LES_RETURN_IF_ERROR(w.set_u64("les.synth.seed", opts.seed));
  if (opts.generator == SynthGenerator::block_pool) LES_RETURN_IF_ERROR(w.set_string("les.synth.generator", "block_pool"));
  LES_RETURN_IF_ERROR(w.set_u32("general.file_type", file_type(types.expert)));
  LES_RETURN_IF_ERROR(w.set_u32(a + ".block_count", static_cast<uint32_t>(p.n_layer)));
  LES_RETURN_IF_ERROR(w.set_u32(a + ".context_length", static_cast<uint32_t>(p.n_ctx_train)));
  LES_RETURN_IF_ERROR(w.set_u32(a + ".embedding_length", static_cast<uint32_t>(p.n_embd)));
  if (p.arch == "qwen3moe")
    LES_RETURN_IF_ERROR(w.set_u32(a + ".feed_forward_length", static_cast<uint32_t>(p.n_ff_exp * p.n_expert_used)));
  LES_RETURN_IF_ERROR(w.set_u32(a + ".attention.head_count", static_cast<uint32_t>(p.n_head)));
  LES_RETURN_IF_ERROR(w.set_u32(a + ".attention.head_count_kv", static_cast<uint32_t>(p.n_head_kv)));
  LES_RETURN_IF_ERROR(w.set_u32(a + ".attention.key_length", static_cast<uint32_t>(p.head_dim)));
  LES_RETURN_IF_ERROR(w.set_u32(a + ".attention.value_length", static_cast<uint32_t>(p.head_dim)));
  LES_RETURN_IF_ERROR(w.set_u32(a + ".rope.dimension_count", static_cast<uint32_t>(p.n_rot > 0 ? p.n_rot : p.head_dim)));
  LES_RETURN_IF_ERROR(w.set_f32(a + ".rope.freq_base", p.rope_freq_base));
  LES_RETURN_IF_ERROR(w.set_f32(a + ".attention.layer_norm_rms_epsilon", p.rms_eps));
  LES_RETURN_IF_ERROR(w.set_u32(a + ".expert_count", static_cast<uint32_t>(p.n_expert)));
  LES_RETURN_IF_ERROR(w.set_u32(a + ".expert_used_count", static_cast<uint32_t>(p.n_expert_used)));
  LES_RETURN_IF_ERROR(w.set_u32(a + ".expert_feed_forward_length", static_cast<uint32_t>(p.n_ff_exp)));
  if (p.arch == "qwen35moe") LES_RETURN_IF_ERROR(write_hybrid_metadata(w, p));
  LES_RETURN_IF_ERROR(write_tokenizer(w, vocab));

  SynthInfo info;
  info.n_vocab = static_cast<int32_t>(n_vocab);
  const std::vector<SynthTensor> plan = synth_tensor_plan(p, types, n_vocab);
  std::vector<size_t> row_bytes(plan.size());
  std::vector<const BlockPool*> pool_of(plan.size(), nullptr);
  std::map<PoolKey, BlockPool> pools;
  std::vector<Job> jobs;
  uint64_t total_bytes = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const SynthTensor& t = plan[i];
    const auto rb = ggml_row_bytes(t.type, t.ne[0]);
    if (!rb)
      return invalid_argument_error("synth: tensor '" + t.name + "' has rows of " + std::to_string(t.ne[0]) +
                                    " elements, not a multiple of the " + ggml_type_name(t.type) + " block size");
    row_bytes[i] = *rb;
    LES_RETURN_IF_ERROR(sw.declare_tensor(t.name, t.type, t.ne));
    int64_t n_rows = 1;
    for (size_t d = 1; d < t.ne.size(); ++d) n_rows *= t.ne[d];
    info.n_params += static_cast<uint64_t>(n_rows * t.ne[0]);
    total_bytes += *rb * static_cast<uint64_t>(n_rows);
    const int64_t rows_per_job = std::max<int64_t>(1, static_cast<int64_t>(kJobBytes / *rb));
    for (int64_t r = 0; r < n_rows; r += rows_per_job) jobs.push_back({i, r, std::min(n_rows, r + rows_per_job)});
    if (opts.generator == SynthGenerator::block_pool) {
      if (const int64_t unit = pool_unit(t); unit > 0) {
        uint32_t bits;
        std::memcpy(&bits, &t.stddev, sizeof bits);
        const PoolKey key{t.type, unit, bits};
        auto it = pools.find(key);
        if (it == pools.end()) it = pools.emplace(key, make_pool(key, opts.seed)).first;
        pool_of[i] = &it->second;
      }
    }
  }

  LES_RETURN_IF_ERROR(sw.begin(path));
  const unsigned n_threads = opts.n_threads > 0 ? static_cast<unsigned>(opts.n_threads)
                                                : std::max(1u, std::thread::hardware_concurrency());
  // Each worker takes the next job, generates its rows and writes them in
  // place, so one thread's write overlaps another's generation.
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  Status first_error;
  uint64_t done_bytes = 0;
  auto worker = [&] {
    std::vector<uint8_t> buf;
    for (size_t j; !failed.load() && (j = next.fetch_add(1)) < jobs.size();) {
      const Job& job = jobs[j];
      const SynthTensor& t = plan[job.tensor];
      const size_t rb = row_bytes[job.tensor];
      buf.resize(static_cast<size_t>(job.r1 - job.r0) * rb);
      if (pool_of[job.tensor] != nullptr)
        pooled_rows(t, *pool_of[job.tensor], opts.seed, job.r0, job.r1, buf.data());
      else
        encode_rows(t, opts.seed, job.r0, job.r1, rb, buf.data());
      Status s = sw.write_rows(t.name, job.r0, buf);
      std::lock_guard<std::mutex> lock(mu);
      if (!s.ok()) {
        if (first_error.ok()) first_error = s;
        failed = true;
      }
      done_bytes += buf.size();
      if (opts.progress) opts.progress(done_bytes, total_bytes);
    }
  };
  std::vector<std::thread> workers;
  for (unsigned k = 1; k < n_threads; ++k) workers.emplace_back(worker);
  worker();
  for (auto& th : workers) th.join();
  if (!first_error.ok()) return first_error;
  LES_RETURN_IF_ERROR(sw.finish());
  info.file_bytes = sw.file_size();
  return info;
}

}  // namespace les
