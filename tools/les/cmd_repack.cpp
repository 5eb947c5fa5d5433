// `les repack IN.gguf OUT.gguf [--no-verify]`: rewrite a model so each routed
// expert is one contiguous 4 KiB-aligned blob (core/gguf/expert_repack.h), then
// compare every expert and dense tensor with the input.
// `les repack --verify-only IN.gguf OUT.gguf`: only the comparison.
// Exit codes: 0 success, 1 runtime error (I/O, malformed file, mismatch), 2 bad arguments.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "common/interrupt.h"
#include "core/gguf/expert_repack.h"

namespace les::tool {
namespace {

struct RepackCmdOptions {
  std::string in, out;
  bool no_verify = false;
  bool verify_only = false;
};

int exit_code_for(const Status& s) { return s.code() == StatusCode::invalid_argument ? 2 : 1; }

int repack(const RepackCmdOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  auto secs = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  if (o.verify_only) {
    auto n = verify_repacked(o.in, o.out);
    if (!n.ok()) {
      std::fprintf(stderr, "les repack: %s\n", n.status().to_string().c_str());
      return exit_code_for(n.status());
    }
    std::fprintf(stderr, "les repack: %s matches %s: %llu experts and every other tensor identical (%.1f s)\n",
                 o.out.c_str(), o.in.c_str(), static_cast<unsigned long long>(*n), secs());
    return 0;
  }
  // The writer's temporary file goes on a signal: "les repack: interrupted; OUT not written".
  const InterruptScope cleanup(nullptr, "repack", not_written_note(o.out).c_str(), o.out + ".tmp", OnSignal::exit_at_once);
  RepackOptions opts;
  opts.verify = !o.no_verify;
  auto r = repack_experts(o.in, o.out, opts);
  if (!r.ok()) {
    std::fprintf(stderr, "les repack: %s\n", r.status().to_string().c_str());
    return exit_code_for(r.status());
  }
  const double mb = static_cast<double>(r->out_file_bytes) / 1e6;
  std::fprintf(stderr,
               "les repack: wrote %s: %d MoE layers x %d experts, %.1f MB of experts + %.1f MB padding, "
               "%.1f MB total (input %.1f MB), %s, %.1f s (%.0f MB/s)\n",
               o.out.c_str(), r->n_moe_layers, r->n_expert, static_cast<double>(r->expert_bytes) / 1e6,
               static_cast<double>(r->padding_bytes) / 1e6, mb, static_cast<double>(r->in_file_bytes) / 1e6,
               opts.verify ? ("verified " + std::to_string(r->experts_verified) + " experts").c_str() : "not verified",
               secs(), mb / secs());
  return 0;
}

}  // namespace

void register_repack(CLI::App& app, ToolState& state) {
  auto* cmd = app.add_subcommand(
      "repack", "Rewrite a MoE model so each expert is one contiguous 4 KiB-aligned blob (one read per expert)");
  auto o = std::make_shared<RepackCmdOptions>();
  cmd->add_option("input", o->in, "Input GGUF (llama.cpp expert layout)")->required();
  cmd->add_option("output", o->out, "Output GGUF (contiguous expert layout)")->required();
  cmd->add_flag("--no-verify", o->no_verify, "Skip comparing the output with the input after writing");
  cmd->add_flag("--verify-only", o->verify_only, "Only compare an existing OUTPUT with INPUT");
  cmd->callback([&state, o] { state.exit_code = repack(*o); });
}

}  // namespace les::tool
