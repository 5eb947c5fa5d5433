// A loaded model: hyperparameters, architecture configuration and weight views
// into the GGUF mapping (fully resident). Immutable after load; one Model can
// serve several Contexts.
//
// Supported architectures: qwen3moe, llama (dense and Mixtral-style experts),
// qwen2moe, qwen35moe (hybrid Gated DeltaNet + gated attention, with MTP),
// gemma3 (dense, sliding-window layers). Each one's tensor set and MoE semantics live in
// src/core/model/arch/<arch>.cpp; the forward pass (forward.cpp, moe_layer.cpp) is
// shared and driven by ArchConfig.
//
// Thread-safety: all const members are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/model/expert_source.h"
#include "core/model/hparams.h"
#include "core/model/weight_view.h"
#include "core/tokenizer/tokenizer.h"
#include "kernels/ops.h"
#include "util/status.h"

namespace les {

namespace gguf {
class GgufFile;
class TensorArena;
}

// Where the weights live once loaded (gguf/tensor_arena.h says why it matters).
enum class WeightMemory {
  // A model with routed experts reads its dense weights (everything but the
  // routed experts) into LES's own memory with pread and leaves the experts in
  // a read-only mapping of the file: streaming contexts read experts through
  // the I/O reactor and never touch the mapping, so a file truncated or
  // replaced under them gives an I/O error from the next expert read, never a
  // signal; resident contexts use the mapped experts (see `mmap`). A model
  // without routed experts maps everything.
  automatic,
  // Every weight through the mapping: the least memory and load time for
  // resident runs (pages load on first use, shared with the page cache). The
  // caveat: if the file is truncated or replaced while the model is loaded,
  // the next touch of a lost page raises SIGBUS, which kills the process.
  mmap,
  // Every weight (experts included) read into LES's own memory: a changed
  // file can never raise a signal; memory for the whole model.
  read,
};

struct ModelParams {
  int n_threads = 0;      // 0 = hardware_concurrency; at most ThreadPool::max_threads() (thread_count.h)
  WeightMemory weights = WeightMemory::automatic;
  // mlock the weights read into LES's memory so the OS cannot page them out
  // under memory pressure; failing to (RLIMIT_MEMLOCK) is a warning (warnings()).
  bool lock_weights = false;
};

// The gated activation of a dense FFN: down(act(gate x) * up x).
enum class FfnAct : uint8_t {
  silu,  // SwiGLU (llama, qwen): ops::swiglu
  gelu,  // GeGLU with ggml's F16 GELU table (gemma): ops::geglu_f16_table
};

// How an architecture computes its layers (resolved from arch + metadata at load).
struct ArchConfig {
  ops::RopeType rope = ops::RopeType::norm;
  bool qk_norm = false;        // per-head RMSNorm of Q and K before RoPE (qwen3moe)
  bool qkv_bias = false;       // Q/K/V biases (qwen2moe)
  // MoE: probabilities from softmax/sigmoid over all experts; top-k; optional
  // renormalisation of the k weights to sum 1; optional scale.
  ExpertGating gating = ExpertGating::softmax;
  bool moe_renorm = false;
  float moe_weights_scale = 0.0f;  // 0 = no scaling
  bool shared_expert = false;      // plain SwiGLU expert on every token ...
  bool shared_expert_gated = false;  // ... multiplied by sigmoid(ffn_gate_inp_shexp · x)
  // Gated attention (qwen35moe): attn_q has 2 x n_embd_q output rows, per head
  // [q_h (head_dim) | gate_h (head_dim)]; the attention output of head h is
  // multiplied element-wise by sigmoid(gate_h) before attn_output.
  bool attn_output_gate = false;
  // IMRoPE (rope = neox pairing, Hparams::rope_sections, ops::rope_imrope).
  bool rope_imrope = false;
  // Attention sums in ggml's one-token (vec_dot) order for every batch size,
  // so a token's logits are bit-identical whether it is decoded alone, in a
  // prefill chunk or in a speculative verify batch. Off: batches of >= 2
  // tokens use ggml's GEMM order (what llama.cpp computes for a prompt).
  bool batch_invariant = false;
  // Token embeddings multiplied by this before the first layer (gemma:
  // sqrt(n_embd)); 0 = not scaled. Embedding rows given by the caller (image
  // embeddings) are never scaled, as in llama.cpp.
  float embd_scale = 0.0f;
  // Sandwich norms (gemma): the mixer's and the FFN's outputs are RMS-normed
  // with attn_post_norm / ffn_post_norm before each residual add.
  bool post_norms = false;
  FfnAct ffn_act = FfnAct::silu;  // dense FFN activation
};

// The Gated DeltaNet mixer of a linear-attention layer (qwen35moe; shapes in
// ggml ne order, docs/model-graphs.md section 4). C = ssm_conv_channels.
struct LinearAttnWeights {
  WeightView wqkv;       // attn_qkv {n_embd, C}: rows q (n_group x d_state) | k (same) | v (d_inner)
  WeightView wgate;      // attn_gate {n_embd, d_inner}: z, the output gate
  WeightView conv1d;     // ssm_conv1d {d_conv, C} F32: depthwise causal conv taps
  WeightView dt_bias;    // ssm_dt.bias {dt_rank} F32
  WeightView a;          // ssm_a {dt_rank} F32: -exp(A_log)
  WeightView wbeta;      // ssm_beta {n_embd, dt_rank}
  WeightView walpha;     // ssm_alpha {n_embd, dt_rank}
  WeightView norm;       // ssm_norm {d_state} F32: gated RMS norm weight shared by the v heads
  WeightView wout;       // ssm_out {d_inner, n_embd}
};

// The tensors only an MTP (NextN) block has; absent optional ones fall back
// to token_embd, output_norm and output.
struct NextnWeights {
  WeightView eh_proj;           // {2 n_embd, n_embd}: input [enorm(embd) ; hnorm(h)] -> n_embd
  WeightView enorm, hnorm;      // {n_embd} F32
  WeightView shared_head_norm;  // {n_embd} F32 (optional)
  WeightView embed_tokens;      // {n_embd, n_vocab} (optional)
  WeightView shared_head_head;  // {n_embd, n_vocab} (optional)
};

struct LayerWeights {
  WeightView attn_norm;          // {n_embd} F32
  WeightView wq, wk, wv, wo;     // {n_embd, n_embd_q}, {n_embd, n_embd_k}, {n_embd, n_embd_v}, {n_embd_q, n_embd}
  WeightView bq, bk, bv;         // biases (qkv_bias), F32
  WeightView q_norm, k_norm;     // {head_dim} F32 (qk_norm)
  WeightView attn_post_norm;     // {n_embd} F32 (post_norms: gemma's post_attention_norm)
  WeightView ffn_norm;           // {n_embd} F32
  WeightView ffn_post_norm;      // {n_embd} F32 (post_norms: gemma's post_ffw_norm)
  WeightView ffn_gate, ffn_up, ffn_down;  // dense FFN: {n_embd, n_ff}, {n_embd, n_ff}, {n_ff, n_embd}
  WeightView router;             // ffn_gate_inp {n_embd, n_expert}, any matrix type (mul_mat in llama.cpp)
  WeightView exp_probs_b;        // per-expert selection bias {n_expert} F32 (no supported architecture loads one)
  WeightView gate_exps, up_exps, down_exps;  // {n_embd, n_ff_exp, n_expert}, ..., {n_ff_exp, n_embd, n_expert}
  WeightView gate_shexp, up_shexp, down_shexp;  // shared expert {n_embd, n_ff_shexp} ...
  WeightView gate_inp_shexp;     // {n_embd}, any matrix type
  bool linear_attn = false;      // mixer: Gated DeltaNet (`lin`) instead of attention
  LinearAttnWeights lin;
  NextnWeights nextn;            // MTP blocks only

