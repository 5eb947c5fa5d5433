// `les serve` from the `les` executable: the server is its own executable,
// `les-serve` (installed next to `les`), so that only it links cpp-httplib
// and, through it, OpenSSL, zlib and brotli: loading those adds about 4 MiB
// to a process's resident baseline, which every `les run --mem-limit-mb`
// would otherwise pay for nothing. `les serve ARGS` execs `les-serve ARGS`
// (same process id, so signals reach the server).
//
// Thread-safety: single-threaded (the tool's main thread, before any thread starts).
#pragma once

#include <CLI/CLI.hpp>

namespace les::tool {

// Lists `serve` among the subcommands (for --help and the unknown-command
// message); `les` never parses its arguments: main() calls exec_serve first.
void register_serve_launcher(CLI::App& app);

// Replaces this process with `les-serve` from the directory of this
// executable (else from PATH), passing argv[2..]. Returns only on failure:
// prints why and returns 1.
int exec_serve(int argc, char** argv);

}  // namespace les::tool
