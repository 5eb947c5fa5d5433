// `les-serve`: the executable behind `les serve` (tools/les/serve_launcher.h says why
// it is separate). `les-serve ARGS` is `les serve ARGS` (cmd_serve.cpp).
#include <CLI/CLI.hpp>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <string>
#include <vector>

#include "common/cli_values.h"
#include "common/sigbus_report.h"
#include "serve/cmd_serve.h"

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // glibc raises its mmap threshold after each large free (up to 32 MiB), after
  // which the multi-MiB buffers of an image request (the body, its base64
  // text, decoded bytes and pixels) come from per-thread arenas and stay
  // there: the resident set grew with every image request and never came back.
  // A fixed threshold keeps every buffer of 1 MiB or more in its own mapping,
  // returned on free (figures: bench/results/code_choices-2026-12-07.md).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
  les::tool::install_sigbus_report("serve");  // a model file changed under the server is named
  CLI::App app{"les serve: an OpenAI-compatible HTTP server", "les"};
  app.require_subcommand(1);
  les::tool::ToolState state;
  les::tool::register_serve(app, state);
  les::tool::refuse_empty_values_take_last(app);
  std::vector<char*> args = {argv[0], const_cast<char*>("serve")};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // as `les`: --help exits 0, every other parse error is a usage error
  }
  return state.exit_code;
}
