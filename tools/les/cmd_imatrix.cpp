// `les imatrix -m MODEL -f TEXT -o OUT`: an importance matrix for quantising
// (quant/imatrix_file.h). The text is evaluated in llama-perplexity's chunks
// (-c tokens, BOS first, batches of -b, logits of every position), and for
// every weight matrix the activation observer (les_activations.h) adds the
// squares of the rows entering it, per expert for routed-expert tensors (only
// the tokens routed to that expert). As llama-imatrix: the output matrix is
// left out unless --process-output, and the perplexity of the second halves
// is printed unless --no-ppl. Works with streamed experts (--budget-mb).
//
// Writes llama.cpp's GGUF imatrix (or the legacy .dat with --output-format
// dat), through OUT.tmp and a rename; with --save-frequency N also after every
// N chunks, so a killed run leaves a valid file of the chunks so far. Ctrl-C
// stops after the current chunk and writes what was accumulated (exit 130).
// Exit codes: 0, 1 (runtime errors), 2 (usage), 130/143 interrupted.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "chunk_eval.h"
#include "commands.h"
#include "common/interrupt.h"
#include "common/model_options.h"
#include "common/text_input.h"
#include "quant/imatrix_file.h"
#include "quant/perplexity_stats.h"

namespace les::tool {
namespace {

constexpr const char* kTool = "imatrix";

struct ImatrixArgs {
  ModelOptions model;
  std::string file, out = "imatrix.gguf", format = "gguf";
  int32_t n_batch = 2048;
  int32_t n_chunks = -1;
  int32_t save_every = 0;
  bool no_ppl = false;
  bool process_output = false;
};

struct Collector {
  quant::Imatrix im;
  int32_t n_expert = 0;
  bool process_output = false;
  Status error;
};

void on_activations(const char* tensor, int32_t expert, const float* x, int64_t n_rows, int64_t n_cols, void* user) {
  auto* c = static_cast<Collector*>(user);
  if (!c->error.ok() || n_rows <= 0) return;
  if (!c->process_output && std::strcmp(tensor, "output.weight") == 0) return;
  const bool per_expert = expert >= 0;
  Status s = c->im.accumulate(tensor, per_expert ? expert : 0, per_expert ? c->n_expert : 1, x, n_rows, n_cols);
  if (!s.ok()) c->error = s;
}

Status save(const quant::Imatrix& im, const ImatrixArgs& a) {
  return a.format == "dat" ? quant::write_imatrix_dat(im, a.out) : quant::write_imatrix_gguf(im, a.out);
}

int imatrix(ImatrixArgs& a) {
  if (int rc = validate_model_options(kTool, a.model); rc != 0) return rc;
  if (a.file.empty()) {
    std::fprintf(stderr, "les imatrix: -f TEXT is required\n");
    return 2;
  }
  if (a.n_batch <= 0 || a.save_every < 0) {
    std::fprintf(stderr, "les imatrix: -b must be > 0 and --save-frequency >= 0\n");
    return 2;
  }
  auto text = read_prompt_file(a.file);
  if (!text.ok()) {
    std::fprintf(stderr, "les imatrix: %s\n", text.status().message().c_str());
    return 1;
  }
  ModelHandle model;
  ContextHandle ctx;
  bool streaming = false;
  if (int rc = open_model(kTool, a.model, model, ctx, &streaming); rc != 0) return rc;
  auto tokens = tokenize_text(model.p, *text);
  if (!tokens.ok()) return fail_c(kTool, "tokenizing " + a.file, LES_ERR_INVALID_ARGUMENT, tokens.status().message().c_str());
  const int32_t n_ctx = les_context_n_ctx(ctx.p);
  const int32_t n_vocab = les_model_n_vocab(model.p);
  int32_t n_chunk = static_cast<int32_t>(tokens->size() / static_cast<size_t>(n_ctx));
  if (a.n_chunks >= 0) n_chunk = std::min(n_chunk, a.n_chunks);
  if (n_chunk <= 0) {
    std::fprintf(stderr, "les imatrix: %s has %zu tokens, fewer than one chunk of %d (-c)\n", a.file.c_str(),
                 tokens->size(), n_ctx);
    return 1;
  }
  Collector col;
  col.n_expert = les_model_n_expert(model.p);
  col.process_output = a.process_output;
  col.im.chunk_size = static_cast<uint32_t>(n_ctx);
  col.im.datasets.push_back(a.file);
  les_context_set_activation_callback(ctx.p, on_activations, &col);
  std::fprintf(stderr, "les imatrix: %s, %d chunks of %d tokens%s -> %s\n", model_desc(model.p).c_str(), n_chunk,
               n_ctx, streaming ? ", experts streamed" : "", a.out.c_str());
  ChunkEvaluator eval(ctx.p, n_ctx, a.n_batch, n_vocab, bos_if_added(model.p));
  InterruptScope cancel(nullptr, kTool, kStopAtNextStep);
  quant::NllStats nll;
  const auto t0 = std::chrono::steady_clock::now();
  int rc = 0;
  for (int32_t c = 0; c < n_chunk; ++c) {
    const les_token* chunk = tokens->data() + static_cast<size_t>(c) * n_ctx;
    if (Status s = eval.run(chunk); !s.ok()) {
      std::fprintf(stderr, "les imatrix: chunk %d: %s\n", c + 1, s.message().c_str());
      rc = 1;
      break;
    }
    if (!col.error.ok()) {
      std::fprintf(stderr, "les imatrix: %s\n", col.error.to_string().c_str());
      return 1;
    }
    col.im.chunk_count = static_cast<uint32_t>(c + 1);
    if (!a.no_ppl)
      for (int32_t j = n_ctx / 2; j < n_ctx - 1; ++j)
        nll.add(quant::LogSoftmax::of(eval.logits(j), n_vocab).nll(eval.logits(j), chunk[j + 1]));
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double eta = el / (c + 1) * (n_chunk - c - 1);
    std::fprintf(stderr, "%s[%d/%d] %.1f s, ETA %.0f s%s%s", isatty(2) ? "\r" : "", c + 1, n_chunk, el, eta,
                 a.no_ppl ? "" : (", PPL " + std::to_string(nll.ppl())).c_str(), isatty(2) ? "   " : "\n");
    if (a.save_every > 0 && (c + 1) % a.save_every == 0 && c + 1 < n_chunk) {
      if (Status s = save(col.im, a); !s.ok()) {
        std::fprintf(stderr, "les imatrix: %s\n", s.to_string().c_str());
        return 1;
      }
    }
    if (cancel.signal_number() != 0) {
      rc = cancel.exit_code();
      break;
    }
  }
  if (isatty(2)) std::fprintf(stderr, "\n");
  les_context_set_activation_callback(ctx.p, nullptr, nullptr);
  if (col.im.chunk_count == 0) {
    std::fprintf(stderr, "les imatrix: no chunk completed; %s not written\n", a.out.c_str());
    return rc != 0 ? rc : 1;
  }
  if (Status s = save(col.im, a); !s.ok()) {
    std::fprintf(stderr, "les imatrix: %s\n", s.to_string().c_str());
    return 1;
  }
  std::fprintf(stderr, "les imatrix: wrote %s: %zu entries, %u chunks x %u tokens%s\n", a.out.c_str(),
               col.im.entries.size(), col.im.chunk_count, col.im.chunk_size, rc != 0 ? " (interrupted: partial)" : "");
  if (!a.no_ppl && nll.count > 0) std::printf("Final estimate: PPL = %.4f +/- %.5f\n", nll.ppl(), nll.ppl_error());
  return rc;
}

}  // namespace

void register_imatrix(CLI::App& app, ToolState& state) {
  auto a = std::make_shared<ImatrixArgs>();
  CLI::App* cmd = app.add_subcommand("imatrix", "Compute an importance matrix (imatrix) for quantising, from a calibration text");
  add_model_options(cmd, a->model);
  cmd->add_option("-f,--file", a->file, "Calibration text ('-' = standard input)");
  cmd->add_option("-o,--output", a->out, "Output file")->capture_default_str();
  cmd->add_option("--output-format", a->format, "gguf (llama-imatrix's) or dat (legacy)")
      ->check(CLI::IsMember({"gguf", "dat"}))
      ->capture_default_str();
  cmd->add_option("-b,--batch-size", a->n_batch, "Tokens per forward pass within a chunk")->capture_default_str();
  cmd->add_option("--chunks", a->n_chunks, "At most this many chunks (-1 = all)")->capture_default_str();
  cmd->add_option("--save-frequency", a->save_every, "Also write the file every N chunks (0 = only at the end)")
      ->capture_default_str();
  cmd->add_flag("--no-ppl", a->no_ppl, "Do not compute the perplexity");
  cmd->add_flag("--process-output", a->process_output, "Also collect output.weight");
  cmd->callback([&state, a] { state.exit_code = imatrix(*a); });
}

}  // namespace les::tool
