#include "sched/memory_plan.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "core/gguf/gguf_reader.h"
#include "kernels/ggml_type.h"
#include "kernels/ops.h"
#include "sched/context_factory.h"

namespace les::sched {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Bytes as MiB with one decimal, rounded by `round` (to nearest by default).
std::string mib(uint64_t b, double (*round)(double) = std::nearbyint) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", round(static_cast<double>(b) / kMiB * 10.0) / 10.0);
  return buf;
}

// A refusal's limit rounded down and its requirement rounded up, so "limit L
// MiB cannot hold ... = R MiB" never shows L == R when R > L.
std::string mib_down(uint64_t b) { return mib(b, std::floor); }
std::string mib_up(uint64_t b) { return mib(b, std::ceil); }

// n_ctx and n_threads as Context::create resolves them.
ContextParams resolved(const Model& model, ContextParams cp) {
  if (cp.n_ctx == 0) cp.n_ctx = std::min<int32_t>(model.hparams().n_ctx_train, 4096);
  if (cp.n_threads <= 0) cp.n_threads = model.params().n_threads;
  if (cp.n_threads <= 0) cp.n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return cp;
}

}  // namespace

uint64_t forward_scratch_bytes(const Hparams& hp, int32_t n_batch, int32_t n_ctx, int n_threads, GgmlType kv_type) {
  const uint64_t n = static_cast<uint64_t>(std::max(n_batch, 1));
  const uint64_t E = static_cast<uint64_t>(hp.n_embd);
  const uint64_t Dq = static_cast<uint64_t>(hp.n_embd_q()), Dk = static_cast<uint64_t>(hp.n_embd_k()),
                 Dv = static_cast<uint64_t>(hp.n_embd_v());
  const uint64_t Da = static_cast<uint64_t>(hp.n_head) * static_cast<uint64_t>(hp.head_dim_v);
  const uint64_t f = static_cast<uint64_t>(std::max({hp.n_ff, hp.n_ff_exp, hp.n_ff_shexp, 1}));
  const uint64_t k = static_cast<uint64_t>(std::max(hp.n_expert_used, 1));
  const uint64_t ne = static_cast<uint64_t>(hp.n_expert);
  // Rows per token (floats): residual x, h, o; attention qfull (2 Dq), q, gate,
  // k, v, attn; FFN gate, up; expert slot outputs (k E), gathered, down,
  // shared rows (E each); router probabilities, selection and weights.
  uint64_t per_token = 3 * E + 4 * Dq + Dk + Dv + Da + 2 * f + k * E + 3 * E + ne + 2 * k;
  uint64_t fixed = 0;
  if (hp.is_hybrid()) {
    // Linear attention rows: qkv, conv (channels C each), z, o (d_inner), b, a,
    // decay, beta (v heads); the conv window (d_conv - 1 + n) x C; the
    // per-thread delta-rule scratch (d_state^2).
    const uint64_t C = static_cast<uint64_t>(hp.ssm_conv_channels());
    const uint64_t Di = static_cast<uint64_t>(hp.ssm_d_inner), nv = static_cast<uint64_t>(hp.ssm_dt_rank);
    const uint64_t S = static_cast<uint64_t>(hp.ssm_d_state);
    per_token += 3 * C + 2 * Di + 4 * nv;
    fixed += (static_cast<uint64_t>(std::max(hp.ssm_d_conv - 1, 0)) * C + S * S * static_cast<uint64_t>(n_threads)) *
             sizeof(float);
  }
  uint64_t bytes = n * per_token * sizeof(float) + fixed;
  // Per-thread attention scores over every key of the context.
  const int64_t att = kv_type == GgmlType::Q8_0
                          ? ops::attention_head_q8_0_scratch(n_ctx, hp.head_dim, hp.head_dim_v)
                          : ops::attention_head_f16_scratch(n_ctx, hp.head_dim, hp.head_dim_v);
  bytes += static_cast<uint64_t>(std::max<int64_t>(att, 0)) * static_cast<uint64_t>(std::max(n_threads, 1)) *
           sizeof(float);
  // Quantised matmul input: the widest input row at up to 9/8 bytes per value
  // (Q8_K: 292 bytes per 256; Q8_0: 34 per 32).
  const uint64_t widest = std::max({E, Da, f, static_cast<uint64_t>(hp.ssm_d_inner)});
  bytes += n * (widest * 9 / 8 + 64);
  // Logits (the last row and the chunk's row) and the sampler's candidates.
  const uint64_t V = static_cast<uint64_t>(hp.n_vocab);
  bytes += 2 * V * sizeof(float) + V * 16;
  return bytes;
}

