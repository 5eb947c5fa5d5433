// `les run`: generate text from a GGUF model, streaming it to stdout.
//
//   les run -m MODEL.gguf -p "PROMPT" -n 128 [--temp 0.8 --top-k 40 --top-p 0.95
//           --min-p 0.05 --seed S -t THREADS --ctx N --ignore-eos
//           --repeat-penalty 1.0 --stop STR ...]
//
// Sampling defaults are llama.cpp's (temperature 0.8, top-k 40, top-p 0.95,
// min-p 0.05, no repetition penalty); --temp 0 is greedy. Without -m, the
// embedded default model (a random-weight qwen3moe, les/default_model.h) is
// generated once into the cache and used. Only the generated text goes to
// stdout (invalid UTF-8 bytes shown as U+FFFD, as in the reference fixtures'
// "text"); everything else (what ran, the statistics) goes to stderr:
// prompt tokens, prefill tok/s, decode tok/s and peak RSS (getrusage ru_maxrss).
// Exit codes: 0 success, 1 runtime error (missing or malformed model...),
// 2 bad arguments.
#include <sys/resource.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/generate.h"
#include "core/model.h"
#include "core/sampler.h"
#include "core/tokenizer.h"
#include "core/utf8.h"
#include "les/commands.h"
#include "les/default_model.h"

namespace les::tool {
namespace {

struct RunOptions {
  std::string model;
  std::string prompt = "Once upon a time";
  int32_t n_predict = 128;
  int32_t n_ctx = 0;
  int n_threads = 0;
  bool ignore_eos = false;
  int64_t seed = -1;  // -1 = random
  int32_t repeat_last_n = 64;
  std::vector<std::string> stop;
  SamplerParams sp;
};

// Peak resident set size of this process in MiB (Linux reports ru_maxrss in KiB).
double peak_rss_mib() {
  struct rusage ru {};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
#if defined(__APPLE__)
  return static_cast<double>(ru.ru_maxrss) / (1024.0 * 1024.0);
#else
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
#endif
}

// Replaces each byte that is not part of valid UTF-8 with U+FFFD, so the
// terminal always receives valid text (random-weight models emit stray byte
// tokens). Safe per piece: the streaming detokenizer only hands out complete
// sequences and bytes that can never become valid.
std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const utf8::Decoded d = utf8::decode(s, i);
    if (d.valid) out.append(s.substr(i, d.len));
    else utf8::append(out, utf8::kReplacement);
    i += d.len;
  }
  return out;
}

int fail(const std::string& what, const Status& s) {
  std::fprintf(stderr, "les run: %s: %s\n", what.c_str(), s.to_string().c_str());
  return 1;
}

