// Shared model and sampling options of run, chat and bench; see model_options.h.
#include "common/model_options.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <random>
#include <thread>

#include "common/default_model.h"

namespace les::tool {
namespace {

// The library's log lines: warnings go to stderr; errors are dropped because
// every failing call's status and message are printed by the tool itself.
void log_to_stderr(les_log_level level, const char* msg, void* user_data) {
  if (level == LES_LOG_WARN) std::fprintf(stderr, "les %s: warning: %s\n", static_cast<const char*>(user_data), msg);
}

}  // namespace

void use_tool_log(const char* tool, les_model_params& mp) {
  mp.log_callback = log_to_stderr;
  mp.log_user_data = const_cast<char*>(tool);
}

double peak_rss_mib() {
  struct rusage ru {};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
#if defined(__APPLE__)
  return static_cast<double>(ru.ru_maxrss) / (1024.0 * 1024.0);  // bytes
#else
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // KiB
#endif
}

void warn_threads_beyond_cores(const char* tool, int n_threads) {
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores > 0 && n_threads > static_cast<int>(cores))
    std::fprintf(stderr, "les %s: warning: -t %d is more threads than this machine's %u cores; expect it to be slower\n",
                 tool, n_threads, cores);
}

int fail_c(const char* tool, const std::string& what, les_status st, const char* detail, int code) {
  std::fprintf(stderr, "les %s: %s: %s: %s\n", tool, what.c_str(), les_status_name(st), detail);
  return code;
}

namespace {

// The split of --mem-limit-mb (les_context_memory_plan); sets the budget it chose.
void report_memory_plan(const char* tool, ModelOptions& o, const ContextHandle& ctx, bool* streaming) {
  les_memory_plan mp{};
  mp.struct_size = sizeof mp;
  if (les_context_memory_plan(ctx.p, &mp) != LES_OK) return;
  constexpr double mib = 1024.0 * 1024.0;
  const auto m = [](uint64_t b) { return static_cast<double>(b) / mib; };
  std::fprintf(stderr, "les %s: memory limit %.1f MiB = process %.1f", tool, m(mp.limit_bytes), m(mp.baseline_bytes));
  if (mp.vision_bytes > 0) std::fprintf(stderr, " + vision encoder %.1f", m(mp.vision_bytes));
  if (mp.draft_bytes > 0) std::fprintf(stderr, " + draft model %.1f", m(mp.draft_bytes));
  std::fprintf(stderr, " + dense %.1f + KV cache %.1f (n_ctx %d) + scratch %.1f", m(mp.dense_bytes), m(mp.kv_bytes),
               mp.n_ctx, m(mp.scratch_bytes));
  const uint64_t experts = mp.resident ? mp.routed_bytes : mp.expert_budget_bytes;
  const uint64_t used =
      mp.baseline_bytes + mp.vision_bytes + mp.draft_bytes + mp.dense_bytes + mp.kv_bytes + mp.scratch_bytes + experts;
  // What the plan leaves unused, so that the parts add up to the limit.
  const double headroom = mp.limit_bytes > used ? m(mp.limit_bytes - used) : 0.0;
  const char* experts_label = mp.resident ? "experts" : "expert budget";
  if (mp.routed_bytes > 0 || !mp.resident) std::fprintf(stderr, " + %s %.1f", experts_label, m(experts));
  if (headroom >= 0.05) std::fprintf(stderr, " + headroom %.1f", headroom);
  if (mp.resident)
    std::fprintf(stderr, " MiB (all resident)\n");
  else
    std::fprintf(stderr, " MiB (streamed; one token's experts need %.1f MiB)\n", m(mp.min_expert_bytes));
  o.budget_mb = mp.resident ? 0.0 : m(mp.expert_budget_bytes);
  *streaming = !mp.resident;
}

// A --budget-mb that cannot hold one token's experts, or that holds them all.
void warn_budget_size(const char* tool, double budget_mb, const les_model* model, const les_context* ctx) {
  les_stream_stats s{};
  s.struct_size = sizeof s;
  if (les_context_stream_stats(ctx, &s) != LES_OK) return;
  // Below one token's worth of experts the layer order evicts what the next
  // token needs first: the cache still hits (next_use) but reads most experts.
  if (s.budget_bytes < s.one_token_budget_bytes)
    std::fprintf(stderr,
                 "les %s: warning: --budget-mb %.1f is below one token's worth of experts (%.1f MiB: top-k "
                 "experts of every MoE layer plus scratch); most experts are read again every token\n",
                 tool, budget_mb, static_cast<double>(s.one_token_budget_bytes) / (1024.0 * 1024.0));
  // The cache never takes more slots than there are experts: the rest of the budget is not used.
  if (every_expert_fits(ctx, model))
    std::fprintf(stderr,
                 "les %s: note: --budget-mb %.1f holds every routed expert (%d slots), so only what they take is "
                 "used; without --budget-mb they would be resident and never read again\n",
                 tool, budget_mb, s.n_slots);
}

}  // namespace

