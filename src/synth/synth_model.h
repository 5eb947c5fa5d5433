// Synthetic (random-weight) models in real GGUF architectures, written with
// the project's GGUF writer: the embedded default model of `les run` and test
// inputs of any shape (`les synth`).
//
// A preset fixes the architecture's shape; the weights come from a seed via a
// counter-based generator (element i of tensor t depends only on (seed, t, i)),
// so any slice of any tensor can be generated independently, in parallel, and
// bit-identically on every platform. The file is written with the streaming
// GGUF writer (core/gguf/gguf_stream_writer.h): threads generate row ranges and
// write them in place, so presets of real-model size (qwen3-30b-a3b, ~13 GB)
// never sit in memory.
//
// Two generators:
//  - exact: every element drawn as below, then quantised row by row with the
//    reference weight quantisers (slow for large files: ~10^8 elements/s).
//  - block_pool (real-scale presets): a pool of 4096 quantised blocks per
//    (type, block size, stddev) is made with the exact generator; block b of
//    row r of a tensor is pool entry hash(seed, stream, r, b) % 4096. Values
//    keep the distribution (including quantisation) at memcpy speed, so
//    writing is disk-bound. F32 tensors (norms, routers) stay exact.
//
// qwen3moe tensors (ggml ne order, ne0 contiguous; as in the trained
// fixture and docs/model-graphs.md section 3):
//   token_embd.weight, output.weight      {n_embd, n_vocab}     N(0, 0.2^2)
//   output_norm.weight                    {n_embd} F32          U(0.8, 1.2)
//   blk.L.attn_norm/ffn_norm.weight       {n_embd} F32          U(0.8, 1.2)
//   blk.L.attn_q.weight                   {n_embd, n_head*head_dim}     N(0, 1/fan_in)
//   blk.L.attn_k/attn_v.weight            {n_embd, n_head_kv*head_dim}  N(0, 1/fan_in)
//   blk.L.attn_output.weight              {n_head*head_dim, n_embd}     N(0, 1/fan_in)
//   blk.L.attn_q_norm/attn_k_norm.weight  {head_dim} F32        U(0.8, 1.2)
//   blk.L.ffn_gate_inp.weight             {n_embd, n_expert} F32  N(0, 1.5^2/n_embd) (router)
//   blk.L.ffn_gate_exps/ffn_up_exps       {n_embd, n_ff_exp, n_expert}  N(0, 1/fan_in)
//   blk.L.ffn_down_exps                   {n_ff_exp, n_embd, n_expert}  N(0, 1/fan_in)
// qwen35moe (hybrid Gated DeltaNet, docs/model-graphs.md section 4): layer il is
// full attention iff (il + 1) % full_attention_interval == 0, else linear
// attention; every layer's FFN norm is post_attention_norm, and a shared
// expert follows the routed ones. With C = (2 ssm_n_group + ssm_dt_rank) *
// ssm_d_state conv channels and Vi = ssm_dt_rank * ssm_d_state:
//   linear: blk.L.attn_qkv {n_embd, C}, attn_gate {n_embd, Vi}  N(0, 1/fan_in)
//           ssm_conv1d.weight {ssm_d_conv, C} F32             N(0, 1/ssm_d_conv)
//           ssm_dt.bias {ssm_dt_rank} F32                     U(-7, -2.3) (softplus^-1 of dt in ~[1e-3, 0.1])
//           ssm_a {ssm_dt_rank} F32                           U(-16, -1)  (= -A, A in [1, 16])
//           ssm_beta/ssm_alpha.weight {n_embd, ssm_dt_rank}    N(0, 1/fan_in)
//           ssm_norm.weight {ssm_d_state} F32                 U(0.8, 1.2)
//           ssm_out.weight {Vi, n_embd}                       N(0, 1/fan_in) x residual-branch scale
//   full:   attn_q {n_embd, 2 n_head head_dim} (per head q then gate rows), attn_k/v,
//           attn_output, attn_q_norm/attn_k_norm as for qwen3moe
//   shared: ffn_gate_inp_shexp.weight {n_embd} F32            N(0, 1/n_embd)
//           ffn_gate/up_shexp {n_embd, n_ff_shexp}, ffn_down_shexp {n_ff_shexp, n_embd}
// The vocabulary is a learned SPM vocab with byte fallback (synth/synth_vocab.h).
//
// Thread-safety: pure functions (write_synth_model writes one file).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/ggml_type.h"
#include "util/status.h"

