// `les inspect FILE.gguf`: prints a GGUF file's version, architecture,
// hyperparameters ({arch}.* keys), tokenizer summary, other metadata, the
// tensor table (name, type, shape ne0-first, bytes) and byte totals split
// into routed-expert tensors (names containing "_exps") and dense tensors.
// Arrays are never printed whole: only their element type and length.
// A file the reader rejects prints its message to stderr and exits 1.
//
// Then what LES makes of it: RoPE (base, scaling), sliding window, attention
// scale and softcapping as LES reads them; per tensor type whether LES has a
// kernel; and whether LES runs the file, with every reason when it does not
// (model_support_problems).
//
// For a model LES runs, a memory plan follows: dense bytes (resident when
// experts stream), the routed experts and one expert's size, one token's
// worth of experts (n_expert_used experts in every MoE layer: an expert cache
// smaller than this cannot keep even one token's experts, so LRU stops
// working), the minimum --budget-mb (StreamingExpertSource::min_budget_bytes:
// one expert slot plus the scheduler's scratch), and the KV
// cache per 1k tokens for F16 and Q8_0 (kv_cache.h row sizes).
#include <cstdio>
#include <map>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "core/gguf/gguf_reader.h"
#include "core/model/hparams.h"
#include "core/model/model.h"
#include "core/model/weight_matmul.h"
#include "sched/streaming_expert_source.h"