bool every_expert_fits(const les_context* ctx, const les_model* model) {
  les_stream_stats s{};
  s.struct_size = sizeof s;
  if (les_context_stream_stats(ctx, &s) != LES_OK) return false;
  return static_cast<int64_t>(s.n_slots) >=
         static_cast<int64_t>(les_model_n_layer(model)) * static_cast<int64_t>(les_model_n_expert(model));
}

void add_model_options(CLI::App* cmd, ModelOptions& o) {
  cmd->add_option("-m,--model", o.model, "GGUF model file (default: the embedded random-weight tiny qwen3moe)");
  cmd->add_option("-t,--threads", o.n_threads, "Compute threads (0 = all cores)")->check(decimal_number())->capture_default_str();
  cmd->add_option("-c,--ctx", o.n_ctx, "Context size in tokens (0 = min(model's, 4096))")->check(decimal_number())->capture_default_str();
  cmd->add_option("--kv-type", o.kv_type, "KV cache type: f16, q8_0")
      ->check(CLI::IsMember({"f16", "q8_0"}))
      ->capture_default_str();
  cmd->add_option("--budget-mb", o.budget_mb,
                  "Stream routed experts from the file within this memory budget in MiB (cache + read buffers + "
                  "scheduler scratch; 0 = all resident)")
      ->check(decimal_number())
      ->capture_default_str();
  cmd->add_option("--mem-limit-mb", o.mem_limit_mb,
                  "Limit the whole process's peak RSS to this many MiB: the expert budget is what is left after "
                  "the process, dense weights, KV cache and scratch (experts resident when all fits; 0 = no limit)")
      ->check(decimal_number())
      ->capture_default_str();
  cmd->add_option("--prefetch-c", o.prefetch_c,
                  "Lookahead candidates per token, k..2k (-1 = k+2, 0 = on-demand reads only)")
      ->check(decimal_number())
      ->capture_default_str();
  add_io_option(cmd, o.io);
  cmd->add_option("--eviction", o.eviction, "Expert cache eviction: adaptive, next_use, lfu_aged, lru")
      ->check(CLI::IsMember({"adaptive", "next_use", "lfu_aged", "lru"}))
      ->capture_default_str();
  auto* weights = cmd->add_option("--weights", o.weights,
                                  "Where weights live: auto (dense weights read into memory when the model has "
                                  "routed experts, else mapped), mmap (all mapped: a file changed under the run "
                                  "raises SIGBUS), read (all read into memory; with --budget-mb only the dense "
                                  "weights: the experts stream)")
                      ->check(CLI::IsMember({"auto", "mmap", "read"}))
                      ->capture_default_str();
  cmd->add_flag_callback("--no-mmap", [&o] { o.weights = "read"; },
                         "Read the weights into memory, not a mapping (= --weights read)")
      ->excludes(weights);
  cmd->add_flag("--mlock", o.mlock, "Lock the weights read into memory in RAM (mlock; a failure is a warning)");
}

