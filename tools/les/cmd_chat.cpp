// `les chat`: an interactive multi-turn conversation in the terminal.
//
//   les chat -m MODEL.gguf [--system TEXT] [--chat-template NAME] [-n 512]
//            [sampling, context and --budget-mb options as in `les run`]
//            [--lookup [N] | --draft DRAFT.gguf [--draft-max D]]
//            [--mmproj MMPROJ.gguf [--vision-release]]
//
// Each line read from stdin is a user turn; the answer streams to stdout. The
// whole conversation goes through the chat template (les_chat.h) every turn
// and is tokenized; the context keeps the tokens it already holds that the new
// text starts with (les_context_tokens, les_context_trim) and evaluates only
// the rest, so a turn costs its own tokens, not the conversation's.
// Lines are read by LineReader (line_reader.h): whole at any length, also
// from a terminal (whose canonical mode would cut them at 4,095 bytes), with
// editing, history and multi-line bracketed paste there.
// Commands: /reset (forget the conversation, keep --system), /stats (the last
// answer's figures, and the streaming statistics with --budget-mb), /help
// (lists the commands and keys), /exit (or /quit). Any other line starting
// with / is an unknown command (an error that lists these; nothing goes to
// the model); to send a message that starts
// with /, type // (the first / is dropped: "//etc/hosts" sends "/etc/hosts").
// Turn t samples with seed + t (reproducible for a given --seed).
// --lookup / --draft / --draft-max decode every answer speculatively, parsed
// and refused exactly as by `les run` (speculative_options.h); the context
// keeps its drafter across turns, and /stats (or --stats) adds the last
// answer's speculative totals.
// With --mmproj, /image PATH encodes an image (les_vision.h) and attaches it
// to the next message (several /image lines attach several, in order); the
// message then carries one media marker per image in front of its text, as
// llama-mtmd-cli puts them, and goes through the chat template. The
// token-prefix reuse above cannot see image positions, so a conversation
// holding images is continued by text instead (chat_continuation.h): when
// the last answer ended at an end-of-generation token or at -n, the newly
// rendered conversation starts with what the context holds, and the answer's
// tokens are how its text tokenizes, only the rest (the end of the answer's
// turn, the new message with its new images, the generation prompt) is
// evaluated; the answer is the one a fresh evaluation of the conversation
// gives. Otherwise (a stopped answer, a stop string, a full context, a
// template that rewrites earlier turns, e.g. trims the answers) the
// conversation is evaluated again from its start with all its images; the
// encoder never runs again. An image that cannot be read is reported and not
// attached; the chat goes on. /reset drops the conversation's images and any
// attached ones.
// Ctrl-C while an answer streams stops it, also during its prompt's
// evaluation (a flag les_generate polls through its abort callback:
// a Ctrl-C that arrives as the answer ends is dropped with that answer and
// never stops the next one); Ctrl-C at the prompt or Ctrl-D (end of input)
// leaves. The prompt marker and statistics go
// to stderr, so stdout holds only the answers. Exit codes: 0 on end of input
// or /exit, 1 runtime error, 2 bad arguments.
#include <les/les.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "common/chat_continuation.h"
#include "common/chat_prompt.h"
#include "common/model_options.h"
#include "common/prompt_reuse.h"
#include "common/run_report.h"
#include "common/speculative_options.h"
#include "common/text_input.h"
#include "common/vision_options.h"
#include "line_reader.h"