namespace les::tool {
namespace {

using gguf::Array;
using gguf::GgufFile;
using gguf::Value;
using gguf::ValueType;

// A string value for display: printable ASCII, escaped otherwise, cut at 80 bytes.
std::string display_string(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < 80; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') out += fmt::format("\\{}", static_cast<char>(c));
    else if (c >= 0x20 && c < 0x7f) out.push_back(static_cast<char>(c));
    else out += fmt::format("\\x{:02x}", c);
  }
  out += "\"";
  if (s.size() > 80) out += fmt::format("... ({} bytes)", s.size());
  return out;
}

std::string display_value(const Value& v) {
  if (const Array* a = v.as_array()) return fmt::format("{}[{}]", gguf::value_type_name(a->elem_type), a->count);
  if (const std::string* s = v.as_string()) return display_string(*s);
  if (auto b = v.as_bool()) return *b ? "true" : "false";
  if (v.type() == ValueType::FLOAT32 || v.type() == ValueType::FLOAT64) return fmt::format("{:g}", v.raw_float());
  if (auto i = v.as_int()) return fmt::format("{}", *i);
  if (auto u = v.as_uint()) return fmt::format("{}", *u);
  return "?";
}

std::string display_shape(const gguf::TensorInfo& t) {
  std::string s = "[";
  for (uint32_t d = 0; d < t.n_dims; ++d) s += fmt::format("{}{}", d ? ", " : "", t.ne[d]);
  return s + "]";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

void print_kv(const gguf::KeyValue& kv) {
  fmt::print("  {:<48} {:<8} {}\n", kv.key, gguf::value_type_name(kv.value.type()), display_value(kv.value));
}

double mib(uint64_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); }

// What LES computes from the {arch}.* keys: RoPE and its scaling, sliding
// window, attention scale, softcapping (or why the keys do not parse).
void print_model_summary(const GgufFile& g) {
  auto hp = load_hparams(g);
  fmt::print("\nmodel (as LES reads it):\n");
  if (!hp.ok()) {
    fmt::print("  hyperparameters not read: {}\n", hp.status().message());
    return;
  }
  const RopeConfig& r = hp->rope;
  fmt::print("  rope                   {} pairs, {} dims rotated of {}, base {:g}, scaling {}\n",
             hp->n_rot / 2, hp->n_rot, hp->head_dim, r.freq_base, r.describe());
  if (hp->n_swa > 0) {
    int32_t n = 0;
    for (int32_t il = 0; il < hp->n_layer; ++il) n += hp->is_swa(il) ? 1 : 0;
    fmt::print("  sliding window         {} keys on {} of {} layers (their rope base {:g}, scale {:g})\n", hp->n_swa,
               n, hp->n_layer, r.freq_base_swa, r.freq_scale_swa);
  }
  if (hp->f_attention_scale != 0.0f) fmt::print("  attention scale        {:g}\n", hp->f_attention_scale);
  if (hp->final_logit_softcapping > 0.0f)
    fmt::print("  final logit softcap    {:g}\n", hp->final_logit_softcapping);
}

// Per tensor type: tensors, bytes and whether LES has a kernel for it.
void print_type_summary(const GgufFile& g) {
  std::map<uint32_t, std::pair<int, uint64_t>> by_type;
  for (const auto& t : g.tensors()) {
    auto& e = by_type[static_cast<uint32_t>(t.type)];
    e.first += 1;
    e.second += t.n_bytes;
  }
  if (by_type.empty()) return;
  fmt::print("\ntensor types:\n");
  for (const auto& [id, e] : by_type) {
    const GgmlType t = static_cast<GgmlType>(id);
    const bool k = matmul_type_supported(t);
    fmt::print("  {:<8} {:>5} tensors {:>12.1f} MiB  {}\n", ggml_type_name(t), e.first, mib(e.second),
               k ? "LES computes it" : (t == GgmlType::F32 ? "LES computes it (norms, biases)" : "no kernel in LES"));
  }
}

// Whether LES runs the file, with every reason when it does not.
void print_support(const GgufFile& g) {
  const std::vector<Status> reasons = model_support_problems(g);
  if (reasons.empty()) {
    fmt::print("\nLES support: runs this file\n");
    return;
  }
  fmt::print("\nLES support: cannot run this file ({} {}):\n", reasons.size(), reasons.size() == 1 ? "reason" : "reasons");
  for (const Status& r : reasons) fmt::print("  - {}\n", r.message());
}

// The memory plan described at the top; only for files LES can load as a model.
void print_memory_plan(const std::string& path, uint64_t dense, uint64_t routed) {
  ModelParams mp;
  mp.weights = WeightMemory::mmap;  // mapped, nothing read
  auto model = Model::load(path, mp);
  if (!model.ok()) {
    fmt::print("\nmemory plan: not shown ({})\n", model.status().message());
    return;
  }
  const Hparams& hp = (*model)->hparams();
  fmt::print("\nmemory plan:\n");
  fmt::print("  dense weights          {:>10.1f} MiB  (resident; all of the model when experts stay in memory)\n",
             mib(dense));
  const auto kv_row = [&](GgmlType t) {
    return *ggml_row_bytes(t, hp.n_embd_k()) + *ggml_row_bytes(t, hp.n_embd_v());
  };
  const bool q8_ok = hp.head_dim % 32 == 0 && hp.head_dim_v % 32 == 0;
  // Only attention layers hold a KV cache (a hybrid model's linear-attention
  // layers keep a fixed-size recurrent state instead).
  uint64_t attn_layers = 0;
  for (int32_t il = 0; il < hp.n_layer; ++il) attn_layers += hp.is_recurrent(il) ? 0 : 1;
  const uint64_t kv_f16 = attn_layers * 1024 * kv_row(GgmlType::F16);
  fmt::print("  KV cache per 1k tokens {:>10.1f} MiB  F16", mib(kv_f16));
  if (q8_ok) fmt::print(", {:.1f} MiB Q8_0 (--kv-type q8_0)", mib(attn_layers * 1024 * kv_row(GgmlType::Q8_0)));
  if (attn_layers < static_cast<uint64_t>(hp.n_layer))
    fmt::print("; {} of {} layers use attention", attn_layers, hp.n_layer);
  fmt::print("\n");
  if (hp.n_expert == 0) {
    fmt::print("  routed experts         none (a dense model: nothing to stream)\n");
    return;
  }
  int32_t moe_layers = 0;
  for (int32_t il = 0; il < hp.n_layer; ++il) {
    const std::string name = "blk." + std::to_string(il) + ".ffn_";
    for (const auto& t : (*model)->file().tensors())
      if (t.name.rfind(name, 0) == 0 && t.name.find("_exps") != std::string::npos) {
        ++moe_layers;
        break;
      }
  }
  const uint64_t per_expert = moe_layers > 0 ? routed / (static_cast<uint64_t>(moe_layers) * hp.n_expert) : 0;
  const uint64_t one_token = per_expert * static_cast<uint64_t>(hp.n_expert_used) * moe_layers;
  fmt::print("  routed experts         {:>10.1f} MiB  {} MoE layers x {} experts, {:.2f} MiB per expert\n", mib(routed),
             moe_layers, hp.n_expert, mib(per_expert));
  auto one_token_budget = sched::StreamingExpertSource::one_token_budget_bytes(**model, sched::StreamingParams{});
  fmt::print("  one token's experts    {:>10.1f} MiB  top-{} in every MoE layer", mib(one_token), hp.n_expert_used);
  if (one_token_budget.ok())
    fmt::print("; as --budget-mb {:.1f} MiB (4 KiB-aligned slots and scratch): a smaller budget cannot hold one "
               "token's experts\n",
               mib(*one_token_budget));
  else
    fmt::print("; as --budget-mb: not computed ({})\n", one_token_budget.status().message());
  auto min = sched::StreamingExpertSource::min_budget_bytes(**model, sched::StreamingParams{});
  if (min.ok())
    fmt::print("  minimum --budget-mb    {:>10.1f} MiB  (one expert slot and the scheduler's scratch)\n",
               mib(*min));
  else
    fmt::print("  minimum --budget-mb    not computed: {}\n", min.status().message());
}

int inspect(const std::string& path) {
  gguf::ReadOptions opts;
  opts.use_mmap = false;  // metadata only: inspecting never reads tensor bytes
  auto r = GgufFile::open(path, opts);
  if (!r.ok()) {
    std::fprintf(stderr, "les inspect: %s\n", r.status().to_string().c_str());
    return 1;
  }
  const GgufFile& g = **r;
  const std::string arch = g.architecture();
  fmt::print("file:          {} ({} bytes)\n", path, g.file_size());
  fmt::print("GGUF version:  {}\n", g.version());
  fmt::print("alignment:     {}, data section at byte {}\n", g.alignment(), g.data_offset());
  fmt::print("architecture:  {}\n", arch.empty() ? "(none)" : arch);
  if (const Value* name = g.find("general.name"); name && name->as_string())
    fmt::print("name:          {}\n", display_string(*name->as_string()));
  fmt::print("metadata:      {} keys; tensors: {}\n", g.metadata().size(), g.tensors().size());

  if (!arch.empty()) {
    fmt::print("\nhyperparameters ({}.*):\n", arch);
    for (const auto& kv : g.metadata())
      if (starts_with(kv.key, arch + ".")) print_kv(kv);
  }

  if (!arch.empty()) print_model_summary(g);

  const bool has_tokenizer = g.find("tokenizer.ggml.model") != nullptr || g.find("tokenizer.ggml.tokens") != nullptr;
  if (has_tokenizer) {
    fmt::print("\ntokenizer:\n");
    auto model = g.get_string_or("tokenizer.ggml.model", "?");
    auto pre = g.get_string_or("tokenizer.ggml.pre", "(none)");
    const Value* tokens = g.find("tokenizer.ggml.tokens");
    const Value* merges = g.find("tokenizer.ggml.merges");
    fmt::print("  tokenizer model {}, pre-tokenizer {}, vocab size {}, merges {}\n", model.ok() ? *model : "?",
               pre.ok() ? *pre : "?", tokens && tokens->as_array() ? tokens->as_array()->count : 0,
               merges && merges->as_array() ? merges->as_array()->count : 0);
    for (const auto& kv : g.metadata())
      if (starts_with(kv.key, "tokenizer.")) print_kv(kv);
  }

  fmt::print("\nother metadata:\n");
  for (const auto& kv : g.metadata())
    if (!(!arch.empty() && starts_with(kv.key, arch + ".")) && !starts_with(kv.key, "tokenizer.")) print_kv(kv);

  uint64_t total = 0, routed = 0;
  int64_t params = 0, routed_params = 0;
  if (!g.tensors().empty()) {
    fmt::print("\ntensors:\n  {:<40} {:<8} {:<22} {:>14} {:>14}\n", "name", "type", "shape (ne0 first)", "bytes",
               "file offset");
    for (const auto& t : g.tensors()) {
      fmt::print("  {:<40} {:<8} {:<22} {:>14} {:>14}\n", t.name, ggml_type_name(t.type), display_shape(t), t.n_bytes,
                 t.file_offset);
      total += t.n_bytes;
      params += t.n_elements();
      if (t.name.find("_exps") != std::string::npos) {
        routed += t.n_bytes;
        routed_params += t.n_elements();
      }
    }
  }
  print_type_summary(g);
  fmt::print("\ntotals:\n");
  fmt::print("  tensors       {:>14} bytes  {:>14} params  ({} tensors)\n", total, params, g.tensors().size());
  fmt::print("  routed experts{:>14} bytes  {:>14} params  ({:.1f}% of bytes; tensors named *_exps*)\n", routed,
             routed_params, total ? 100.0 * static_cast<double>(routed) / static_cast<double>(total) : 0.0);
  fmt::print("  dense         {:>14} bytes  {:>14} params\n", total - routed, params - routed_params);
  print_support(g);
  print_memory_plan(path, total - routed, routed);
  return 0;
}

}  // namespace

void register_inspect(CLI::App& app, ToolState& state) {
  auto* cmd = app.add_subcommand("inspect", "Print a GGUF file's architecture, hyperparameters and tensors");
  auto path = std::make_shared<std::string>();
  cmd->add_option("file", *path, "GGUF file")->required();
  cmd->callback([&state, path] { state.exit_code = inspect(*path); });
}

}  // namespace les::tool
