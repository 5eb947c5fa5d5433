// The embedded default model of `les run`: a random-weight qwen3moe generated
// once by the synth code (synth/synth_model.h) into the user's cache directory,
// so `les run` works on a fresh machine with no download.
//
// Path: $XDG_CACHE_HOME/les/default-tiny-qwen3moe.gguf, else
// $HOME/.cache/les/default-tiny-qwen3moe.gguf. A cached file is reused when it
// opens as GGUF and carries the current les.synth.version; otherwise it is
// regenerated (written to a per-process temporary name, then renamed, so
// concurrent runs never see a partial file).
//
// Thread-safety: touches the file system; safe across processes.
#pragma once

#include <string>

#include "synth/synth_model.h"
#include "util/status.h"

namespace les::tool {

struct DefaultModel {
  std::string path;
  SynthPreset preset;
  bool generated = false;  // true if this call wrote the file
};

// The cache path described above. Errors: invalid_argument if neither
// XDG_CACHE_HOME nor HOME is set.
Result<std::string> default_model_path();

// Returns the default model, generating it if needed. Errors: io (cannot
// create the directory or write the file), the errors of write_synth_model.
Result<DefaultModel> ensure_default_model();

}  // namespace les::tool
