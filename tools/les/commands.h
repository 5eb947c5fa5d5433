// Subcommands of the `les` tool. Each lives in cmd_<name>.cpp and registers
// itself on the CLI11 app; `main.cpp` calls the registrations in order.
// A subcommand's callback sets `exit_code` (0 success, 1 error, 2 usage).
#pragma once

#include <CLI/CLI.hpp>

namespace les::tool {

struct ToolState {
  int exit_code = 0;
};

void register_bench(CLI::App& app, ToolState& state);
void register_imatrix(CLI::App& app, ToolState& state);
void register_inspect(CLI::App& app, ToolState& state);
void register_run(CLI::App& app, ToolState& state);
void register_chat(CLI::App& app, ToolState& state);
void register_perplexity(CLI::App& app, ToolState& state);
void register_quantize(CLI::App& app, ToolState& state);
void register_repack(CLI::App& app, ToolState& state);
void register_serve(CLI::App& app, ToolState& state);  // in les-serve only (serve_launcher.h)
void register_synth(CLI::App& app, ToolState& state);
void register_tokenize(CLI::App& app, ToolState& state);

}  // namespace les::tool
