// Rules on option values every `les` subcommand shares, applied once all
// subcommands are registered (by `les` and by `les-serve`, the executable
// behind `les serve`).
//
// Thread-safety: single-threaded (the tool's main thread).
#pragma once

#include <CLI/CLI.hpp>

namespace les::tool {

// An empty value (`--mem-limit-mb ""`, `--draft ""`) is a usage error naming
// the flag for every option of every subcommand of `app` that takes one,
// except free text where empty is a meaningful value (a prompt, a system
// message, a stop string, text to tokenize). A single-value option given
// twice takes the last value (as llama.cpp's tools do: `-t 2 -t 4` runs 4
// threads), instead of CLI11's error.
void refuse_empty_values_take_last(CLI::App& app);

}  // namespace les::tool