Result<uint64_t> sequence_bytes(const Hparams& hp, int32_t n_ctx, GgmlType kv_type) {
  if (kv_type != GgmlType::F16 && kv_type != GgmlType::Q8_0)
    return invalid_argument_error("memory plan: KV cache type must be F16 or Q8_0");
  const auto k_row = ggml_row_bytes(kv_type, hp.n_embd_k()), v_row = ggml_row_bytes(kv_type, hp.n_embd_v());
  if (!k_row || !v_row)
    return invalid_argument_error("memory plan: K/V row widths " + std::to_string(hp.n_embd_k()) + " / " +
                                  std::to_string(hp.n_embd_v()) + " are not whole blocks of the KV cache type");
  uint64_t layers = 0, rec_layers = 0;
  for (int32_t il = 0; il < hp.n_layer; ++il) (hp.is_hybrid() && hp.is_recurrent(il) ? rec_layers : layers) += 1;
  uint64_t b = layers * static_cast<uint64_t>(std::max(n_ctx, 0)) * (*k_row + *v_row);
  if (rec_layers > 0) {
    const uint64_t S = static_cast<uint64_t>(hp.ssm_d_state);
    const uint64_t conv = static_cast<uint64_t>(std::max(hp.ssm_d_conv - 1, 0)) *
                          static_cast<uint64_t>(hp.ssm_conv_channels());
    const uint64_t ssm = static_cast<uint64_t>(hp.ssm_dt_rank) * S * S;
    b += rec_layers * 2 * (conv + ssm) * sizeof(float);
  }
  return b;
}

TensorSplit tensor_split(const Model& model) {
  TensorSplit s;
  for (const auto& t : model.file().tensors())
    (t.name.find("_exps") != std::string::npos ? s.routed : s.dense) += t.n_bytes;
  if (model.hparams().n_expert == 0) {
    s.dense += s.routed;
    s.routed = 0;
  }
  return s;
}

uint64_t MemoryPlan::headroom_bytes() const noexcept {
  const uint64_t used = fixed_bytes() + (resident ? routed_bytes : expert_budget_bytes);
  return limit_bytes > used ? limit_bytes - used : 0;
}

Result<uint64_t> draft_bytes(const Model& draft, int32_t n_ctx) {
  ContextParams dcp;  // as DraftModelDrafter::create makes it: defaults but n_ctx
  dcp.n_ctx = n_ctx;
  dcp = resolved(draft, dcp);
  const TensorSplit ds = tensor_split(draft);
  LES_ASSIGN_OR_RETURN(uint64_t kv, sequence_bytes(draft.hparams(), dcp.n_ctx, dcp.kv_type));
  return ds.dense + ds.routed + kv +
         forward_scratch_bytes(draft.hparams(), std::min(dcp.n_batch, dcp.n_ctx), dcp.n_ctx, dcp.n_threads,
                               dcp.kv_type);
}

