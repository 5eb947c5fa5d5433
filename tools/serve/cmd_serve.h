// `les serve`'s options and its run: registers the "serve" subcommand on a
// CLI11 app (serve/main.cpp parses `les-serve ARGS` as `les serve ARGS`).
// The callback loads the model, starts the HTTP server (routes.h) and sets
// `state.exit_code` (0 after a clean stop, 1 on an error, 2 on a usage error).
#pragma once

#include <CLI/CLI.hpp>

#include "common/tool_state.h"

namespace les::tool {

void register_serve(CLI::App& app, ToolState& state);

}  // namespace les::tool
