// `les run`: generate text from a GGUF model, streaming it to stdout.
//
//   les run -m MODEL.gguf (-p "PROMPT" | -f FILE | -f -) -n 128 [--temp 0.8 --top-k 40
//           --top-p 0.95 --min-p 0.05 --seed S -t THREADS --ctx N --kv-type f16|q8_0
//           --ignore-eos --repeat-penalty 1.0 --stop STR ... --json --parse-special
//           --chat [--system TEXT] [--chat-template NAME]
//           --lookup [N] | --draft DRAFT.gguf [--draft-max D]]
//           [--mmproj MMPROJ.gguf --image PATH [--image PATH ...] [--vision-release]]
//
// --chat sends the prompt as one user turn (after an optional system turn)
// through the model's chat template (les_chat.h; --chat-template NAME picks
// one by name) with special tokens parsed, so `prompt tokens N` counts the
// templated prompt. --parse-special alone parses control-token texts
// (<|im_start|>, ...) in a raw prompt.
//
// Sampling defaults are llama.cpp's (temperature 0.8, top-k 40, top-p 0.95,
// min-p 0.05, no repetition penalty); --temp 0 is greedy. Without -m, the
// embedded default model (a random-weight qwen3moe, common/default_model.h) is
// generated once into the cache and used. Only the generated text goes to
// stdout (invalid UTF-8 bytes shown as U+FFFD, as in the reference fixtures'
// "text"); everything else (what ran, the statistics) goes to stderr:
// prompt tokens, prefill tok/s, decode tok/s and peak RSS (getrusage
// ru_maxrss). These `les run:` lines are a stable interface scripts read
// (run_report.h). --json prints, instead of streaming the text, one JSON
// object on stdout at the end: the text, the same figures and (with
// --budget-mb) the streaming statistics; the stderr lines stay.
// Exit codes: 0 success, 1 runtime error (missing or malformed model...),
// 2 bad arguments, 128 + N after signal N (interrupt.h: the first Ctrl-C or
// SIGTERM stops generation, and the text, "stop: cancelled" and the statistics
// are still printed; a second one exits at once).
//
// --budget-mb N streams routed experts through an N MiB expert cache
// (les_context_params.expert_budget_bytes; --prefetch-c, --io, --eviction set
// the lookahead and reader; --stats prints les_context_stream_stats and the
// per-layer figures). A dense model has nothing to stream and runs resident
// with a note.
//
// --lookup [N] / --draft MODEL decode speculatively (speculative_options.h):
// the same text as without them at --temp 0 (lossless), the same
// distribution otherwise; --stats adds the speculative totals (target passes,
// drafted / accepted tokens, expert union and bytes per token). The decode
// tok/s line counts every emitted token over the whole decode phase, drafting
// and verifying included.
//
// --route-trace FILE records which experts every MoE layer's router selected
// for every position (les_context_set_route_callback) and writes them as a
// route_trace v1 file (common/route_recorder.h; the format of the recorded
// traces bench_trace and bench/policy_table.py replay): the prompt's
// positions as phase 0, the generated tokens' as phase 1. A dense model is an
// error (exit 1, nothing to record); with --lookup / --draft / --mtp it is a
// usage error (exit 2: verify passes route drafts that may be rejected). The
// file is written also when generation stopped early (context full, interrupt).
//
// --mmproj FILE --image PATH ... (vision_options.h): each image is encoded by
// the vision encoder (les_vision.h) and put in front of the prompt text, as
// llama-mtmd-cli does: one media marker per image before -p's text, inside the
// user turn with --chat (through the chat template), else in front of the raw
// prompt; les_generate_with_images evaluates it. `prompt tokens N` then counts
// every position (text, image marker tokens and embedding rows). --image
// without --mmproj is a usage error; an unreadable mmproj or image exits 1
// with the library's message. --mem-limit-mb counts the encoder.
//
// The model, context and generation go through the C ABI (les/les.h), as an
// embedding app would. Two things les.h does not offer stay on the C++ side:
// checking the sampler parameters before any file is opened (so they are usage
// errors, exit 2) and the UTF-8 repair of printed pieces.
#include <les/les.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common/chat_prompt.h"
#include "common/interrupt.h"
#include "common/route_recorder.h"
#include "common/model_options.h"
#include "common/run_report.h"
#include "common/speculative_options.h"
#include "common/text_input.h"
#include "common/vision_options.h"

