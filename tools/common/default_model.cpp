// The embedded default model; see default_model.h.
#include "common/default_model.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/gguf/gguf_reader.h"

namespace les::tool {

Result<std::string> default_model_path() {
  std::filesystem::path dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (xdg != nullptr && *xdg != '\0') dir = std::filesystem::path(xdg) / "les";
  else if (home != nullptr && *home != '\0') dir = std::filesystem::path(home) / ".cache" / "les";
  else return invalid_argument_error("default model: neither XDG_CACHE_HOME nor HOME is set; pass -m MODEL.gguf");
  return (dir / "default-tiny-qwen3moe.gguf").string();
}

Result<DefaultModel> ensure_default_model() {
  DefaultModel out;
  LES_ASSIGN_OR_RETURN(out.path, default_model_path());
  LES_ASSIGN_OR_RETURN(out.preset, synth_preset("tiny"));

  std::error_code ec;
  if (std::filesystem::exists(out.path, ec)) {
    auto f = gguf::GgufFile::open(out.path, gguf::ReadOptions{.use_mmap = false});
    if (f.ok()) {
      auto v = (*f)->get_uint_or(kSynthVersionKey, 0);
      if (v.ok() && *v == kSynthVersion) return out;
    }
    // Stale or damaged: fall through and regenerate.
  }
  const std::filesystem::path dir = std::filesystem::path(out.path).parent_path();
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("default model: cannot create " + dir.string() + ": " + ec.message());

  const std::string tmp = out.path + ".part" + std::to_string(::getpid());
  SynthOptions opts;  // F16, fixed seed: every machine gets the same file
  auto info = write_synth_model(out.preset, opts, tmp);
  if (!info.ok()) {
    std::filesystem::remove(tmp, ec);
    return info.status().with_context("generating the default model");
  }
  std::filesystem::rename(tmp, out.path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return io_error("default model: cannot rename " + tmp + " to " + out.path + ": " + ec.message());
  }
  out.generated = true;
  return out;
}

}  // namespace les::tool