Result<MemoryPlan> plan_memory(const Model& model, const ContextParams& cp_in, const StreamingParams& sp,
                               uint64_t limit_bytes, uint64_t baseline_bytes, const Model* draft,
                               uint64_t vision_bytes) {
  const ContextParams cp = resolved(model, cp_in);
  const Hparams& hp = model.hparams();
  MemoryPlan p;
  p.limit_bytes = limit_bytes;
  // Weights read into the models' own memory are in the resident set already:
  // count them once, as dense weights (or experts, or the draft's), not in the baseline too.
  const uint64_t read = model.weights_read_bytes() + (draft != nullptr ? draft->weights_read_bytes() : 0);
  p.baseline_bytes = baseline_bytes > read ? baseline_bytes - read : 0;
  p.n_ctx = cp.n_ctx;
  p.vision_bytes = vision_bytes;
  if (draft != nullptr) {
    LES_ASSIGN_OR_RETURN(p.draft_bytes, draft_bytes(*draft, cp.n_ctx));
  }
  const TensorSplit split = tensor_split(model);
  p.dense_bytes = split.dense;
  p.routed_bytes = split.routed;
  LES_ASSIGN_OR_RETURN(p.kv_bytes, sequence_bytes(hp, cp.n_ctx, cp.kv_type));
  // A prefill chunk is at most n_batch tokens and never more than the context holds.
  p.scratch_bytes = forward_scratch_bytes(hp, std::min(cp.n_batch, cp.n_ctx), cp.n_ctx, cp.n_threads, cp.kv_type);
  const std::string draft_text =
      draft != nullptr ? " + draft model (weights, KV cache, scratch) " + mib(p.draft_bytes) + " MiB" : "";
  const std::string vision_text =
      vision_bytes > 0 ? " + vision encoder (weights, encode scratch) " + mib(p.vision_bytes) + " MiB" : "";
  const std::string fixed_text = "process baseline " + mib(p.baseline_bytes) + " MiB" + vision_text + draft_text +
                                 " + dense weights " +
                                 mib(p.dense_bytes) + " MiB + KV cache " + mib(p.kv_bytes) + " MiB (n_ctx " +
                                 std::to_string(p.n_ctx) + ") + scratch " + mib(p.scratch_bytes) + " MiB";
  const uint64_t fixed = p.fixed_bytes();
  if (p.routed_bytes > 0 && !model.experts_mapped()) {  // read at load: resident whatever the budget
    if (fixed + p.routed_bytes > limit_bytes)
      return invalid_argument_error("memory limit " + mib_down(limit_bytes) + " MiB cannot hold this model, whose " +
                                    "experts were read into memory at load (weights: read): " + fixed_text +
                                    " + experts " + mib(p.routed_bytes) + " MiB = " + mib_up(fixed + p.routed_bytes) +
                                    " MiB");
    p.resident = true;
    return p;
  }
  if (p.routed_bytes == 0) {
    p.resident = true;
    if (fixed > limit_bytes)
      return invalid_argument_error("memory limit " + mib_down(limit_bytes) + " MiB cannot hold this dense model: " +
                                    fixed_text + " = " + mib_up(fixed) + " MiB");
    return p;
  }
  StreamingParams q = sp;
  q.n_batch_max = std::max(cp.n_batch, 1);
  LES_ASSIGN_OR_RETURN(size_t min_budget, StreamingExpertSource::min_budget_bytes(model, q));
  LES_ASSIGN_OR_RETURN(size_t one_token, StreamingExpertSource::one_token_budget_bytes(model, q));
  p.min_expert_bytes = std::max<uint64_t>(min_budget, one_token);
  if (sp.budget_bytes > 0) {  // the caller's budget: check that it fits
    if (fixed + sp.budget_bytes > limit_bytes)
      return invalid_argument_error("memory limit " + mib_down(limit_bytes) + " MiB cannot hold the expert budget: " +
                                    fixed_text + " + expert budget " + mib(sp.budget_bytes) + " MiB = " +
                                    mib_up(fixed + sp.budget_bytes) + " MiB");
    p.expert_budget_bytes = sp.budget_bytes;
    return p;
  }
  if (fixed + p.routed_bytes <= limit_bytes) {  // every expert fits: resident
    p.resident = true;
    return p;
  }
  if (fixed + p.min_expert_bytes > limit_bytes)
    return invalid_argument_error("memory limit " + mib_down(limit_bytes) + " MiB cannot hold the minimum: " + fixed_text +
                                  " + one token's experts " + mib(p.min_expert_bytes) + " MiB (top-" +
                                  std::to_string(hp.n_expert_used) + " in every MoE layer) = " +
                                  mib(fixed + p.min_expert_bytes) + " MiB");
  p.expert_budget_bytes = limit_bytes - fixed;
  return p;
}

std::string describe(const MemoryPlan& p) {
  std::string s = "limit " + mib(p.limit_bytes) + " MiB = baseline " + mib(p.baseline_bytes) +
                  (p.vision_bytes > 0 ? " + vision encoder " + mib(p.vision_bytes) : std::string()) +
                  (p.draft_bytes > 0 ? " + draft model " + mib(p.draft_bytes) : std::string()) + " + dense " +
                  mib(p.dense_bytes) + " + KV cache " + mib(p.kv_bytes) + " (n_ctx " + std::to_string(p.n_ctx) +
                  ") + scratch " + mib(p.scratch_bytes);
  const uint64_t spare = p.headroom_bytes();
  if (p.resident && p.routed_bytes > 0)
    s += " + experts " + mib(p.routed_bytes) + " MiB (all resident)";
  else if (p.resident)
    s += " MiB (a dense model: all resident)";
  else
    s += " + expert budget " + mib(p.expert_budget_bytes) + " MiB (streamed)";
  if (spare > 0) s += ", " + mib(spare) + " MiB unused";
  return s;
}

uint64_t process_rss_bytes() noexcept {
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    unsigned long size = 0, resident = 0;
    const int got = std::fscanf(f, "%lu %lu", &size, &resident);
    std::fclose(f);
    const long page = ::sysconf(_SC_PAGESIZE);
    if (got == 2 && page > 0) return static_cast<uint64_t>(resident) * static_cast<uint64_t>(page);
  }
  struct rusage ru {};
  if (::getrusage(RUSAGE_SELF, &ru) != 0) return 0;
#ifdef __APPLE__
  return static_cast<uint64_t>(ru.ru_maxrss);  // bytes on macOS
#else
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;  // KiB elsewhere
#endif
}

}  // namespace les::sched