namespace les::tool {
namespace {

constexpr const char* kTool = "run";

struct RunOptions {
  ModelOptions model;
  SamplingOptions sampling;
  SpeculativeOptions speculative;
  VisionOptions vision;
  std::string prompt = "Once upon a time";
  std::string prompt_file;
  bool stats = false;
  bool json = false;
  bool parse_special = false;
  bool chat = false;
  std::string system;
  std::string chat_template;
  std::string chat_template_kwargs;
  bool print_prompt = false;
  std::string route_trace;  // --route-trace FILE
};

struct Output {
  bool json = false;
  std::string text;  // --json: the whole text, printed at the end
};

bool print_piece(les_token /*token*/, const char* piece, size_t len, void* user_data) {
  auto* out = static_cast<Output*>(user_data);
  const std::string text = valid_utf8(std::string_view(piece, len));
  if (out->json) {
    out->text += text;
    return true;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return true;
}

// Writes --route-trace's file: positions [0, n_past) of the context, the
// first n_prompt_tokens of them the prompt. Returns 0, or 1 after printing why.
int write_route_trace(const RunOptions& o, const les_model* model, const les_context* ctx, const RouteRecorder& rec,
                      const les_generate_stats& stats) {
  if (!rec.error().empty()) {
    std::fprintf(stderr, "les run: --route-trace: %s\n", rec.error().c_str());
    return 1;
  }
  std::vector<uint64_t> bytes;
  for (int32_t l = 0; l < les_model_n_layer(model); ++l) bytes.push_back(les_model_expert_bytes(model, l));
  char arch[64] = "";
  les_model_meta_str(model, "general.architecture", arch, sizeof arch);
  const std::string name = o.model.model.empty() ? std::string("default") : o.model.model;
  const std::string base = name.substr(name.find_last_of('/') == std::string::npos ? 0 : name.find_last_of('/') + 1);
  // The sequence's positions (a last token left pending was never routed).
  const int32_t n_positions = std::min(les_context_n_past(ctx), rec.n_positions());
  const std::string err = rec.write(o.route_trace, base, arch, bytes, stats.n_prompt_tokens, n_positions);
  if (!err.empty()) {
    std::fprintf(stderr, "les run: %s\n", err.c_str());
    return 1;
  }
  std::fprintf(stderr, "les run: route trace %s: %d positions (%d prompt), %d layers\n", o.route_trace.c_str(),
               n_positions, stats.n_prompt_tokens, les_model_n_layer(model));
  return 0;
}

int run(RunOptions o) {
  // Arguments first: bad values are usage errors (exit 2) before any file is touched.
  if (int rc = validate_model_options(kTool, o.model)) return rc;
  if (int rc = validate_sampling_options(kTool, o.sampling)) return rc;
  if (int rc = validate_speculative_options(kTool, o.speculative)) return rc;
  if (int rc = validate_vision_options(kTool, o.vision)) return rc;
  if (o.speculative.mtp && !o.vision.images.empty()) {  // refused by les_generate_with_images: say so before encoding
    std::fprintf(stderr, "les run: --mtp cannot be combined with --image (MTP drafting does not run over image positions; "
                         "use --lookup or --draft)\n");
    return 2;
  }
  if (!o.route_trace.empty() && o.speculative.enabled()) {
    std::fprintf(stderr, "les run: --route-trace cannot be combined with --lookup, --draft or --mtp (verify passes "
                         "route drafts that may be rejected)\n");
    return 2;
  }
  const ModelOptions& m = o.model;
  if (!o.chat && (!o.system.empty() || !o.chat_template.empty() || !o.chat_template_kwargs.empty())) {
    std::fprintf(stderr, "les run: --system, --chat-template and --chat-template-kwargs need --chat\n");
    return 2;
  }
  if (!check_template_kwargs(kTool, o.chat_template_kwargs)) return 2;
  if (m.budget_mb == 0 && m.mem_limit_mb == 0 &&
      ((o.stats && !o.speculative.enabled()) || m.prefetch_c != -1 || m.io != "auto" || m.eviction != "adaptive"))
    std::fprintf(stderr, "les run: note: --stats, --prefetch-c, --io and --eviction only apply with --budget-mb > 0 or --mem-limit-mb\n");
  if (!o.prompt_file.empty()) {
    auto text = read_prompt_file(o.prompt_file);
    if (!text.ok()) {
      std::fprintf(stderr, "les run: %s\n", text.status().message().c_str());
      return 1;
    }
    o.prompt = std::move(text).value();
  }

  ModelHandle model;
  ContextHandle ctx;
  bool streaming = false;
  if (int rc = load_model(kTool, o.model, model)) return rc;
  if (o.print_prompt) {  // the exact text generation would start from (BOS is the tokenizer's), then stop
    std::string text = media_markers(o.vision.images.size()) + o.prompt;
    if (o.chat) {
      if (int rc = resolve_chat_template(kTool, model.p, o.chat_template)) return rc;
      std::vector<ChatTurn> turns;
      if (!o.system.empty()) turns.push_back({"system", o.system});
      turns.push_back({"user", text});
      if (int rc = render_chat(kTool, model.p, o.chat_template, turns, true, &text, o.chat_template_kwargs)) return rc;
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  ModelHandle draft;  // before the context: --mem-limit-mb counts it
  if (int rc = open_draft_model(kTool, o.speculative, model.p, m.n_threads, draft)) return rc;
  VisionHandle vision;  // before the context too
  if (o.vision.enabled())
    if (int rc = load_vision(kTool, o.vision, model.p, m.n_threads, vision)) return rc;
  if (int rc = create_context(kTool, o.model, model, ctx, &streaming, draft.p, vision.p)) return rc;
  // From here a signal cancels the context (pending until les_generate consumes it), so one that
  // arrives while the images are encoded or the prompt rendered also stops the run.
  InterruptScope interrupt(ctx.p, kTool, kStopAfterToken);
  // Before the model line, as in les chat: a template warning comes first.
  if (o.chat)
    if (int rc = resolve_chat_template(kTool, model.p, o.chat_template)) return rc;
  char streamed[96] = "";
  if (streaming) std::snprintf(streamed, sizeof streamed, ", experts streamed (budget %.1f MiB%s)", m.budget_mb,
                               every_expert_fits(ctx.p, model.p) ? ": every expert fits" : "");
  std::fprintf(stderr, "les run: %s, n_ctx %d, seed %llu%s\n", model_desc(model.p).c_str(), les_context_n_ctx(ctx.p),
               static_cast<unsigned long long>(o.sampling.sp.seed), streamed);
  print_speculative_banner(kTool, o.speculative, draft.p);
  std::vector<ImageHandle> images;
  std::vector<const les_image*> image_ptrs;
  for (const std::string& path : o.vision.images) {
    images.emplace_back();
    if (int rc = encode_image(kTool, vision.p, path, images.back())) return rc;
    image_ptrs.push_back(images.back().p);
  }
  // The images go in front of the text, inside the user turn (llama-mtmd-cli's place).
  if (!images.empty()) o.prompt = media_markers(images.size()) + o.prompt;

  if (o.chat) {
    std::vector<ChatTurn> turns;
    if (!o.system.empty()) turns.push_back({"system", o.system});
    turns.push_back({"user", o.prompt});
    if (int rc = render_chat(kTool, model.p, o.chat_template, turns, true, &o.prompt, o.chat_template_kwargs))
      return rc;
  }
  std::vector<const char*> stops;
  les_generate_params gp = generate_params(o.sampling, stops);
  gp.parse_special = o.parse_special || o.chat;
  apply_speculative_options(o.speculative, draft.p, gp);
  Output out;
  out.json = o.json;
  // The prompt's bytes with their length: a prompt file may hold NUL bytes.
  gp.prompt_text = o.prompt.data();
  gp.prompt_text_len = o.prompt.size();
  std::unique_ptr<RouteRecorder> recorder;
  if (!o.route_trace.empty()) {
    if (les_model_n_expert(model.p) <= 0) {
      std::fprintf(stderr, "les run: --route-trace: %s has no routed experts (a dense model routes nothing)\n",
                   model_desc(model.p).c_str());
      return 1;
    }
    recorder = std::make_unique<RouteRecorder>(les_model_n_layer(model.p), les_model_n_expert(model.p),
                                               les_model_n_expert_used(model.p));
    if (les_status s = les_context_set_route_callback(ctx.p, RouteRecorder::callback, recorder.get()); s != LES_OK)
      return fail_c(kTool, "route trace", s, les_last_error());
  }
  const les_status st =
      images.empty() ? les_generate(ctx.p, nullptr, &gp, print_piece, &out)
                     : les_generate_with_images(ctx.p, nullptr, image_ptrs.data(),
                                                static_cast<int32_t>(image_ptrs.size()), &gp, print_piece, &out);
  if (!o.json) std::fputc('\n', stderr);  // ends the streamed text's line (--json streams nothing)
  // A full context ends generation like n_predict does, and so does an
  // interrupt: what fit (what was generated) was printed. A prompt that does
  // not fit at all is an error (nothing was decoded; the message names the sizes).
  if (st != LES_OK && st != LES_ERR_CONTEXT_FULL && st != LES_ERR_CANCELLED)
    return fail_c(kTool, "generation", st, les_context_last_error(ctx.p));
  les_generate_stats stats{};
  stats.struct_size = sizeof stats;
  if (les_status s = les_context_generate_stats(ctx.p, &stats); s != LES_OK)
    return fail_c(kTool, "statistics", s, les_last_error());
  if (st == LES_ERR_CONTEXT_FULL && stats.stop_reason != LES_STOP_CONTEXT_FULL)
    return fail_c(kTool, "generation", st, les_context_last_error(ctx.p));
  if (recorder) {
    if (int rc = write_route_trace(o, model.p, ctx.p, *recorder, stats)) return rc;
  }
  const double rss = peak_rss_mib();
  print_generate_summary(kTool, stats, rss);
  if (o.stats && o.speculative.enabled()) print_speculative_stats(kTool, stats);
  if (o.stats && vision.p != nullptr) print_vision_stats(kTool, vision.p);
  if (o.stats && streaming && print_stream_stats(kTool, model.p, ctx.p, m.io) != 0) return 1;
  if (o.json) {
    nlohmann::json j = generate_stats_json(stats, rss);
    j["model"] = m.model;
    j["desc"] = model_desc(model.p);
    j["n_ctx"] = les_context_n_ctx(ctx.p);
    j["seed"] = o.sampling.sp.seed;
    j["text"] = out.text;
    j["expert_budget_mib"] = streaming ? nlohmann::json(m.budget_mb) : nlohmann::json(nullptr);
    j["stream"] = streaming ? stream_stats_json(model.p, ctx.p) : nlohmann::json(nullptr);
    j["speculative"] = o.speculative.enabled() ? speculative_stats_json(stats) : nlohmann::json(nullptr);
    j["route_trace"] = recorder ? nlohmann::json(o.route_trace) : nlohmann::json(nullptr);
    std::printf("%s\n", j.dump().c_str());
  }
  return interrupt.signal_number() != 0 ? interrupt.exit_code() : 0;
}

}  // namespace

void register_run(CLI::App& app, ToolState& state) {
  auto* cmd = app.add_subcommand("run", "Generate text from a GGUF model (streams to stdout)");
  auto o = std::make_shared<RunOptions>();
  add_model_options(cmd, o->model);
  cmd->add_option("-p,--prompt", o->prompt, "Prompt text")->capture_default_str();
  cmd->add_option("-f,--file", o->prompt_file,
                  "Read the prompt from FILE ('-' = standard input; one trailing newline removed)")
      ->excludes(cmd->get_option("--prompt"));
  add_sampling_options(cmd, o->sampling);
  add_speculative_options(cmd, o->speculative);
  add_vision_options(cmd, o->vision, /*with_image=*/true);
  cmd->add_flag("--parse-special", o->parse_special,
                "Control-token texts in the prompt (<|im_start|>, ...) become those tokens");
  cmd->add_flag("--chat", o->chat, "Send the prompt as a user turn through the model's chat template");
  cmd->add_option("--system", o->system, "System message for --chat");
  add_chat_template_options(cmd, o->chat_template, o->chat_template_kwargs);
  cmd->add_flag("--print-prompt", o->print_prompt,
                "Print the prompt text generation would start from (with --chat: as the template renders it) "
                "and exit without generating");
  cmd->add_flag("--stats", o->stats,
                "Print expert-streaming statistics (with --budget-mb) and speculative-decoding totals (with --lookup "
                "or --draft)");
  cmd->add_option("--route-trace", o->route_trace,
                  "Write the router's expert choices of every position to FILE (route_trace v1)");
  cmd->add_flag("--json", o->json,
                "Print one JSON object (text, token counts, speeds, peak RSS, streaming statistics) on stdout at the "
                "end instead of streaming the text");
  cmd->callback([&state, o] { state.exit_code = run(*o); });
}

}  // namespace les::tool
