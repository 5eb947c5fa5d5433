// `les`: the LES command-line tool (run, inspect, ...). See README.md.
#include <cstdio>

#include "les/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"les: run Mixture-of-Experts GGUF models with expert streaming"};
  app.require_subcommand(1);
  les::tool::ToolState state;
  les::tool::register_inspect(app, state);
  les::tool::register_run(app, state);
  les::tool::register_repack(app, state);
  les::tool::register_synth(app, state);
  les::tool::register_tokenize(app, state);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and exits 0; every other parse or validation error is a
    // usage error: exit 2, as the subcommands' own argument checks do.
    return app.exit(e) == 0 ? 0 : 2;
  }
  return state.exit_code;
}
