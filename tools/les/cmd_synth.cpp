// `les synth --preset NAME -o PATH [--type T --expert-type T --output-type T
//  --generator exact|block_pool --seed S --threads N]`: write a random-weight
// model of a preset shape (synth/synth_model.h). Types default to the preset's
// (tiny: F16; small: Q4_K, output Q6_K; qwen3-30b-a3b: Q4_K, experts Q3_K,
// output Q6_K, block_pool generator; qwen35-35b-a3b: the hybrid qwen35moe
// shape, experts Q3_K, every other matrix Q4_K, block_pool). Prints the write speed.
// Exit codes: 0 success, 1 runtime error, 2 bad arguments.
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "common/interrupt.h"
#include "synth/synth_model.h"

namespace les::tool {
namespace {

struct SynthCmdOptions {
  std::string preset = "tiny";
  std::string out;
  std::string type, expert_type, output_type, generator;
  uint64_t seed = 1234;
  int threads = 0;
  bool quiet = false;
};

// Parses `name` into *t when given; false (after printing) for an unknown name.
bool parse_type(const std::string& name, GgmlType* t) {
  if (name.empty()) return true;
  auto v = ggml_type_from_name(name.c_str());
  if (!v) {
    std::fprintf(stderr, "les synth: unknown type '%s'\n", name.c_str());
    return false;
  }
  *t = *v;
  return true;
}

int synth(const SynthCmdOptions& o) {
  auto preset = synth_preset(o.preset);
  if (!preset.ok()) {
    std::fprintf(stderr, "les synth: %s\n", preset.status().message().c_str());
    return 2;
  }
  SynthOptions opts;
  opts.type = preset->default_type;
  GgmlType expert = preset->default_expert_type, output = preset->default_output_type;
  if (!parse_type(o.type, &opts.type)) return 2;
  // --type alone sets every matrix; the expert/output defaults follow it unless given.
  if (!o.type.empty()) expert = output = opts.type;
  if (!parse_type(o.expert_type, &expert) || !parse_type(o.output_type, &output)) return 2;
  opts.expert_type = expert;
  opts.output_type = output;
  opts.generator = preset->default_block_pool ? SynthGenerator::block_pool : SynthGenerator::exact;
  if (o.generator == "exact") opts.generator = SynthGenerator::exact;
  else if (o.generator == "block_pool") opts.generator = SynthGenerator::block_pool;
  else if (!o.generator.empty()) {
    std::fprintf(stderr, "les synth: unknown generator '%s' (exact, block_pool)\n", o.generator.c_str());
    return 2;
  }
  opts.seed = o.seed;
  opts.n_threads = o.threads;
  const auto t0 = std::chrono::steady_clock::now();
  auto secs = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  int last_pct = -1;
  if (!o.quiet) {
    opts.progress = [&](uint64_t done, uint64_t total) {
      const int pct = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
      if (pct / 10 != last_pct / 10 && total > (uint64_t{256} << 20)) {
        std::fprintf(stderr, "les synth: %3d%%  %.0f MB  %.1f s\n", pct, static_cast<double>(done) / 1e6, secs());
      }
      last_pct = pct;
    };
  }
  // The writer's temporary file goes on a signal: "les synth: interrupted; OUT not written".
  const InterruptScope cleanup(nullptr, "synth", not_written_note(o.out).c_str(), o.out + ".tmp", OnSignal::exit_at_once);
  auto info = write_synth_model(*preset, opts, o.out);
  if (!info.ok()) {
    std::fprintf(stderr, "les synth: %s\n", info.status().to_string().c_str());
    return info.status().code() == StatusCode::invalid_argument ? 2 : 1;
  }
  const double s = secs();
  std::fprintf(stderr,
               "les synth: wrote %s: %s %s, %d layers, %d experts (top-%d), n_vocab %d, %.2f M params, "
               "types %s / experts %s / output %s, %s generator, %llu bytes in %.1f s (%.0f MB/s, incl. fsync)\n",
               o.out.c_str(), preset->name.c_str(), preset->arch.c_str(), preset->n_layer, preset->n_expert,
               preset->n_expert_used, info->n_vocab, static_cast<double>(info->n_params) / 1e6,
               ggml_type_name(opts.type), ggml_type_name(expert), ggml_type_name(output),
               opts.generator == SynthGenerator::block_pool ? "block_pool" : "exact",
               static_cast<unsigned long long>(info->file_bytes), s, static_cast<double>(info->file_bytes) / 1e6 / s);
  return 0;
}

}  // namespace

void register_synth(CLI::App& app, ToolState& state) {
  auto* cmd = app.add_subcommand("synth", "Write a random-weight model of a preset shape (for tests, demos, benchmarks)");
  auto o = std::make_shared<SynthCmdOptions>();
  std::string presets;
  for (const auto& n : synth_preset_names()) presets += (presets.empty() ? "" : ", ") + n;
  cmd->add_option("--preset", o->preset, "Shape preset: " + presets)->capture_default_str();
  cmd->add_option("-o,--output", o->out, "Output GGUF path")->required();
  cmd->add_option("--type", o->type,
                  "Type of every weight matrix (f32, f16, q8_0, q6_k, q5_k, q4_k, q3_k, q4_0); default: the preset's");
  cmd->add_option("--expert-type", o->expert_type, "Type of the routed experts (ffn_*_exps)");
  cmd->add_option("--output-type", o->output_type, "Type of output.weight");
  cmd->add_option("--generator", o->generator, "exact (per element) or block_pool (fast, disk-bound); default: the preset's");
  cmd->add_option("--seed", o->seed, "Weight seed")->capture_default_str();
  cmd->add_option("--threads", o->threads, "Generation threads (0 = all cores)")->capture_default_str();
  cmd->add_flag("-q,--quiet", o->quiet, "No progress lines");
  cmd->callback([&state, o] { state.exit_code = synth(*o); });
}

}  // namespace les::tool