int validate_model_options(const char* tool, const ModelOptions& o) {
  if (o.n_ctx < 0) {
    std::fprintf(stderr, "les %s: --ctx must be >= 0 (0 = model default), got %d\n", tool, o.n_ctx);
    return 2;
  }
  if (o.n_threads < 0) {
    std::fprintf(stderr, "les %s: -t must be >= 0 (0 = all cores), got %d\n", tool, o.n_threads);
    return 2;
  }
  if (o.n_threads > les_max_threads()) {
    std::fprintf(stderr,
                 "les %s: -t %d is above the maximum %d (4 x the hardware threads; more only time-slice the same "
                 "cores)\n",
                 tool, o.n_threads, les_max_threads());
    return 2;
  }
  // 1 TiB: far beyond any device, and exactly representable in the uint64 byte count.
  constexpr double kMaxBudgetMib = 1024.0 * 1024.0;
  if (!std::isfinite(o.budget_mb) || o.budget_mb < 0 || o.budget_mb > kMaxBudgetMib) {
    std::fprintf(stderr,
                 "les %s: --budget-mb must be a number in [0, %.0f] (MiB; 0 = all experts resident), got %g\n", tool,
                 kMaxBudgetMib, o.budget_mb);
    return 2;
  }
  if (!std::isfinite(o.mem_limit_mb) || o.mem_limit_mb < 0 || o.mem_limit_mb > kMaxBudgetMib) {
    std::fprintf(stderr, "les %s: --mem-limit-mb must be a number in [0, %.0f] (MiB; 0 = no limit), got %g\n", tool,
                 kMaxBudgetMib, o.mem_limit_mb);
    return 2;
  }
  if (o.prefetch_c < -1) {
    std::fprintf(stderr, "les %s: --prefetch-c must be -1 (k+2), 0 (on-demand reads) or k..2k, got %d\n", tool,
                 o.prefetch_c);
    return 2;
  }
  return 0;
}

int load_model(const char* tool, ModelOptions& o, ModelHandle& model) {
  if (o.model.empty()) {
    auto def = ensure_default_model();
    if (!def.ok()) {
      std::fprintf(stderr, "les %s: embedded default model: %s\n", tool, def.status().to_string().c_str());
      return 1;
    }
    std::fprintf(stderr,
                 "les %s: no -m given: using the embedded default, a random-weight %s (%d layers, %d experts) at "
                 "%s%s; its output is not meaningful text\n",
                 tool, def->preset.arch.c_str(), def->preset.n_layer, def->preset.n_expert, def->path.c_str(),
                 def->generated ? " (generated now)" : "");
    o.model = def->path;
  }
  warn_threads_beyond_cores(tool, o.n_threads);
  les_model_params mp = les_model_default_params();
  mp.n_threads = o.n_threads;
  use_tool_log(tool, mp);
  mp.weights = o.weights == "mmap" ? LES_WEIGHTS_MMAP : o.weights == "read" ? LES_WEIGHTS_READ : LES_WEIGHTS_AUTO;
  mp.lock_weights = o.mlock;
  // --weights read (--no-mmap) with --budget-mb: the experts stream from the file, so
  // reading them all into memory too would only cost memory. AUTO reads the dense
  // weights and leaves the experts in a mapping that a streaming context never
  // touches (no page of it is read, no SIGBUS). A model without routed experts
  // has nothing to stream: it is loaded again with every weight read.
  const bool stream_read = mp.weights == LES_WEIGHTS_READ && o.budget_mb > 0;
  if (stream_read) mp.weights = LES_WEIGHTS_AUTO;
  if (les_status st = les_model_load(o.model.c_str(), &mp, &model.p); st != LES_OK)
    return fail_c(tool, "loading " + o.model, st, les_last_error());
  if (stream_read && les_model_n_expert(model.p) == 0) {
    les_model_free(model.p);
    model.p = nullptr;
    mp.weights = LES_WEIGHTS_READ;
    if (les_status st = les_model_load(o.model.c_str(), &mp, &model.p); st != LES_OK)
      return fail_c(tool, "loading " + o.model, st, les_last_error());
  }
  return 0;
}

