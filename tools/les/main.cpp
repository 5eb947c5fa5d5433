// `les`: the LES command-line tool (run, chat, bench, inspect, ...). See README.md.
//
// `les --version` (or `les version`) prints the library version and what this
// build runs on; an unknown subcommand is a usage error that lists the known
// ones (exit 2).
#include <les/les.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <fcntl.h>

#include "commands.h"
#include "common/cli_values.h"
#include "io/io_factory.h"
#include "kernels/cpu_features.h"
#include "kernels/kernels.h"
#include "common/sigbus_report.h"
#include "serve_launcher.h"

namespace {

// What this build reads streamed experts with, and whether this system lets
// it: io_uring is tried (a kernel or seccomp policy may refuse it; --io auto
// then reads with pread).
std::string expert_reads() {
#if defined(LES_HAVE_LIBURING)
  auto uring = les::io::create_io_backend(les::io::IoBackendKind::io_uring, les::io::IoOptions{});
  std::string s = uring.ok() ? "io_uring (usable here) and pread"
                             : "io_uring (built; refused here: " + uring.status().message() + ", so pread) and pread";
#else
  std::string s = "pread (built without io_uring)";
#endif
#if defined(LES_HAVE_DISPATCH_IO)
  s += " and dispatch_io";
#endif
#if defined(O_DIRECT)
  s += "; O_DIRECT where the model's file system allows it (les run --stats says whether a run has it)";
#else
  s += "; no O_DIRECT on this system (reads go through the page cache)";
#endif
  return s;
}

int print_version() {
  const les::kernels::KernelTier tier = les::kernels::best_kernel_tier();
  std::printf("les %s (C API %d.%d.%d)\nkernels: %s (CPU: %s)\nexpert reads: %s\n", les_version(), LES_VERSION_MAJOR,
              LES_VERSION_MINOR, LES_VERSION_PATCH, les::kernels::kernel_tier_name(tier),
              les::kernels::cpu_features_string(les::kernels::detect_cpu_features()).c_str(), expert_reads().c_str());
  return 0;
}

// CLI11's parse and validation errors as the tool's other usage errors:
// "les CMD: MESSAGE (les CMD --help lists the options)".
// Without a known subcommand: "les: MESSAGE (les --help lists the commands)".
std::string failure_message(const std::string& cmd, const CLI::Error& e) {
  if (cmd.empty()) return std::string("les: ") + e.what() + " (les --help lists the commands)\n";
  return "les " + cmd + ": " + e.what() + " (les " + cmd + " --help lists the options)\n";
}

}  // namespace

int main(int argc, char** argv) {
  // A model file truncated or replaced under a run is named, not a silent SIGBUS (sigbus_report.h).
  les::tool::install_sigbus_report(argc >= 2 && argv[1][0] != '-' ? argv[1] : "");
  CLI::App app{"les: run Mixture-of-Experts GGUF models with expert streaming"};
  app.require_subcommand(1);
  les::tool::ToolState state;
  les::tool::register_bench(app, state);
  les::tool::register_imatrix(app, state);
  les::tool::register_inspect(app, state);
  les::tool::register_run(app, state);
  les::tool::register_chat(app, state);
  les::tool::register_perplexity(app, state);
  les::tool::register_quantize(app, state);
  les::tool::register_repack(app, state);
  les::tool::register_serve_launcher(app);
  les::tool::register_synth(app, state);
  les::tool::register_tokenize(app, state);
  les::tool::refuse_empty_values_take_last(app);
  app.footer("les --version (or les version) prints the version, the kernel tier and the CPU features.");
  if (argc >= 2 && std::strcmp(argv[1], "serve") == 0) return les::tool::exec_serve(argc, argv);
  if (argc >= 2 && (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "version") == 0))
    return print_version();
  std::string known;
  bool is_known = false;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    known += (known.empty() ? "" : ", ") + sub->get_name();
    is_known = is_known || (argc >= 2 && sub->get_name() == argv[1]);
  }
  if (argc >= 2 && argv[1][0] != '-' && !is_known) {
    std::fprintf(stderr, "les: unknown command '%s'; commands: %s, version (see les --help)\n", argv[1],
                 known.c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and exits 0; every other parse or validation error is a
    // usage error: exit 2, as the subcommands' own argument checks do.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fputs(failure_message(is_known ? argv[1] : std::string(), e).c_str(), stderr);
    return 2;
  }
  return state.exit_code;
}
