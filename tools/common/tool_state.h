// What a subcommand's callback hands back to its executable's main(): the
// exit status (0 success, 1 error, 2 usage). Shared by `les` (les/commands.h)
// and `les-serve` (serve/cmd_serve.h).
#pragma once

namespace les::tool {

struct ToolState {
  int exit_code = 0;
};

}  // namespace les::tool