int create_context(const char* tool, ModelOptions& o, const ModelHandle& model, ContextHandle& ctx, bool* streaming,
                   const les_model* draft, const les_vision* vision) {
  *streaming = o.budget_mb > 0 && les_model_n_expert(model.p) > 0;
  if (o.budget_mb > 0 && !*streaming)
    std::fprintf(stderr, "les %s: note: %s has no routed experts; --budget-mb ignored, all weights resident\n", tool,
                 o.model.c_str());
  les_context_params cp = les_context_default_params();
  cp.n_ctx = o.n_ctx;
  cp.n_threads = o.n_threads;
  cp.kv_type = o.kv_type == "q8_0" ? LES_KV_Q8_0 : LES_KV_F16;
  // A positive budget never rounds down to 0 (which would mean "resident"): it
  // stays positive and is refused below the minimum with the minimum named.
  cp.expert_budget_bytes = static_cast<uint64_t>(std::ceil(o.budget_mb * 1024.0 * 1024.0));
  cp.memory_limit_bytes = static_cast<uint64_t>(std::floor(o.mem_limit_mb * 1024.0 * 1024.0));
  if (o.mem_limit_mb > 0 && cp.memory_limit_bytes == 0) cp.memory_limit_bytes = 1;  // never "no limit"
  cp.draft_model = draft;
  cp.vision = vision;
  cp.prefetch_candidates = o.prefetch_c;
  cp.io_backend = io_backend_from_option(o.io);
  cp.eviction = o.eviction == "lru"        ? LES_EVICTION_LRU
                : o.eviction == "lfu_aged" ? LES_EVICTION_LFU_AGED
                : o.eviction == "next_use" ? LES_EVICTION_NEXT_USE
                                           : LES_EVICTION_ADAPTIVE;
  // No progress callback: the expert cache's pages fault in on a background thread
  // while the prompt runs (Linux 5.14+; les_context_params.progress_callback).
  const les_status created = les_context_create(model.p, &cp, &ctx.p);
  if (created != LES_OK)
    return fail_c(tool, "creating the context", created, les_last_error(),
                  created == LES_ERR_INVALID_ARGUMENT ? 2 : 1);
  if (cp.memory_limit_bytes > 0) report_memory_plan(tool, o, ctx, streaming);
  if (*streaming && o.mem_limit_mb == 0) warn_budget_size(tool, o.budget_mb, model.p, ctx.p);
  const int32_t n_ctx_train = les_model_n_ctx_train(model.p);
  if (n_ctx_train > 0 && les_context_n_ctx(ctx.p) > n_ctx_train)
    std::fprintf(stderr,
                 "les %s: warning: n_ctx %d is beyond the model's training context (%d tokens); text past %d tokens "
                 "may degrade\n",
                 tool, les_context_n_ctx(ctx.p), n_ctx_train, n_ctx_train);
  return 0;
}

int open_model(const char* tool, ModelOptions& o, ModelHandle& model, ContextHandle& ctx, bool* streaming) {
  if (int rc = load_model(tool, o, model)) return rc;
  return create_context(tool, o, model, ctx, streaming, nullptr);
}

void add_sampling_options(CLI::App* cmd, SamplingOptions& o) {
  const auto num = [cmd](const std::string& name, auto& value, const std::string& help) {
    cmd->add_option(name, value, help)->check(decimal_number())->capture_default_str();
  };
  num("-n,--n-predict", o.n_predict, "Tokens to generate (-1 = until end of text)");
  num("--temp", o.sp.temperature, "Temperature (0 = greedy)");
  num("--top-k", o.sp.top_k, "Top-k (0 = off)");
  num("--top-p", o.sp.top_p, "Top-p in (0, 1] (1 = off)");
  num("--min-p", o.sp.min_p, "Min-p in [0, 1] (0 = off)");
  num("--repeat-penalty", o.sp.repeat_penalty, "Repetition penalty (1 = off)");
  num("--repeat-last-n", o.repeat_last_n, "Tokens the penalties look back over");
  num("--presence-penalty", o.sp.presence_penalty, "Presence penalty (0 = off)");
  num("--frequency-penalty", o.sp.frequency_penalty, "Frequency penalty (0 = off)");
  cmd->add_option("-s,--seed", o.seed, "RNG seed, 0 .. 2^64 - 1 (-1 or 2^64 - 1 = random)")->capture_default_str();
  cmd->add_flag("--ignore-eos", o.ignore_eos, "Keep generating past end-of-text tokens");
  cmd->add_option("--stop", o.stop, "Stop string (repeatable); the text stops before it")->allow_extra_args(false);
}