namespace les::tool {
namespace {

constexpr const char* kTool = "chat";

struct ChatOptions {
  ModelOptions model;
  SamplingOptions sampling;
  SpeculativeOptions speculative;
  VisionOptions vision;
  std::string system;
  std::string chat_template;
  std::string chat_template_kwargs;
  bool stats = false;
};

// Set by Ctrl-C while an answer streams; les_generate polls it through the
// abort callback (between the prompt's chunks and before each token is
// committed), and each answer starts with it clear. (Not
// les_context_cancel(): a cancel stays pending until a generation consumes it,
// so one arriving after the last token was checked would stop the next answer
// before its first token.)
std::atomic<bool> g_stop_answer{false};
static_assert(std::atomic<bool>::is_always_lock_free);  // async-signal-safe

extern "C" void on_sigint(int) { g_stop_answer.store(true); }

bool stop_requested(void*) { return g_stop_answer.load(); }

// An answer as it streams: its text and its delivered tokens.
struct Answer {
  std::string text;
  std::vector<les_token> tokens;
};

bool print_piece(les_token token, const char* piece, size_t len, void* user_data) {
  const std::string text = valid_utf8(std::string_view(piece, len));
  auto* answer = static_cast<Answer*>(user_data);
  answer->text.append(piece, len);
  if (token >= 0) answer->tokens.push_back(token);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return true;
}

struct Chat {
  const ChatOptions& o;
  les_model* model;
  les_context* ctx;
  const les_model* draft;  // --draft, or null
  bool streaming;
  les_vision* vision;  // --mmproj, or null
  std::vector<ChatTurn> turns;
  std::vector<ImageHandle> images;    // the conversation's images, in the order of their markers
  std::vector<ImageHandle> attached;  // /image: for the next message
  bool answered = false;
  uint64_t n_turns = 0;
  int32_t reused = 0;  // tokens of the last turn's prompt already in the context
  // What the context holds after the last turn (chat_continuation.h) and how
  // many of `images`; empty when not known (the next image turn is then
  // evaluated from the start).
  HeldChat held;
  size_t held_images = 0;

  void reset() {
    turns.clear();
    if (!o.system.empty()) turns.push_back({"system", o.system});
    les_context_reset(ctx);
    answered = false;
    images.clear();
    attached.clear();
    forget_held();
  }

  void forget_held() {
    held.clear();
    held_images = 0;
  }

  // /image PATH: encodes it for the next message. Errors are printed, not fatal.
  void attach(const std::string& path) {
    if (vision == nullptr) {
      std::fprintf(stderr, "les chat: /image needs --mmproj FILE (the vision encoder) when les chat starts\n");
      return;
    }
    if (path.empty()) {
      std::fprintf(stderr, "les chat: /image PATH: the path is missing\n");
      return;
    }
    ImageHandle img;
    if (encode_image(kTool, vision, path, img, "/image") != 0) return;  // the message is printed (not attached)
    attached.push_back(std::move(img));
    std::fprintf(stderr, "les chat: %zu image%s attached to the next message\n", attached.size(),
                 attached.size() == 1 ? "" : "s");
  }

  // A turn of a conversation with images: only what follows the held text
  // when the context holds a prefix of `text`, else all of it from the start.
  les_status answer_with_images(const std::string& text, les_generate_params& gp, Answer* reply) {
    std::vector<const les_image*> ptrs;
    for (const ImageHandle& h : images) ptrs.push_back(h.p);
    gp.parse_special = true;
    const std::optional<std::string> rest =
        held_images <= ptrs.size() && les_context_n_past(ctx) > 0 ? continuation_rest(model, held, text) : std::nullopt;
    if (rest) {
      const size_t first = held_images;  // the images in `rest` follow those the context holds
      reused = les_context_n_past(ctx);
      forget_held();  // set again by finish_turn when this turn ends cleanly
      return les_generate_with_images(ctx, rest->c_str(), ptrs.data() + first,
                                      static_cast<int32_t>(ptrs.size() - first), &gp, print_piece, reply);
    }
    les_context_reset(ctx);
    reused = 0;
    forget_held();
    return les_generate_with_images(ctx, text.c_str(), ptrs.data(), static_cast<int32_t>(ptrs.size()), &gp,
                                    print_piece, reply);
  }

