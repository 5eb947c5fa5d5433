// `les quantize IN.gguf OUT.gguf PRESET [options]`: requantise a model
// (quant/quantize_model.h) with a preset's per-tensor types
// (quant/quant_plan.h): q8_0, q4_k_m, q3_k_m, iq4_xs, mxfp4_moe, iq3_xxs,
// iq2_xxs (llama-quantize's choices and fallbacks; iq3_xxs / iq2_xxs need
// --imatrix), les-mixed (routed experts Q3_K, everything else Q4_K),
// les-mixed-down4 (the same with ffn_down_exps Q4_K), les-mixed-iq3 (experts
// IQ3_XXS, the rest Q4_K) and les-mixed-iq2 (experts IQ2_XXS, IQ2_XS for the
// half the imatrix ranks highest, the rest Q4_K). Options may come before
// or after the positional arguments: --tensor-type REGEX=TYPE (repeatable,
// first match wins), --output-tensor-type, --token-embedding-type,
// --imatrix FILE (GGUF or legacy .dat), --layout per_tensor|contiguous (the
// latter writes the experts straight into les repack's layout), -t threads.
//
// Prints one line per tensor (its type change) and a summary (sizes, time,
// peak RSS) to stderr. Writes OUT.tmp and renames it; Ctrl-C or an error
// removes it. Exit codes: 0, 1 (I/O, malformed input), 2 (usage and
// refusals: bad preset/type/regex, an input type it cannot requantise, an
// imatrix for another model, a type that needs an imatrix without one),
// 130/143 interrupted.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "common/interrupt.h"
#include "common/model_options.h"
#include "quant/quantize_model.h"

