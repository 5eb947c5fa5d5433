// Running the built `les` tool from tests: one call, its exit code and the
// captured stdout/stderr. The tool is found through LES_TEST_BINARY_DIR (set
// by CTest for the tools tests).
#pragma once

#include <string>

namespace les::test {

struct RunResult {
  int exit_code = -1;  // -1: did not exit normally (crash)
  std::string out, err;
};

// The whole file's bytes ("" when it cannot be read).
std::string read_file(const std::string& path);

// `s` single-quoted for /bin/sh.
std::string sh_quote(const std::string& s);

// Path of the built tool; REQUIREs LES_TEST_BINARY_DIR.
std::string les_binary();

// Runs `les ARGS` under /bin/sh with optional environment assignments `env`
// ("VAR=value ..."), capturing stdout and stderr in this process's temp dir.
RunResult run_les(const std::string& args, const std::string& env = "");

// The number printed right after `label` in `text` (a tool's summary line,
// e.g. "peak RSS "); the test fails when the label is absent.
double number_after(const std::string& text, const std::string& label);

}  // namespace les::test
