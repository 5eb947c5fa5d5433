// `les inspect FILE.gguf` (placeholder until the GGUF reader lands).
#include "les/commands.h"

namespace les::tool {
void register_inspect(CLI::App& app, ToolState& state) {
  auto* cmd = app.add_subcommand("inspect", "Print a GGUF file's architecture, hyperparameters and tensors");
  auto path = std::make_shared<std::string>();
  cmd->add_option("file", *path, "GGUF file")->required();
  cmd->callback([&state, path] { state.exit_code = 1; std::fprintf(stderr, "inspect: not implemented yet\n"); });
}
}  // namespace les::tool
