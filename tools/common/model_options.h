// The options every subcommand that runs a model shares (`les run`, `les
// chat`, `les bench`): the model file, threads, context, KV cache type and
// expert streaming; and the sampling options of run and chat. Registration on
// a CLI11 subcommand, validation (usage errors, exit 2, before any file is
// opened) and opening the model and context through les.h.
//
// Thread-safety: single-threaded (the tool's main thread).
#pragma once

#include <les/les.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "common/handles.h"
#include "core/sampler.h"

namespace les::tool {

struct ModelOptions {
  std::string model;         // empty: the embedded default model
  int n_threads = 0;         // 0 = all cores
  int32_t n_ctx = 0;         // 0 = min(model's, 4096)
  std::string kv_type = "f16";
  double budget_mb = 0;      // > 0: stream routed experts through this budget
  double mem_limit_mb = 0;   // > 0: whole-process limit; chooses budget_mb (les_context_params.memory_limit_bytes)
  int32_t prefetch_c = -1;
  std::string io = "auto";
  std::string eviction = "adaptive";
  std::string weights = "auto";  // les_model_params.weights: auto, mmap, read (--no-mmap = read)
  bool mlock = false;            // les_model_params.lock_weights
};

// Adds -m, -t, -c, --kv-type, --budget-mb, --mem-limit-mb, --prefetch-c, --io, --eviction,
// --weights / --no-mmap, --mlock.
void add_model_options(CLI::App* cmd, ModelOptions& o);

// Usage errors: prints "les TOOL: ..." and returns 2; 0 when valid.
int validate_model_options(const char* tool, const ModelOptions& o);

// Sets mp's log callback: the library's warnings go to stderr as
// "les TOOL: warning: ..."; its error lines are dropped, because the tool
// prints every failing call's status and message itself (one line per error).
// `tool` must outlive the model.
void use_tool_log(const char* tool, les_model_params& mp);

// Loads the model (the embedded default when o.model is empty, with a note)
// and creates a context, printing warnings (a context beyond the training
// length, threads beyond the cores, a --budget-mb below one token's experts or
// holding them all) and errors as "les TOOL: ...". Returns 0,
// or the exit code (1 runtime error, 2 a budget below the minimum or a
// memory limit that cannot hold it). `streaming` is set when experts are
// streamed. With --mem-limit-mb, prints the plan's split ("les TOOL: memory
// limit ...") and sets o.budget_mb to the budget it chose (0: resident).
int open_model(const char* tool, ModelOptions& o, ModelHandle& model, ContextHandle& ctx, bool* streaming);

// open_model in two steps, for a caller that loads a draft model in between:
// load_model (the default-model note, the threads warning) and
// create_context (the rest; `draft`, may be null, is counted in
// --mem-limit-mb: les_context_params.draft_model).
int load_model(const char* tool, ModelOptions& o, ModelHandle& model);
// `vision` (may be null): the --mmproj encoder, counted in --mem-limit-mb too
// (les_context_params.vision; the split line names it).
int create_context(const char* tool, ModelOptions& o, const ModelHandle& model, ContextHandle& ctx, bool* streaming,
                   const les_model* draft, const les_vision* vision = nullptr);

// --io: the option (auto, pread, io_uring, dispatch) on `cmd`, and its value as
// les_io_backend. "dispatch" is libdispatch's dispatch_io, built on Apple and on
// Linux with the Swift toolchain (LES_IO_DISPATCH); where it is not built, creating
// the context fails with LES_ERR_UNSUPPORTED naming the option.
CLI::Option* add_io_option(CLI::App* cmd, std::string& io);
les_io_backend io_backend_from_option(const std::string& io);

// A check for a numeric option's text: a plain decimal number ("12", "-1",
// "0.5", "1e3"), so "0x10", "1_000" or "12abc" are usage errors naming the
// flag rather than read as 16 (CLI11 accepts C prefixes).
const CLI::Validator& decimal_number();

struct SamplingOptions {
  SamplerParams sp;
  std::string seed = "-1";  // -1 = random; else a whole number in 0 .. 2^64 - 1
  int32_t repeat_last_n = 64;
  int32_t n_predict = 128;
  bool ignore_eos = false;
  std::vector<std::string> stop;
};

// Adds -n, --temp, --top-k, --top-p, --min-p, the penalties, -s, --ignore-eos, --stop.
void add_sampling_options(CLI::App* cmd, SamplingOptions& o);

// Usage errors (exit 2) as above, naming the flag (--seed outside -1 and
// 0 .. 2^64 - 1, --temp, --top-p, ...); on success fills o.sp.seed (a random
// 64-bit seed for -1 and for 2^64 - 1, which is les.h's LES_SEED_RANDOM).
int validate_sampling_options(const char* tool, SamplingOptions& o);

// les_generate_params for the options; `stops` keeps the C strings alive.
les_generate_params generate_params(const SamplingOptions& o, std::vector<const char*>& stops);

// Peak resident set size of this process in MiB (getrusage ru_maxrss).
double peak_rss_mib();

// Whether a streaming context's expert cache has a slot for every routed
// expert (a --budget-mb at or above what the experts take: the cache never
// grows past that).
bool every_expert_fits(const les_context* ctx, const les_model* model);

// "les TOOL: warning: -t N is more threads than this machine's C cores ..." when it is.
void warn_threads_beyond_cores(const char* tool, int n_threads);

// A failed les.h call: "les TOOL: WHAT: STATUS: DETAIL"; returns `code`.
int fail_c(const char* tool, const std::string& what, les_status st, const char* detail, int code = 1);

}  // namespace les::tool
