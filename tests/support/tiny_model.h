// Test helper: tiny models written in memory with LES's GgufWriter (F32
// weights, random with a fixed seed, every tensor of the qwen3moe layout;
// options drop, reshape or retype one tensor, add metadata keys, or set MoE
// variants and the exp_probs_b selection bias on the loaded model), loaded
// with Model::from_gguf. For tests of
// model loading, the MoE layer, the router and the lookahead predictor.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "util/status.h"

namespace les::test {

struct TinySpec {
  std::string arch = "qwen3moe";
  int n_layer = 1, n_embd = 32, n_head = 2, n_head_kv = 1, head_dim = 16, n_vocab = 16;
  int n_expert = 4, n_expert_used = 2, n_ff_exp = 8;
  std::map<std::string, double> extra_f32;     // extra float keys (suffix after "<arch>.")
  std::map<std::string, uint32_t> extra_u32;
  std::map<std::string, bool> extra_bool;
  std::map<std::string, std::string> extra_str;
  // MoE variants no supported architecture's file may select (metadata_policy.h):
  // applied to the loaded model's ArchConfig / weights (test::ModelAccess), not
  // written to the file.
  std::optional<ExpertGating> gating;        // router gating function
  std::optional<bool> renorm;                 // renormalise the top-k weights
  std::optional<float> weights_scale;         // scale the weights (0 = none)
  bool exp_probs_b = false;                   // a per-layer selection bias (random, scale 0.3)
  std::string drop_tensor;                     // omit this tensor
  std::string bad_shape_tensor;                // write this tensor with ne0 + 1
  std::string f16_norm_tensor;                 // write this 1-D tensor as F16
  std::map<std::string, GgmlType> raw_type;    // write these tensors as zero bytes of this type
};

// The model, or the status of a load that failed (model null).
struct TinyModel {
  std::vector<uint8_t> bytes;  // must outlive the model (GgufFile::parse)
  std::vector<std::vector<float>> bias;  // exp_probs_b per layer (the views point here)
  std::unique_ptr<Model> model;
  Status status;
};

// n normally distributed floats of standard deviation `scale`.
std::vector<float> randn(size_t n, float scale, std::mt19937& rng);

// Writes and loads the model `s` describes (REQUIREs that writing succeeds;
// a refused load is returned in .status).
TinyModel build_tiny_model(const TinySpec& s);

}  // namespace les::test
