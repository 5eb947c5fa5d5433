// See serve_launcher.h. (Built into `les`, not `les-serve`.)
#include "serve_launcher.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace les::tool {

void register_serve_launcher(CLI::App& app) {
  app.add_subcommand("serve",
                     "Serve a model over an OpenAI-compatible HTTP API (/v1/chat/completions, ...); runs les-serve");
}

int exec_serve(int argc, char** argv) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string sibling = ec ? std::string() : (self.parent_path() / "les-serve").string();
  std::vector<char*> args;
  args.push_back(const_cast<char*>("les-serve"));
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  if (!sibling.empty()) execv(sibling.c_str(), args.data());
  const int sibling_errno = errno;
  execvp("les-serve", args.data());
  std::fprintf(stderr, "les serve: cannot run les-serve (the server executable, installed next to les): %s: %s\n",
               sibling.empty() ? "les-serve" : sibling.c_str(), std::strerror(sibling_errno));
  return 1;
}

}  // namespace les::tool
