// `les perplexity -m MODEL -f TEXT`: perplexity of a model on a text, chunked
// as llama-perplexity does it, so the figures compare directly: the text is
// tokenized once (BOS added), cut into chunks of -c tokens, each chunk is
// evaluated from an empty context (in batches of -b tokens, logits of every
// position kept) with its first token replaced by BOS, and the second half of
// each chunk is scored (positions n_ctx/2 .. n_ctx-2 predicting the next
// token). Prints "[i]PPL," after each chunk (stdout), an ETA after the first
// (stderr), and last `Final estimate: PPL = X +/- Y`.
//
// --kl-divergence-base FILE also saves the model's log-probabilities at every
// scored position (llama-perplexity's file layout, quant/logits_file.h);
// --kl-divergence with that FILE evaluates another model on the file's tokens
// (no -f needed) and prints its PPL, the reference's, their ratio, the mean
// KL divergence with its 99th percentile, and top-1 agreement.
//
// Exit codes: 0, 1 (runtime error: unreadable files, a text too short, a
// reference of another vocabulary), 2 (usage), 130/143 when interrupted
// (the estimate so far is printed; a half-written reference file is removed).
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "chunk_eval.h"
#include "commands.h"
#include "common/interrupt.h"
#include "common/model_options.h"
#include "common/text_input.h"
#include "quant/logits_file.h"
#include "quant/perplexity_stats.h"

