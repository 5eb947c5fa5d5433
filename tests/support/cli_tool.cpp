#include "support/cli_tool.h"

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "support/fixtures.h"

namespace les::test {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string sh_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

std::string les_binary() {
  const char* dir = std::getenv("LES_TEST_BINARY_DIR");
  REQUIRE(dir != nullptr);
  return std::string(dir) + "/tools/les";
}

RunResult run_les(const std::string& args, const std::string& env) {
  static int n = 0;
  const std::string base = temp_dir() + "/les-cli" + std::to_string(n++);
  const std::string cmd = env + " " + sh_quote(les_binary()) + " " + args + " >" + base + ".out 2>" + base + ".err";
  const int status = std::system(cmd.c_str());
  RunResult r;
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = read_file(base + ".out");
  r.err = read_file(base + ".err");
  return r;
}

double number_after(const std::string& text, const std::string& label) {
  const size_t p = text.find(label);
  REQUIRE(p != std::string::npos);
  return std::stod(text.substr(p + label.size()));
}

}  // namespace les::test