  // One user turn: render, reuse the common prefix, generate. 0 or an exit code.
  int answer(const std::string& line) {
    if ((!images.empty() || !attached.empty()) && line.find(LES_MEDIA_MARKER) != std::string::npos) {
      // The marker would stand for an image the conversation does not have.
      std::fprintf(stderr,
                   "les chat: the message contains \"%s\", the image placeholder, in a conversation with images; "
                   "attach images with /image PATH (message not sent)\n",
                   LES_MEDIA_MARKER);
      return 0;
    }
    const size_t n_new = attached.size();
    turns.push_back({"user", media_markers(n_new) + line});
    for (ImageHandle& h : attached) images.push_back(std::move(h));
    attached.clear();
    std::string text;
    if (int rc = render_chat(kTool, model, o.chat_template, turns, true, &text, o.chat_template_kwargs)) return rc;
    if (!images.empty()) return answer_images(text, n_new);
    std::vector<les_token> ids = tokenize_prompt(model, text, true);
    if (ids.empty()) {
      std::fprintf(stderr, "les chat: tokenizing the conversation: %s\n", les_last_error());
      return 1;
    }
    if (static_cast<int32_t>(ids.size()) >= les_context_n_ctx(ctx)) {
      // /reset frees the earlier turns' room; it cannot help a message that does not fit alone.
      bool alone_fits = false;
      if (std::any_of(turns.begin(), turns.end(), [](const ChatTurn& t) { return t.role == "assistant"; })) {
        std::vector<ChatTurn> first;
        if (!o.system.empty()) first.push_back({"system", o.system});
        first.push_back(turns.back());
        std::string alone;
        if (render_chat(kTool, model, o.chat_template, first, true, &alone, o.chat_template_kwargs) == 0)
          alone_fits = static_cast<int32_t>(tokenize_prompt(model, alone, true).size()) < les_context_n_ctx(ctx);
      }
      if (!alone_fits)
        std::fprintf(stderr,
                     "les chat: this message (%zu tokens with the template) does not fit n_ctx %d; send a shorter one "
                     "or start les chat with a larger --ctx\n",
                     ids.size(), les_context_n_ctx(ctx));
      else
        std::fprintf(stderr,
                     "les chat: the conversation (%zu tokens) no longer fits n_ctx %d; /reset to start over\n",
                     ids.size(), les_context_n_ctx(ctx));
      turns.pop_back();
      return 0;
    }
    const size_t keep = static_cast<size_t>(reuse_prefix(ctx, ids));
    std::vector<const char*> stops;
    les_generate_params gp = generate_params(o.sampling, stops);
    gp.sampler.seed += n_turns++;  // reproducible per seed, a different random sequence every turn
    apply_speculative_options(o.speculative, draft, gp);
    gp.abort_callback = stop_requested;
    reused = static_cast<int32_t>(keep);
    gp.prompt_tokens = ids.data() + keep;
    gp.n_prompt_tokens = static_cast<int32_t>(ids.size() - keep);
    Answer reply;
    const les_status st = les_generate(ctx, nullptr, &gp, print_piece, &reply);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    return finish_turn(st, text, reply);
  }

  // answer() for a conversation with images.
  int answer_images(const std::string& text, size_t n_new) {
    std::vector<const char*> stops;
    les_generate_params gp = generate_params(o.sampling, stops);
    gp.sampler.seed += n_turns++;
    apply_speculative_options(o.speculative, draft, gp);
    gp.abort_callback = stop_requested;
    Answer reply;
    const les_status st = answer_with_images(text, gp, &reply);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    if (st == LES_ERR_CONTEXT_FULL && !std::string(les_context_last_error(ctx)).starts_with(
                                          "les_generate_with_images: the context is full")) {
      // The prompt did not fit: nothing was decoded. Drop the turn (its images too).
      std::fprintf(stderr, "les chat: %s; /reset to start over, or start les chat with a larger --ctx\n",
                   les_context_last_error(ctx));
      turns.pop_back();
      images.resize(images.size() - n_new);
      les_context_reset(ctx);
      forget_held();
      return 0;
    }
    if (st == LES_ERR_INVALID_ARGUMENT) {
      // Refused before anything was decoded: drop the turn and its images, the chat goes on.
      std::fprintf(stderr, "les chat: %s (message not sent)\n", les_context_last_error(ctx));
      turns.pop_back();
      images.resize(images.size() - n_new);
      les_context_reset(ctx);
      forget_held();
      return 0;
    }
    return finish_turn(st, text, reply);
  }