namespace les::tool {
namespace {

constexpr const char* kTool = "perplexity";

struct PerplexityArgs {
  ModelOptions model;
  std::string file;
  int32_t n_batch = 2048;
  int32_t n_chunks = -1;
  std::string kld_file;
  bool kld = false;
};

void print_eta(double seconds_per_chunk, int32_t n_chunk) {
  const double total = seconds_per_chunk * n_chunk;
  std::fprintf(stderr, "les perplexity: %.2f seconds per chunk, ETA %d min %02d s\n", seconds_per_chunk,
               static_cast<int>(total) / 60, static_cast<int>(total) % 60);
}

void print_kld_summary(quant::KldStats& k) {
  const quant::MeanError r = k.ppl_ratio(), kl = k.kld(), top = k.top1();
  std::printf("\n====== Perplexity statistics ======\n");
  std::printf("Mean PPL(Q)                   : %10.6f +/- %10.6f\n", k.nll.ppl(), k.nll.ppl_error());
  std::printf("Mean PPL(base)                : %10.6f +/- %10.6f\n", k.nll_base.ppl(), k.nll_base.ppl_error());
  std::printf("Mean PPL(Q)/PPL(base)         : %10.6f +/- %10.6f\n", r.mean, r.error);
  std::printf("\n====== KL divergence statistics ======\n");
  std::printf("Mean    KLD: %10.6f +/- %10.6f\n", kl.mean, kl.error);
  std::printf("Maximum KLD: %10.6f\n", k.kld_percentile(1.0));
  std::printf("99.9%%   KLD: %10.6f\n", k.kld_percentile(0.999));
  std::printf("99.0%%   KLD: %10.6f\n", k.kld_percentile(0.99));
  std::printf("Median  KLD: %10.6f\n", k.kld_percentile(0.5));
  std::printf("Same top p: %6.3f +/- %5.3f %%\n", 100.0 * top.mean, 100.0 * top.error);
}

int perplexity(PerplexityArgs& a) {
  if (int rc = validate_model_options(kTool, a.model); rc != 0) return rc;
  if (a.kld && a.kld_file.empty()) {
    std::fprintf(stderr, "les perplexity: --kl-divergence needs --kl-divergence-base FILE (the reference's log-probabilities)\n");
    return 2;
  }
  if (!a.kld && a.file.empty()) {
    std::fprintf(stderr, "les perplexity: -f TEXT is required\n");
    return 2;
  }
  if (a.n_batch <= 0) {
    std::fprintf(stderr, "les perplexity: -b must be > 0, got %d\n", a.n_batch);
    return 2;
  }
  quant::LogitsFileReader ref;
  if (a.kld) {
    if (Status s = ref.open(a.kld_file); !s.ok()) {
      std::fprintf(stderr, "les perplexity: %s\n", s.to_string().c_str());
      return 1;
    }
    if (a.model.n_ctx != 0 && a.model.n_ctx != static_cast<int32_t>(ref.header().n_ctx)) {
      std::fprintf(stderr, "les perplexity: -c %d differs from the reference's context %u (give -c %u or none)\n",
                   a.model.n_ctx, ref.header().n_ctx, ref.header().n_ctx);
      return 2;
    }
    a.model.n_ctx = static_cast<int32_t>(ref.header().n_ctx);
  }
  std::string text;
  if (!a.kld) {
    auto t = read_prompt_file(a.file);
    if (!t.ok()) {
      std::fprintf(stderr, "les perplexity: %s\n", t.status().message().c_str());
      return 1;
    }
    text = std::move(t).value();
  }
  ModelHandle model;
  ContextHandle ctx;
  bool streaming = false;
  if (int rc = open_model(kTool, a.model, model, ctx, &streaming); rc != 0) return rc;
  const int32_t n_ctx = a.kld ? static_cast<int32_t>(ref.header().n_ctx) : les_context_n_ctx(ctx.p);
  const int32_t n_vocab = les_model_n_vocab(model.p);
  // Positions n_ctx/2 .. n_ctx-2 are scored: a context under 3 tokens scores none.
  if (n_ctx < 3) {
    std::fprintf(stderr, "les perplexity: a context of %d tokens scores no token (the second half of each chunk "
                         "predicts the next one); use -c 3 or more\n", n_ctx);
    return 2;
  }
  std::vector<les_token> tokens;
  int32_t n_chunk = 0;
  if (a.kld) {
    if (ref.header().n_vocab != n_vocab) {
      std::fprintf(stderr, "les perplexity: %s was made with a vocabulary of %d tokens, this model has %d\n",
                   a.kld_file.c_str(), ref.header().n_vocab, n_vocab);
      return 1;
    }
    tokens = ref.tokens();
    n_chunk = ref.header().n_chunk;
  } else {
    auto t = tokenize_text(model.p, text);
    if (!t.ok()) return fail_c(kTool, "tokenizing " + a.file, LES_ERR_INVALID_ARGUMENT, t.status().message().c_str());
    tokens = std::move(t).value();
    if (tokens.size() < 2 * static_cast<size_t>(n_ctx)) {
      std::fprintf(stderr, "les perplexity: %s has %zu tokens; a context of %d needs at least %d\n", a.file.c_str(),
                   tokens.size(), n_ctx, 2 * n_ctx);
      return 1;
    }
    n_chunk = static_cast<int32_t>(tokens.size() / static_cast<size_t>(n_ctx));
  }
  if (a.n_chunks >= 0) n_chunk = std::min(n_chunk, a.n_chunks);
  if (n_chunk == 0) {
    std::fprintf(stderr, "les perplexity: no chunk to evaluate (--chunks 0)\n");
    return 2;
  }
  const int32_t first = n_ctx / 2;
  quant::LogitsFileHeader hdr{static_cast<uint32_t>(n_ctx), n_vocab, n_chunk};
  quant::LogitsFileWriter writer;
  const std::string tmp_path = a.kld_file + ".tmp";
  const bool write_base = !a.kld && !a.kld_file.empty();
  if (write_base) {
    tokens.resize(static_cast<size_t>(n_chunk) * n_ctx);
    if (Status s = writer.open(tmp_path, hdr, tokens); !s.ok()) {
      std::fprintf(stderr, "les perplexity: %s\n", s.to_string().c_str());
      return 1;
    }
  }
  std::fprintf(stderr, "les perplexity: %s, %d chunks of %d tokens, batch %d, %d scored per chunk\n",
               model_desc(model.p).c_str(), n_chunk, n_ctx, std::min(a.n_batch, n_ctx), n_ctx - 1 - first);
  ChunkEvaluator eval(ctx.p, n_ctx, a.n_batch, n_vocab, bos_if_added(model.p));
  quant::NllStats nll;
  quant::KldStats kld;
  std::vector<uint16_t> words(hdr.chunk_words());
  const size_t nw = quant::CompactLogProbs::n_words(n_vocab);
  InterruptScope interrupt(ctx.p, "perplexity", kStopAfterToken);
  const auto t0 = std::chrono::steady_clock::now();
  int rc = 0;
  for (int32_t c = 0; c < n_chunk; ++c) {
    const les_token* chunk = tokens.data() + static_cast<size_t>(c) * n_ctx;
    if (Status s = eval.run(chunk); !s.ok()) {
      std::fprintf(stderr, "les perplexity: chunk %d: %s\n", c + 1, s.message().c_str());
      rc = 1;
      break;
    }
    if (a.kld) {
      if (Status s = ref.read_chunk(words); !s.ok()) {
        std::fprintf(stderr, "les perplexity: %s\n", s.to_string().c_str());
        rc = 1;
        break;
      }
    }
    for (int32_t j = first; j < n_ctx - 1; ++j) {
      const int32_t target = chunk[j + 1];
      uint16_t* w = words.data() + static_cast<size_t>(j - first) * nw;
      if (a.kld) kld.add(eval.logits(j), n_vocab, w, target);
      else if (write_base) nll.add(quant::CompactLogProbs::encode(eval.logits(j), n_vocab, target, w));
      else nll.add(quant::LogSoftmax::of(eval.logits(j), n_vocab).nll(eval.logits(j), target));
    }
    if (write_base) {
      if (Status s = writer.write_chunk(words); !s.ok()) {
        std::fprintf(stderr, "les perplexity: %s\n", s.to_string().c_str());
        rc = 1;
        break;
      }
    }
    if (c == 0) print_eta(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), n_chunk);
    std::printf("[%d]%.4f,", c + 1, a.kld ? kld.nll.ppl() : nll.ppl());
    std::fflush(stdout);
    if (interrupt.signal_number() != 0) {
      rc = interrupt.exit_code();
      break;
    }
  }
  std::printf("\n");
  if (write_base) {
    Status s = writer.close();
    if (rc == 0 && s.ok() && std::rename(tmp_path.c_str(), a.kld_file.c_str()) != 0)
      s = io_error("cannot rename " + tmp_path + " to " + a.kld_file);
    if (!s.ok()) {
      std::fprintf(stderr, "les perplexity: %s\n", s.to_string().c_str());
      rc = rc == 0 ? 1 : rc;
    }
    if (rc != 0) std::remove(tmp_path.c_str());
    else std::fprintf(stderr, "les perplexity: saved the reference log-probabilities to %s\n", a.kld_file.c_str());
  }
  if (a.kld && kld.count() > 0) print_kld_summary(kld);
  const quant::NllStats& total = a.kld ? kld.nll : nll;
  if (total.count > 0) std::printf("Final estimate: PPL = %.4f +/- %.5f\n", total.ppl(), total.ppl_error());
  return rc;
}

}  // namespace

void register_perplexity(CLI::App& app, ToolState& state) {
  auto args = std::make_shared<PerplexityArgs>();
  CLI::App* cmd = app.add_subcommand("perplexity", "Perplexity of a model on a text (llama-perplexity's chunking), and KL divergence against a reference");
  add_model_options(cmd, args->model);
  cmd->add_option("-f,--file", args->file, "Text to evaluate ('-' = standard input)");
  cmd->add_option("-b,--batch-size", args->n_batch, "Tokens per forward pass within a chunk")->capture_default_str();
  cmd->add_option("--chunks", args->n_chunks, "Evaluate at most this many chunks (-1 = all)")->capture_default_str();
  cmd->add_option("--kl-divergence-base", args->kld_file,
                  "Reference log-probabilities file: written by a plain run, read with --kl-divergence");
  cmd->add_flag("--kl-divergence", args->kld, "Compare with the --kl-divergence-base file (its tokens; -f not needed)");
  cmd->callback([&state, args] { state.exit_code = perplexity(*args); });
}

}  // namespace les::tool