int run(RunOptions o) {
  // Arguments first: bad values are usage errors (exit 2) before any file is touched.
  if (o.n_ctx < 0) {
    std::fprintf(stderr, "les run: --ctx must be >= 0 (0 = model default), got %d\n", o.n_ctx);
    return 2;
  }
  if (o.n_threads < 0) {
    std::fprintf(stderr, "les run: -t must be >= 0 (0 = all cores), got %d\n", o.n_threads);
    return 2;
  }
  if (o.n_predict < -1) {
    std::fprintf(stderr, "les run: -n must be >= -1 (-1 = until end of text), got %d\n", o.n_predict);
    return 2;
  }
  o.sp.penalty_last_n = o.repeat_last_n;
  o.sp.seed = o.seed >= 0 ? static_cast<uint64_t>(o.seed) : std::random_device{}();
  if (Status s = validate(o.sp); !s.ok()) {
    std::fprintf(stderr, "les run: %s\n", s.message().c_str());
    return 2;
  }

  if (o.model.empty()) {
    auto def = ensure_default_model();
    if (!def.ok()) return fail("embedded default model", def.status());
    std::fprintf(stderr,
                 "les run: no -m given: using the embedded default, a random-weight %s (%d layers, %d experts) at "
                 "%s%s; its output is not meaningful text\n",
                 def->preset.arch.c_str(), def->preset.n_layer, def->preset.n_expert, def->path.c_str(),
                 def->generated ? " (generated now)" : "");
    o.model = def->path;
  }

  ModelParams mp;
  mp.n_threads = o.n_threads;
  auto model = Model::load(o.model, mp);
  if (!model.ok()) return fail("loading " + o.model, model.status());
  auto tokenizer = Tokenizer::from_gguf((*model)->file());
  if (!tokenizer.ok()) return fail("tokenizer of " + o.model, tokenizer.status());
  ContextParams cp;
  cp.n_ctx = o.n_ctx;
  cp.n_threads = o.n_threads;
  auto ctx = Context::create(**model, cp);
  if (!ctx.ok()) return fail("creating the context", ctx.status());
  auto sampler = Sampler::create(o.sp);
  if (!sampler.ok()) return fail("sampler", sampler.status());
  std::fprintf(stderr, "les run: %s, n_ctx %d, seed %llu\n", (*model)->description().c_str(), (*ctx)->n_ctx(),
               static_cast<unsigned long long>(o.sp.seed));

  GenerateParams gp;
  gp.n_predict = o.n_predict;
  gp.ignore_eos = o.ignore_eos;
  gp.stop = o.stop;
  auto stats = generate(**ctx, **tokenizer, *sampler, o.prompt, gp, [](std::string_view piece) {
    const std::string text = valid_utf8(piece);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return true;
  });
  std::fputc('\n', stderr);
  if (!stats.ok()) return fail("generation", stats.status());
  std::fprintf(stderr,
               "les run: prompt tokens %d, generated %d (stop: %s)\n"
               "les run: prefill %.2f tok/s (%.1f ms), decode %.2f tok/s (%d tokens, %.1f ms)\n"
               "les run: peak RSS %.1f MiB\n",
               stats->n_prompt_tokens, stats->n_generated, stop_reason_name(stats->stop_reason),
               stats->prefill_tok_per_s(), stats->prefill_seconds * 1e3, stats->decode_tok_per_s(), stats->n_decoded,
               stats->decode_seconds * 1e3, peak_rss_mib());
  return 0;
}

}  // namespace

void register_run(CLI::App& app, ToolState& state) {
  auto* cmd = app.add_subcommand("run", "Generate text from a GGUF model (streams to stdout)");
  auto o = std::make_shared<RunOptions>();
  cmd->add_option("-m,--model", o->model, "GGUF model file (default: the embedded random-weight tiny qwen3moe)");
  cmd->add_option("-p,--prompt", o->prompt, "Prompt text")->capture_default_str();
  cmd->add_option("-n,--n-predict", o->n_predict, "Tokens to generate (-1 = until end of text)")->capture_default_str();
  cmd->add_option("--temp", o->sp.temperature, "Temperature (0 = greedy)")->capture_default_str();
  cmd->add_option("--top-k", o->sp.top_k, "Top-k (0 = off)")->capture_default_str();
  cmd->add_option("--top-p", o->sp.top_p, "Top-p in (0, 1] (1 = off)")->capture_default_str();
  cmd->add_option("--min-p", o->sp.min_p, "Min-p in [0, 1] (0 = off)")->capture_default_str();
  cmd->add_option("--repeat-penalty", o->sp.repeat_penalty, "Repetition penalty (1 = off)")->capture_default_str();
  cmd->add_option("--repeat-last-n", o->repeat_last_n, "Tokens the penalties look back over")->capture_default_str();
  cmd->add_option("--presence-penalty", o->sp.presence_penalty, "Presence penalty (0 = off)")->capture_default_str();
  cmd->add_option("--frequency-penalty", o->sp.frequency_penalty, "Frequency penalty (0 = off)")->capture_default_str();
  cmd->add_option("-s,--seed", o->seed, "RNG seed (-1 = random)")->capture_default_str();
  cmd->add_option("-t,--threads", o->n_threads, "Compute threads (0 = all cores)")->capture_default_str();
  cmd->add_option("-c,--ctx", o->n_ctx, "Context size in tokens (0 = min(model's, 4096))")->capture_default_str();
  cmd->add_flag("--ignore-eos", o->ignore_eos, "Keep generating past end-of-text tokens");
  cmd->add_option("--stop", o->stop, "Stop string (repeatable); the text stops before it")->allow_extra_args(false);
  cmd->callback([&state, o] { state.exit_code = run(*o); });
}

}  // namespace les::tool