int validate_sampling_options(const char* tool, SamplingOptions& o) {
  if (o.n_predict < -1) {
    std::fprintf(stderr, "les %s: -n must be >= -1 (-1 = until end of text), got %d\n", tool, o.n_predict);
    return 2;
  }
  o.sp.penalty_last_n = o.repeat_last_n;
  // Decimal digits only: strtoull would take "-2" (as 2^64 - 2), " 1" and "0x10".
  const bool digits = !o.seed.empty() && o.seed.size() <= 20 &&
                      o.seed.find_first_not_of("0123456789") == std::string::npos;
  errno = 0;
  const unsigned long long seed = digits ? std::strtoull(o.seed.c_str(), nullptr, 10) : 0;
  if (o.seed != "-1" && (!digits || errno == ERANGE)) {
    std::fprintf(stderr, "les %s: --seed must be a whole number in 0..18446744073709551615 (-1 or 2^64 - 1: random), got '%s'\n",
                 tool, o.seed.c_str());
    return 2;
  }
  o.sp.seed = o.seed == "-1" ? kRandomSeed : seed;
  if (o.sp.seed == kRandomSeed) {  // drawn here, so the model line can print it (64 bits, as Sampler::create)
    std::random_device rd;
    do o.sp.seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    while (o.sp.seed == kRandomSeed);
  }
  if (Status s = validate(o.sp); !s.ok()) {
    // "sampler: FIELD ..." names the SamplerParams field; the user typed the flag.
    static const std::pair<const char*, const char*> kFlags[] = {
        {"temperature", "--temp"},        {"top_k", "--top-k"},
        {"top_p", "--top-p"},             {"min_p", "--min-p"},
        {"repeat_penalty", "--repeat-penalty"}, {"presence_penalty", "--presence-penalty"},
        {"frequency_penalty", "--frequency-penalty"}, {"penalty_last_n", "--repeat-last-n"}};
    std::string msg = s.message();
    if (msg.rfind("sampler: ", 0) == 0) msg.erase(0, 9);
    const char* flag = "sampling";
    for (const auto& [field, name] : kFlags)
      if (msg.rfind(std::string(field) + " ", 0) == 0) flag = name;
    std::fprintf(stderr, "les %s: %s: %s\n", tool, flag, msg.c_str());
    return 2;
  }
  return 0;
}

CLI::Option* add_io_option(CLI::App* cmd, std::string& io) {
  return cmd->add_option("--io", io, "I/O backend for streamed experts: auto, pread, io_uring, dispatch")
      ->check(CLI::IsMember({"auto", "pread", "io_uring", "dispatch"}))
      ->capture_default_str();
}

les_io_backend io_backend_from_option(const std::string& io) {
  if (io == "io_uring") return LES_IO_IO_URING;
  if (io == "pread") return LES_IO_PREAD;
  if (io == "dispatch") return LES_IO_DISPATCH_IO;
  return LES_IO_AUTO;
}

const CLI::Validator& decimal_number() {
  static const CLI::Validator v(
      [](std::string& text) -> std::string {
        if (text.empty()) return "";  // main's non-empty check names it ("empty value")
        // [+-] digits [. digits] [e [+-] digits], at least one digit before the exponent.
        size_t i = 0, mantissa = 0;
        const auto digits = [&] {
          size_t n = 0;
          while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++n;
          return n;
        };
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
        mantissa += digits();
        if (i < text.size() && text[i] == '.') ++i, mantissa += digits();
        bool ok = mantissa > 0;
        if (ok && i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
          ++i;
          if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
          ok = digits() > 0;
        }
        if (ok && i == text.size()) return "";
        return "a decimal number expected, got '" + text + "'";
      },
      "NUMBER", "decimal");
  return v;
}

les_generate_params generate_params(const SamplingOptions& o, std::vector<const char*>& stops) {
  les_generate_params gp = les_generate_default_params();
  gp.n_predict = o.n_predict;
  gp.ignore_eos = o.ignore_eos;
  gp.sampler.temperature = o.sp.temperature;
  gp.sampler.top_k = o.sp.top_k;
  gp.sampler.top_p = o.sp.top_p;
  gp.sampler.min_p = o.sp.min_p;
  gp.sampler.repeat_penalty = o.sp.repeat_penalty;
  gp.sampler.presence_penalty = o.sp.presence_penalty;
  gp.sampler.frequency_penalty = o.sp.frequency_penalty;
  gp.sampler.penalty_last_n = o.sp.penalty_last_n;
  gp.sampler.seed = o.sp.seed;
  stops.clear();
  for (const std::string& s : o.stop) stops.push_back(s.c_str());
  gp.stop = stops.empty() ? nullptr : stops.data();
  gp.n_stop = static_cast<int32_t>(stops.size());
  return gp;
}

}  // namespace les::tool