namespace les::tool {
namespace {

struct QuantizeArgs {
  std::string in, out, preset;
  std::vector<std::string> tensor_types;
  std::string output_type, token_embd_type, imatrix;
  std::string layout = "per_tensor";
  int n_threads = 0;
  double slab_mb = 16;
  bool quiet = false;
};

int usage(const std::string& msg) {
  std::fprintf(stderr, "les quantize: %s\n", msg.c_str());
  return 2;
}

int quantize(const QuantizeArgs& a) {
  quant::QuantizeParams p;
  const auto preset = quant::preset_from_name(a.preset);
  if (!preset) return usage("unknown preset '" + a.preset + "' (" + quant::preset_names() + ")");
  p.plan.preset = *preset;
  if (a.layout != "per_tensor" && a.layout != "contiguous")
    return usage("--layout must be per_tensor or contiguous, got '" + a.layout + "'");
  p.layout = a.layout == "contiguous" ? quant::OutputLayout::contiguous : quant::OutputLayout::per_tensor;
  for (const std::string& spec : a.tensor_types) {
    auto o = quant::parse_type_override(spec);
    if (!o.ok()) return usage(o.status().message());
    p.plan.overrides.push_back(std::move(o).value());
  }
  if (!a.output_type.empty()) {
    auto t = quant::parse_type_name(a.output_type);
    if (!t.ok()) return usage("--output-tensor-type: " + t.status().message());
    p.plan.output_type = *t;
  }
  if (!a.token_embd_type.empty()) {
    auto t = quant::parse_type_name(a.token_embd_type);
    if (!t.ok()) return usage("--token-embedding-type: " + t.status().message());
    p.plan.token_embd_type = *t;
  }
  if (a.n_threads < 0 || a.n_threads > les_max_threads())
    return usage("-t must be in [0, " + std::to_string(les_max_threads()) + "] (0 = all cores), got " +
                 std::to_string(a.n_threads));
  if (!(a.slab_mb > 0 && a.slab_mb <= 65536)) return usage("--slab-mb must be in (0, 65536]");
  const unsigned hw = std::thread::hardware_concurrency();
  p.n_threads = a.n_threads > 0 ? a.n_threads : static_cast<int>(hw > 0 ? hw : 1);
  p.slab_bytes = static_cast<uint64_t>(a.slab_mb * 1024 * 1024);
  quant::Imatrix im;
  if (!a.imatrix.empty()) {
    auto r = quant::read_imatrix(a.imatrix);
    if (!r.ok()) {
      std::fprintf(stderr, "les quantize: %s\n", r.status().to_string().c_str());
      return 1;
    }
    im = std::move(r).value();
    p.imatrix = &im;
    p.imatrix_path = a.imatrix;
    std::fprintf(stderr, "les quantize: imatrix %s: %zu entries, %u chunks%s%s\n", a.imatrix.c_str(),
                 im.entries.size(), im.chunk_count, im.datasets.empty() ? "" : ", dataset ",
                 im.datasets.empty() ? "" : im.datasets.front().c_str());
  }
  InterruptScope cancel(nullptr, "quantize", kStopAtNextStep, a.out + ".tmp");
  p.cancel = &cancel.flag();
  const auto t0 = std::chrono::steady_clock::now();
  auto secs = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  // "[i/N] NAME TYPE -> TYPE, X MB/s, ETA Y s" per tensor (the rate over the input bytes so far);
  // with -q, one \r-updated line on a terminal instead.
  std::string line;
  if (!a.quiet) p.on_tensor = [&line](const std::string& l) { line = l; };
  p.on_progress = [&secs, &line](const quant::QuantizeProgress& g) {
    const double el = secs();
    const double f = g.bytes_total > 0 ? static_cast<double>(g.bytes_done) / static_cast<double>(g.bytes_total) : 1;
    const double eta = f > 0 ? el * (1 - f) / f : 0;
    const double rate = el > 0 ? static_cast<double>(g.bytes_done) / 1e6 / el : 0;
    if (!line.empty()) {
      const int width = static_cast<int>(std::to_string(g.n_tensors).size());
      std::fprintf(stderr, "[%*lld/%lld] %s, %.0f MB/s, ETA %.0f s\n", width, static_cast<long long>(g.tensor_index),
                   static_cast<long long>(g.n_tensors), line.c_str(), rate, eta);
      line.clear();
      return;
    }
    if (!isatty(2) || g.bytes_total == 0) return;
    std::fprintf(stderr, "\r%5.1f%% (%lld/%lld tensors), %.0f MB/s, ETA %.0f s   %s", 100 * f,
                 static_cast<long long>(g.tensor_index), static_cast<long long>(g.n_tensors), rate, eta,
                 g.tensor_index == g.n_tensors ? "\n" : "");
  };
  auto r = quant::quantize_model(a.in, a.out, p);
  if (!r.ok()) {
    if (r.status().code() == StatusCode::cancelled) {
      std::fprintf(stderr, "les quantize: interrupted; %s not written\n", a.out.c_str());
      return cancel.exit_code();
    }
    std::fprintf(stderr, "les quantize: %s\n", r.status().to_string().c_str());
    return r.status().code() == StatusCode::invalid_argument ? 2 : 1;
  }
  std::fprintf(stderr,
               "les quantize: wrote %s (%s%s): %.2f MB from %.2f MB (%.3fx); %lld tensors quantised (%lld by "
               "fallback, %lld with imatrix), %lld copied; %.2f s, %d threads, peak RSS %.1f MiB\n",
               a.out.c_str(), quant::preset_name(p.plan.preset),
               p.layout == quant::OutputLayout::contiguous ? ", contiguous experts" : "",
               static_cast<double>(r->out_bytes) / 1e6,
               static_cast<double>(r->in_bytes) / 1e6,
               static_cast<double>(r->out_bytes) / static_cast<double>(r->in_bytes),
               static_cast<long long>(r->n_quantized), static_cast<long long>(r->n_fallback),
               static_cast<long long>(r->n_imatrix_used), static_cast<long long>(r->n_copied), secs(), p.n_threads,
               peak_rss_mib());
  return 0;
}

}  // namespace

void register_quantize(CLI::App& app, ToolState& state) {
  auto a = std::make_shared<QuantizeArgs>();
  CLI::App* cmd = app.add_subcommand("quantize", std::string("Quantise a GGUF model (presets ") + quant::preset_names() + ")");
  cmd->add_option("input", a->in, "Input GGUF (F32, F16, BF16 or Q8_0 tensors to quantise)")->required();
  cmd->add_option("output", a->out, "Output GGUF (written to OUTPUT.tmp, then renamed)")->required();
  cmd->add_option("preset", a->preset, quant::preset_names())->required();
  cmd->add_option("--tensor-type", a->tensor_types, "REGEX=TYPE: tensors whose name matches get TYPE (repeatable; first match wins)")
      ->allow_extra_args(false);
  cmd->add_option("--output-tensor-type", a->output_type, "Type of output.weight");
  cmd->add_option("--token-embedding-type", a->token_embd_type, "Type of token_embd.weight");
  cmd->add_option("--imatrix", a->imatrix, "Importance matrix (llama-imatrix / les imatrix GGUF, or legacy .dat)");
  cmd->add_option("--layout", a->layout,
                  "Expert layout of the output: per_tensor (llama.cpp's) or contiguous (one 4 KiB-aligned blob per "
                  "expert, as les repack writes; one read per expert when streaming)")
      ->capture_default_str();
  cmd->add_option("-t,--threads", a->n_threads, "Threads (0 = all cores)")->capture_default_str();
  cmd->add_option("--slab-mb", a->slab_mb, "F32 MiB converted at once per tensor (bounds memory)")->capture_default_str();
  cmd->add_flag("-q,--quiet", a->quiet, "No per-tensor lines");
  cmd->callback([&state, a] { state.exit_code = quantize(*a); });
}

}  // namespace les::tool
