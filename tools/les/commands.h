// Subcommands of the `les` tool. Each lives in cmd_<name>.cpp and registers
// itself on the CLI11 app; `main.cpp` calls the registrations in order.
// A subcommand's callback sets `state.exit_code` (common/tool_state.h).
// `les serve` is the separate executable les-serve (tools/serve/; serve_launcher.h).
#pragma once

#include <CLI/CLI.hpp>

#include "common/tool_state.h"

namespace les::tool {

void register_bench(CLI::App& app, ToolState& state);
void register_imatrix(CLI::App& app, ToolState& state);
void register_inspect(CLI::App& app, ToolState& state);
void register_run(CLI::App& app, ToolState& state);
void register_chat(CLI::App& app, ToolState& state);
void register_perplexity(CLI::App& app, ToolState& state);
void register_quantize(CLI::App& app, ToolState& state);
void register_repack(CLI::App& app, ToolState& state);
void register_synth(CLI::App& app, ToolState& state);
void register_tokenize(CLI::App& app, ToolState& state);

}  // namespace les::tool
