// `les synth --preset tiny -o PATH [--type f16 --seed S]`: write a random-weight
// model of a preset shape (core/synth_model.h).
// Exit codes: 0 success, 1 runtime error, 2 bad arguments.
#include <cstdio>
#include <memory>
#include <string>

#include "core/synth_model.h"
#include "les/commands.h"

namespace les::tool {
namespace {

struct SynthCmdOptions {
  std::string preset = "tiny";
  std::string out;
  std::string type = "f16";
  uint64_t seed = 1234;
};

int synth(const SynthCmdOptions& o) {
  auto preset = synth_preset(o.preset);
  if (!preset.ok()) {
    std::fprintf(stderr, "les synth: %s\n", preset.status().message().c_str());
    return 2;
  }
  auto type = ggml_type_from_name(o.type.c_str());
  if (!type) {
    std::fprintf(stderr, "les synth: unknown type '%s'\n", o.type.c_str());
    return 2;
  }
  SynthOptions opts;
  opts.type = *type;
  opts.seed = o.seed;
  auto info = write_synth_model(*preset, opts, o.out);
  if (!info.ok()) {
    std::fprintf(stderr, "les synth: %s\n", info.status().to_string().c_str());
    return info.status().code() == StatusCode::invalid_argument ? 2 : 1;
  }
  std::fprintf(stderr, "les synth: wrote %s: %s %s, %d layers, %d experts (top-%d), n_vocab %d, %.2f M params, %llu bytes\n",
               o.out.c_str(), preset->name.c_str(), preset->arch.c_str(), preset->n_layer, preset->n_expert,
               preset->n_expert_used, info->n_vocab, static_cast<double>(info->n_params) / 1e6,
               static_cast<unsigned long long>(info->file_bytes));
  return 0;
}

}  // namespace

void register_synth(CLI::App& app, ToolState& state) {
  auto* cmd = app.add_subcommand("synth", "Write a random-weight model of a preset shape (for tests and demos)");
  auto o = std::make_shared<SynthCmdOptions>();
  std::string presets;
  for (const auto& n : synth_preset_names()) presets += (presets.empty() ? "" : ", ") + n;
  cmd->add_option("--preset", o->preset, "Shape preset: " + presets)->capture_default_str();
  cmd->add_option("-o,--output", o->out, "Output GGUF path")->required();
  cmd->add_option("--type", o->type, "Weight matrix type (f32, f16, q8_0, q6_k, q5_k, q4_k, q3_k, q4_0)")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Weight seed")->capture_default_str();
  cmd->callback([&state, o] { state.exit_code = synth(*o); });
}

}  // namespace les::tool
