// Memory plan: how a whole-process memory limit splits into the parts a
// context needs, and the expert budget that is left.
//
// A process running one context holds (bytes, peak):
//   baseline  what the process holds before the context exists (binary,
//             libraries, allocator, the model's metadata and tokenizer, and
//             any mapped weight pages already touched), measured by the caller
//             (process_rss_bytes()), minus the weights the model read into its
//             own memory at load (Model::weights_read_bytes(): those are
//             already resident and are counted once, below, as dense);
//   dense     every tensor that is not a routed expert: all of it is read for
//             every token, so its mapped pages become resident;
//   kv        the KV cache for n_ctx positions at kv_type, plus the recurrent
//             state of hybrid models (double-buffered);
//   scratch   the forward pass's buffers for a prefill chunk of
//             min(n_batch, n_ctx) tokens (forward_scratch_bytes), the logits and the sampler's
//             candidates;
//   experts   either all routed experts (resident, when everything fits) or
//             the expert budget of the streaming cache (slots, read buffers
//             and scheduler scratch: StreamingParams::budget_bytes);
//   vision    when the context will take images from a vision encoder
//             (les_context_params.vision): the encoder's weights and its
//             encode scratch (vision::ImageEmbedder::memory_bytes), resident
//             while it encodes (between encodes too unless it releases them);
//   draft     when the context will decode speculatively with a draft model
//             (les_generate_params.draft_model): that model runs resident on
//             its own context of the same n_ctx (DraftModelDrafter), so all of
//             its weights, its F16 KV cache at n_ctx and its forward scratch;
//             the draft's weights read at load are taken out of the baseline.
// The expert budget is limit - (baseline + vision + draft + dense + kv + scratch). It must hold
// at least one token's worth of experts (top-k slots in every MoE layer plus
// the scheduler's scratch, and never less than the cache's own minimum):
// below that every token reads most of its experts again. When the limit
// cannot hold the minimum, plan_memory refuses with the arithmetic.
//
// Thread-safety: pure functions of their arguments (process_rss_bytes reads
// /proc); safe from any thread.
#pragma once

#include <cstdint>
#include <string>

#include "core/model/context.h"
#include "core/model/model.h"
#include "sched/streaming_expert_source.h"
#include "util/status.h"

namespace les::sched {

struct MemoryPlan {
  uint64_t limit_bytes = 0;     // the whole-process limit the plan is for
  uint64_t baseline_bytes = 0;  // process before the context (as measured by the caller)
  uint64_t dense_bytes = 0;     // non-expert tensors (resident)
  uint64_t kv_bytes = 0;        // KV cache at n_ctx (+ recurrent state)
  uint64_t scratch_bytes = 0;   // forward pass, logits, sampler (a prefill chunk of n_batch)
  uint64_t routed_bytes = 0;    // all routed experts of the file (0 for a dense model)
  uint64_t min_expert_bytes = 0;  // smallest expert budget accepted: one token's worth of experts
  uint64_t expert_budget_bytes = 0;  // chosen budget; 0 when resident
  bool resident = false;        // everything fits: experts stay resident (or the model is dense)
  int32_t n_ctx = 0;            // the n_ctx the KV figure is for (0 in the params resolved)
  uint64_t draft_bytes = 0;     // the draft model's weights + KV cache + scratch (0 without one)
  uint64_t vision_bytes = 0;    // the vision encoder's weights + encode scratch (0 without one)
  // baseline + vision + draft + dense + kv + scratch.
  uint64_t fixed_bytes() const noexcept {
    return baseline_bytes + vision_bytes + draft_bytes + dense_bytes + kv_bytes + scratch_bytes;
  }
  // limit - (fixed + the experts' part), or 0: what the plan leaves unused.
  uint64_t headroom_bytes() const noexcept;
};

// Bytes of the forward pass's scratch for chunks of up to n_batch tokens with
// a context of n_ctx positions and n_threads threads (an upper bound from the
// buffers forward_batch sizes: residual rows, Q/K/V/attention rows, per-thread
// attention scores over n_ctx keys, FFN/expert rows, router outputs, the
// quantised matmul input, linear-attention rows for hybrid models), plus the
// logits (two n_vocab rows) and the sampler's candidates (n_vocab x 16 bytes).
uint64_t forward_scratch_bytes(const Hparams& hp, int32_t n_batch, int32_t n_ctx, int n_threads, GgmlType kv_type);

// Bytes of the KV cache (and recurrent state, double-buffered) of a context
// of n_ctx positions at kv_type. Errors: invalid_argument (kv_type not
// F16/Q8_0).
Result<uint64_t> sequence_bytes(const Hparams& hp, int32_t n_ctx, GgmlType kv_type);

// Routed-expert and dense tensor bytes of the model's file (routed: names with
// "_exps", either expert layout).
struct TensorSplit {
  uint64_t dense = 0, routed = 0;
};
TensorSplit tensor_split(const Model& model);

// The plan for a limit of limit_bytes given the process's baseline. cp as
// given to create_context (n_ctx 0 = the model's default, n_threads 0 = the
// model's); sp.budget_bytes > 0 means the caller chose the budget: the plan
// checks it fits instead of choosing one. Errors: invalid_argument with the
// arithmetic (every part in MiB) when the limit cannot hold the fixed parts
// plus the minimum expert budget (or plus the caller's budget), or, for a
// dense model, the whole model (also a model whose routed experts were read
// into memory at load, ModelParams::weights = read: they are resident
// whatever the budget); errors of min_expert_budget_bytes. baseline_bytes is
// the process's resident set now; the model's read weights are taken out of it.
// `draft` (may be null): the draft model the context will decode with, loaded
// already (its read weights are in baseline_bytes too); counted as draft_bytes.
// `vision_bytes`: a vision encoder's peak (weights + encode scratch; 0: none),
// counted as vision_bytes (its mapped weights are assumed not yet resident).
Result<MemoryPlan> plan_memory(const Model& model, const ContextParams& cp, const StreamingParams& sp,
                               uint64_t limit_bytes, uint64_t baseline_bytes, const Model* draft = nullptr,
                               uint64_t vision_bytes = 0);

// Bytes a draft model adds when it drafts for a context of n_ctx positions:
// all its tensors (it runs resident), its F16 KV cache at n_ctx and its
// forward scratch (threads as DraftModelDrafter's context resolves them).
Result<uint64_t> draft_bytes(const Model& draft, int32_t n_ctx);

// "limit 64.0 MiB = baseline 9.1 + dense 3.2 + KV cache 4.0 (n_ctx 256) +
// scratch 1.3 + expert budget 46.4 MiB (streamed)" (or "+ experts 8.0 MiB
// (all resident), 38.4 MiB unused"; "+ draft model D" and "+ vision encoder V"
// after the baseline).
std::string describe(const MemoryPlan& p);

// The process's resident set now (bytes): /proc/self/statm where it exists,
// else the peak so far (getrusage ru_maxrss). 0 when neither is available.
uint64_t process_rss_bytes() noexcept;

}  // namespace les::sched