  bool is_moe() const noexcept { return router.present(); }
};

struct ModelWeights {
  WeightView rope_freqs;   // {n_rot/2} F32 RoPE frequency factors (Llama 3's rope_freqs.weight), optional
  WeightView tok_embd;     // {n_embd, n_vocab}
  WeightView output_norm;  // {n_embd} F32
  WeightView output;       // {n_embd, n_vocab}; token_embd when tied
  // Every block of the file: the trunk (0 .. n_layer - 1), then the MTP blocks
  // (n_layer .. n_layer_all - 1) of architectures that load them.
  std::vector<LayerWeights> layers;
};

namespace test {
struct ModelAccess;  // tests only (tests/support/tiny_model.cpp)
}

class Model {
 public:
  // Loads a GGUF model file. Errors: io, format (missing key / tensor, wrong shape,
  // message names it), unsupported (architecture, tensor type, MoE combination,
  // tokenizer model). The tokenizer is built when tokenizer.ggml.model is present.
  static Result<std::unique_ptr<Model>> load(const std::string& path, const ModelParams& params);
  // Same from an already opened file (tests; the Model takes ownership).
  static Result<std::unique_ptr<Model>> from_gguf(std::unique_ptr<gguf::GgufFile> file, const ModelParams& params);

  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const Hparams& hparams() const noexcept { return hp_; }
  const std::string& architecture() const noexcept { return hp_.arch; }
  // The tokenizer from the file's tokenizer.ggml.* keys. Precondition: has_tokenizer()
  // (false only for files without tokenizer.ggml.model, e.g. test models).
  const Tokenizer& tokenizer() const noexcept { return *tokenizer_; }
  bool has_tokenizer() const noexcept { return tokenizer_ != nullptr; }
  // "qwen3moe 8L 256d 32x4 experts F16"
  std::string description() const;
  const ArchConfig& config() const noexcept { return cfg_; }
  // The RoPE parameters of layer il (sliding-window layers have their own;
  // rope_config.h). Precondition: 0 <= il < n_layer_all.
  const ops::RopeScaling& rope_scaling(int32_t il) const noexcept {
    return hp_.is_swa(il) ? rope_swa_ : rope_full_;
  }
  const ModelWeights& weights() const noexcept { return w_; }
  const ModelParams& params() const noexcept { return params_; }
  const gguf::GgufFile& file() const noexcept { return *file_; }
  // Bytes of weights held in LES's own memory (WeightMemory), and whether they are mlock'ed.
  size_t weights_read_bytes() const noexcept;
  bool weights_locked() const noexcept;
  // Whether the routed experts are views into the file mapping.
  bool experts_mapped() const noexcept { return experts_mapped_; }
  // What a user should know about this model (the tokenizer's warnings, a
  // failed lock_weights), one sentence each.
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }
  // The resident expert source (views into the mapping or the read weights). Stateless, shared by contexts.
  ExpertSource& resident_experts() const noexcept { return *experts_; }
  // Advises the OS that the routed experts' pages of the mapping are read at
  // random (MADV_RANDOM: no readahead pulls them in around dense weights) and
  // drops those already mapped (MADV_DONTNEED), so they leave the resident
  // set. Called by a streaming expert source (src/sched), which reads expert
  // bytes through the I/O reactor instead; a resident Context of the same
  // model still works (its pages fault back in from the file). Best effort,
  // no error: a buffer that is not a mapping is left alone (also experts held
  // in LES's memory, WeightMemory::read). Thread-safe.
  void release_expert_pages() const noexcept;

 private:
  // Tests reach the MoE variants (sigmoid gating, no renormalisation, weight
  // scale, selection bias) that the shared layers compute for architectures
  // to come but that no supported architecture's file may select
  // (metadata_policy.h).
  friend struct test::ModelAccess;
  Model() = default;
  ModelParams params_;
  std::unique_ptr<gguf::GgufFile> file_;
  std::unique_ptr<gguf::TensorArena> arena_;  // weights read into memory (before w_, which points into it)
  bool experts_mapped_ = true;
  std::vector<std::string> warnings_;
  Hparams hp_;
  ArchConfig cfg_;
  ModelWeights w_;
  ops::RopeScaling rope_full_, rope_swa_;
  std::unique_ptr<ExpertSource> experts_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

// Every reason LES cannot run `file` as a model, each a Status naming what
// (a missing or invalid key, metadata LES refuses with its value, a tensor
// type without a kernel, tensors the architecture does not compute, the
// tokenizer); empty when Model::from_gguf would load it. Reads no tensor
// bytes. Model::from_gguf refuses with all of them in one status.
// Thread-safety: pure function of the file.
std::vector<Status> model_support_problems(const gguf::GgufFile& file);

}  // namespace les