  // The end of an answered turn (text or images): an engine error ends the chat
  // (its exit code); a stopped answer or a full context is said and kept.
  // `prompt` is the rendered conversation this turn evaluated up to its answer.
  int finish_turn(les_status st, const std::string& prompt, const Answer& reply) {
    forget_held();
    if (st == LES_OK) {
      // At EOS (not in the context) or -n the context holds exactly prompt + reply;
      // after a stop string it holds the stop string's tokens too.
      les_generate_stats gs{};
      gs.struct_size = sizeof gs;
      if (les_context_generate_stats(ctx, &gs) == LES_OK &&
          (gs.stop_reason == LES_STOP_EOS || gs.stop_reason == LES_STOP_N_PREDICT)) {
        held = held_after_turn(model, ctx, prompt, reply.text, reply.tokens);
        held_images = images.size();
      }
    }
    if (st != LES_OK && st != LES_ERR_CANCELLED && st != LES_ERR_CONTEXT_FULL)
      return fail_c(kTool, "generation", st, les_context_last_error(ctx));
    if (st == LES_ERR_CANCELLED) std::fprintf(stderr, "les chat: (answer stopped)\n");
    if (st == LES_ERR_CONTEXT_FULL) std::fprintf(stderr, "les chat: the context is full; /reset to start over\n");
    turns.push_back({"assistant", reply.text});
    answered = true;
    if (o.stats) print_stats();
    return 0;
  }