namespace les {

struct SynthPreset {
  std::string name;          // "tiny"
  std::string arch;          // "qwen3moe" or "qwen35moe"
  int32_t n_layer = 0;
  int32_t n_embd = 0;
  int32_t n_head = 0;
  int32_t n_head_kv = 0;
  int32_t head_dim = 0;
  int32_t n_expert = 0;
  int32_t n_expert_used = 0;
  int32_t n_ff_exp = 0;      // expert FFN width
  int32_t n_ctx_train = 0;   // written as {arch}.context_length
  int32_t n_vocab_max = 0;   // upper bound for the learned vocab (the file holds the actual size)
  float rope_freq_base = 10000.0f;
  float rms_eps = 1e-6f;
  int32_t n_vocab_pad = 0;   // pad the learned vocab with <unused_N> tokens up to this size (real-size embeddings); 0 = none
  // qwen35moe only (0 elsewhere): rotary dims per head (rope.dimension_count),
  // IMRoPE sections (sum <= n_rot / 2), shared-expert width, the Gated DeltaNet
  // sizes (ssm.conv_kernel, ssm.state_size = head dim of k and v, ssm.group_count
  // = k heads, ssm.time_step_rank = v heads) and the layer pattern.
  int32_t n_rot = 0;
  std::array<int32_t, 4> rope_sections{};
  int32_t n_ff_shexp = 0;
  int32_t ssm_d_conv = 0;
  int32_t ssm_d_state = 0;
  int32_t ssm_n_group = 0;
  int32_t ssm_dt_rank = 0;
  int32_t full_attention_interval = 0;
  // Defaults `les synth` uses when --type / --expert-type / --output-type are not given.
  GgmlType default_type = GgmlType::F16;         // attention, token_embd
  GgmlType default_expert_type = GgmlType::F16;  // ffn_{gate,up,down}_exps
  GgmlType default_output_type = GgmlType::F16;  // output.weight
  bool default_block_pool = false;               // default generator (see above)
};

// Names of the known presets, e.g. {"tiny"}.
std::vector<std::string> synth_preset_names();

// The preset called `name`. Errors: invalid_argument (unknown name; the
// message lists the known ones).
Result<SynthPreset> synth_preset(std::string_view name);

// Metadata key holding the generator version; bump kSynthVersion whenever the
// generated bytes change, so caches of the default model are regenerated.
inline constexpr const char* kSynthVersionKey = "les.synth.version";
inline constexpr uint64_t kSynthVersion = 3;

enum class SynthGenerator { exact, block_pool };

struct SynthOptions {
  // Type of the 2-D/3-D weight matrices (norms and routers stay F32): F32, F16, or a
  // quantised type through the kernels' reference weight quantisers (Q8_0, Q6_K,
  // Q5_K, Q4_K, Q3_K, Q4_0; K-quants need rows that are multiples of 256).
  GgmlType type = GgmlType::F16;
  std::optional<GgmlType> expert_type;  // ffn_{gate,up,down}_exps; default `type`
  std::optional<GgmlType> output_type;  // output.weight; default `type`
  SynthGenerator generator = SynthGenerator::exact;
  uint64_t seed = 1234;           // weight seed
  int n_threads = 0;              // generation threads; 0 = hardware_concurrency. The bytes do not depend on it.
  // Called from the writing threads (serialised) with tensor-data bytes written so far and in total.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

// Matrix types of a synthetic model by role.
struct SynthTypes {
  GgmlType matrix = GgmlType::F16;  // token_embd, attention
  GgmlType expert = GgmlType::F16;  // ffn_{gate,up,down}_exps
  GgmlType output = GgmlType::F16;  // output.weight
};

// How a tensor's values are drawn: N(0, stddev^2) / U(0.8, 1.2) / U(lo, hi).
enum class SynthInit { normal, uniform_norm, uniform_range };

// One tensor of a synthetic model: its name, type, shape (ne order) and the
// generator stream its values come from (its index in the plan).
struct SynthTensor {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<int64_t> ne;
  SynthInit init = SynthInit::normal;
  float stddev = 0;
  uint64_t stream = 0;
  float lo = 0, hi = 0;  // uniform_range only
};

// The tensors of a preset in file order (the table above), with 2-D/3-D
// weight matrices of `weight_type`. Pure; a streaming writer can use it to
// lay out the header before any data exists.
std::vector<SynthTensor> synth_tensor_plan(const SynthPreset& preset, GgmlType weight_type, int64_t n_vocab);
// Same with types by role.
std::vector<SynthTensor> synth_tensor_plan(const SynthPreset& preset, const SynthTypes& types, int64_t n_vocab);

// Summary of a written file, for logs.
struct SynthInfo {
  int32_t n_vocab = 0;
  uint64_t n_params = 0;
  uint64_t file_bytes = 0;
};

// Generates the model and writes it to `path` (atomically: a temporary file
// renamed over `path`). Errors: invalid_argument (bad preset dims, a type the
// build cannot quantise to), io (cannot write).
Result<SynthInfo> write_synth_model(const SynthPreset& preset, const SynthOptions& opts, const std::string& path);

// Deterministic N(0, 1) sample number `index` of stream `stream` under `seed`
// (splitmix64 counter hash + Box-Muller). Exposed for tests.
float synth_normal(uint64_t seed, uint64_t stream, uint64_t index);
// Deterministic U[0, 1) sample, same scheme.
double synth_uniform(uint64_t seed, uint64_t stream, uint64_t index);

}  // namespace les