  void print_stats() const {
    if (!answered) {
      std::fprintf(stderr, "les chat: no answer yet\n");
      return;
    }
    les_generate_stats s{};
    s.struct_size = sizeof s;
    if (les_context_generate_stats(ctx, &s) != LES_OK) return;
    print_generate_summary(kTool, s, peak_rss_mib());
    if (o.speculative.enabled()) print_speculative_stats(kTool, s);
    std::fprintf(stderr, "les chat: context %d of %d tokens (%d reused by the last turn), seed %llu\n",
                 les_context_n_past(ctx), les_context_n_ctx(ctx), reused, static_cast<unsigned long long>(s.seed));
    if (streaming) print_stream_stats(kTool, model, ctx, o.model.io);
    if (vision != nullptr) print_vision_stats(kTool, vision);
  }
};

// /help: the commands and, at a terminal, the keys.
void print_help(bool vision) {
  std::fprintf(stderr,
               "les chat commands:\n"
               "  /reset       forget the conversation (--system stays)\n"
               "  /stats       the last answer's figures\n"
               "  /image PATH  attach an image to the next message%s\n"
               "  /help        this list\n"
               "  /exit, /quit leave (as Ctrl-D does)\n"
               "  //text       send a message that starts with /\n"
               "keys at a terminal: Enter sends; Backspace, Ctrl-U (line), Ctrl-W (word) erase; Up/Down recall earlier "
               "lines; a paste is one message, its newlines kept; Ctrl-C stops an answer (at the prompt: leaves); "
               "Ctrl-D leaves\n",
               vision ? "" : " (needs --mmproj)");
}

int chat(ChatOptions o) {
  if (!check_template_kwargs(kTool, o.chat_template_kwargs)) return 2;
  if (int rc = validate_model_options(kTool, o.model)) return rc;
  if (int rc = validate_sampling_options(kTool, o.sampling)) return rc;
  if (int rc = validate_speculative_options(kTool, o.speculative)) return rc;
  if (int rc = validate_vision_options(kTool, o.vision)) return rc;
  ModelHandle model;
  ContextHandle ctx;
  bool streaming = false;
  if (int rc = load_model(kTool, o.model, model)) return rc;
  ModelHandle draft;  // before the context: --mem-limit-mb counts it
  if (int rc = open_draft_model(kTool, o.speculative, model.p, o.model.n_threads, draft)) return rc;
  VisionHandle vision;  // before the context too
  if (o.vision.enabled())
    if (int rc = load_vision(kTool, o.vision, model.p, o.model.n_threads, vision)) return rc;
  if (int rc = create_context(kTool, o.model, model, ctx, &streaming, draft.p, vision.p)) return rc;
  if (int rc = resolve_chat_template(kTool, model.p, o.chat_template)) return rc;
  std::fprintf(stderr,
               "les chat: %s, n_ctx %d%s. Type a message; /reset forgets the conversation, /stats shows figures, "
               "/help lists the commands, %sCtrl-C stops an answer, Ctrl-D leaves.\n",
               model_desc(model.p).c_str(), les_context_n_ctx(ctx.p), streaming ? ", experts streamed" : "",
               vision.p != nullptr ? "/image PATH attaches an image to the next message, " : "");
  print_speculative_banner(kTool, o.speculative, draft.p);
  Chat c{o, model.p, ctx.p, draft.p, streaming, vision.p, {}, {}, {}, false, 0, 0, {}, 0};
  c.reset();
  struct sigaction sa {}, old {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a write to stdout interrupted by Ctrl-C resumes
  std::string line;
  LineReader reader;
  for (;;) {
    if (!reader.read_line("> ", line)) break;  // Ctrl-D
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // nothing to say
    // A command's trailing blanks (and a terminal's \r) are not part of it.
    const std::string cmd = line[0] == '/' ? line.substr(0, line.find_last_not_of(" \t\r") + 1) : line;
    if (cmd == "/exit" || cmd == "/quit") break;
    if (cmd == "/reset") {
      c.reset();
      std::fprintf(stderr, "les chat: conversation reset\n");
      continue;
    }
    if (cmd == "/stats") {
      c.print_stats();
      continue;
    }
    if (cmd == "/help") {
      print_help(vision.p != nullptr);
      continue;
    }
    if (cmd == "/image" || cmd.starts_with("/image ")) {
      const size_t at = cmd.find_first_not_of(' ', 6);
      c.attach(at == std::string::npos ? std::string() : cmd.substr(at));
      continue;
    }
    if (line[0] == '/') {
      if (line.size() < 2 || line[1] != '/') {
        std::fprintf(stderr,
                     "les chat: unknown command '%s'; commands: /reset, /stats, /exit (or /quit), /image PATH, /help; "
                     "start a message with // to send a leading /\n",
                     line.c_str());
        continue;
      }
      line.erase(0, 1);  // "//text" sends "/text"
    }
    g_stop_answer.store(false);    // a Ctrl-C of an earlier answer never reaches this one
    sigaction(SIGINT, &sa, &old);  // Ctrl-C stops the answer instead of the process
    const int rc = c.answer(line);
    sigaction(SIGINT, &old, nullptr);
    if (rc != 0) return rc;
  }
  std::fputc('\n', stderr);
  return 0;
}

}  // namespace

void register_chat(CLI::App& app, ToolState& state) {
  auto* cmd = app.add_subcommand("chat", "Chat with a model in the terminal (multi-turn, through its chat template)");
  auto o = std::make_shared<ChatOptions>();
  o->sampling.n_predict = 512;
  add_model_options(cmd, o->model);
  add_sampling_options(cmd, o->sampling);
  add_speculative_options(cmd, o->speculative);
  add_vision_options(cmd, o->vision, /*with_image=*/false);
  cmd->add_option("--system", o->system, "System message (kept across /reset)");
  add_chat_template_options(cmd, o->chat_template, o->chat_template_kwargs);
  cmd->add_flag("--stats", o->stats, "Print the figures after every answer (as /stats does)");
  cmd->callback([&state, o] { state.exit_code = chat(*o); });
}

}  // namespace les::tool
