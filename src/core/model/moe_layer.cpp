#include "core/model/moe_layer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/ops.h"

namespace les {
namespace {

// Which FFN a swiglu_ffn call computes, for the activation observer: layer,
// expert (-1 unless routed) and the tensor-name infix ("", "_exps", "_shexp").
struct FfnTag {
  const ForwardObservers* observers;
  int32_t layer;
  int32_t expert;
  const char* infix;
};

void observe_ffn(const FfnTag& tag, const char* matrix, const float* x, int64_t n, int64_t cols) {
  if (tag.observers == nullptr || !tag.observers->activations) return;
  const std::string suffix = std::string(matrix) + tag.infix + ".weight";
  observe_input(tag.observers, tag.layer, suffix.c_str(), tag.expert, x, n, cols);
}

// y = down(silu(gate(x)) * up(x)) for n rows.
Status swiglu_ffn(const WeightView& gate, const WeightView& up, const WeightView& down, const float* x, int64_t n,
                  float* y, FfnScratch& s, MatmulScratch& ms, const FfnTag& tag) {
  const int64_t e = gate.cols(), f = gate.rows();
  s.gate.resize(static_cast<size_t>(n * f));
  s.up.resize(static_cast<size_t>(n * f));
  observe_ffn(tag, "ffn_gate", x, n, e);
  observe_ffn(tag, "ffn_up", x, n, e);
  const WeightView* gate_up[] = {&gate, &up};
  float* const out[] = {s.gate.data(), s.up.data()};
  LES_RETURN_IF_ERROR(matmul_shared_input(gate_up, out, 2, x, n, ms));
  for (int64_t t = 0; t < n; ++t)  // row by row: ggml's chunks of 16 start at each row
    ops::swiglu(s.gate.data() + t * f, s.up.data() + t * f, f, s.gate.data() + t * f);
  observe_ffn(tag, "ffn_down", s.gate.data(), n, f);
  return matmul(down, s.gate.data(), n, f, y, down.rows(), ms);
}

Status moe_forward(const Model& model, int32_t il, ExpertSource& experts, const float* h, int64_t n,
                   int32_t first_token, float* out, FfnScratch& s, MatmulScratch& ms,
                   const ForwardObservers* observers) {
  const Hparams& hp = model.hparams();
  const ArchConfig& cfg = model.config();
  const LayerWeights& l = model.weights().layers[static_cast<size_t>(il)];
  const int64_t E = hp.n_embd, ne = hp.n_expert, k = hp.n_expert_used;

  // router
  observe_input(observers, il, "ffn_gate_inp.weight", -1, h, n, E);
  s.logits.resize(static_cast<size_t>(n * ne));
  LES_RETURN_IF_ERROR(matmul(l.router, h, n, E, s.logits.data(), ne, ms));
  s.probs = s.logits;
  s.sel_score.resize(static_cast<size_t>(ne));
  s.selected.resize(static_cast<size_t>(n * k));
  s.weights.resize(static_cast<size_t>(n * k));
  const float* bias = l.exp_probs_b.present() ? reinterpret_cast<const float*>(l.exp_probs_b.data) : nullptr;
  std::vector<int32_t> order(static_cast<size_t>(ne));
  for (int64_t t = 0; t < n; ++t) {
    float* p = s.probs.data() + t * ne;
    if (cfg.gating == ExpertGating::softmax) {
      ops::softmax(p, ne);
    } else {
      for (int64_t j = 0; j < ne; ++j) p[j] = 1.0f / (1.0f + std::exp(-p[j]));
    }
    for (int64_t j = 0; j < ne; ++j) s.sel_score[j] = bias ? p[j] + bias[j] : p[j];
    for (int64_t j = 0; j < ne; ++j) order[j] = static_cast<int32_t>(j);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
      return s.sel_score[a] > s.sel_score[b] || (s.sel_score[a] == s.sel_score[b] && a < b);
    });
    int32_t* sel = s.selected.data() + t * k;
    float* w = s.weights.data() + t * k;
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) {
      sel[j] = order[j];
      w[j] = p[order[j]];
      sum += w[j];
    }
    if (cfg.moe_renorm) {
      const float d = std::max(static_cast<float>(sum), 6.103515625e-5f);
      for (int64_t j = 0; j < k; ++j) w[j] /= d;
    }
    if (cfg.moe_weights_scale != 0.0f)
      for (int64_t j = 0; j < k; ++j) w[j] *= cfg.moe_weights_scale;
  }
  if (observers && observers->router) {
    RouterObservation o;
    o.layer = il;
    o.first_token = first_token;
    o.n_tokens = static_cast<int32_t>(n);
    o.n_expert = static_cast<int32_t>(ne);
    o.n_expert_used = static_cast<int32_t>(k);
    o.probs = s.probs.data();
    o.selected = s.selected.data();
    o.weights = s.weights.data();
    observers->router(o);
  }

  // group (token, slot) pairs by expert
  std::vector<std::vector<int32_t>> by_expert(static_cast<size_t>(ne));  // entries t * k + slot
  for (int64_t i = 0; i < n * k; ++i) by_expert[s.selected[i]].push_back(static_cast<int32_t>(i));
  std::vector<int32_t> used;
  for (int64_t e = 0; e < ne; ++e)
    if (!by_expert[e].empty()) used.push_back(static_cast<int32_t>(e));
  LES_RETURN_IF_ERROR(experts.prepare(il, used));
  s.union_experts += static_cast<int64_t>(used.size());
  ExpertSource::Routing routing;
  routing.layer = il;
  routing.n_tokens = n;
  routing.n_embd = E;
  routing.n_expert_used = static_cast<int32_t>(k);
  routing.router_input = h;
  routing.selected = s.selected.data();
  experts.on_routed(routing);

  // Ready-first: experts are computed in the order their weights become ready;
  // each writes only its own (token, slot) rows, summed in slot order below, so
  // the order never changes the result.
  s.slot_out.assign(static_cast<size_t>(n * k * E), 0.0f);
  std::vector<int32_t> pending = used;
  while (!pending.empty()) {
    auto next = experts.next_ready(il, pending);
    if (!next.ok() || *next >= pending.size()) {
      experts.release(il);
      return next.ok() ? internal_error("next_ready returned an index out of range") : next.status();
    }
    const int32_t e = pending[*next];
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(*next));
    const std::vector<int32_t>& rows = by_expert[e];
    const int64_t m = static_cast<int64_t>(rows.size());
    auto mats = experts.get(il, e);
    if (!mats.ok()) {
      experts.release(il);
      return mats.status();
    }
    s.union_bytes += mats->gate.slab_bytes() + mats->up.slab_bytes() + mats->down.slab_bytes();
    s.gathered.resize(static_cast<size_t>(m * E));
    for (int64_t r = 0; r < m; ++r)
      std::memcpy(s.gathered.data() + r * E, h + (rows[r] / k) * E, static_cast<size_t>(E) * sizeof(float));
    s.down.resize(static_cast<size_t>(m * E));
    Status st = swiglu_ffn(mats->gate, mats->up, mats->down, s.gathered.data(), m, s.down.data(), s, ms,
                           FfnTag{observers, il, e, "_exps"});
    if (!st.ok()) {
      experts.release(il);
      return st;
    }
    for (int64_t r = 0; r < m; ++r) {
      const float w = s.weights[rows[r]];
      float* dst = s.slot_out.data() + static_cast<int64_t>(rows[r]) * E;
      const float* src = s.down.data() + r * E;
      for (int64_t i = 0; i < E; ++i) dst[i] = src[i] * w;
    }
    experts.done(il, e);
  }
  experts.release(il);

  for (int64_t t = 0; t < n; ++t) {
    float* o = out + t * E;
    const float* s0 = s.slot_out.data() + t * k * E;
    for (int64_t i = 0; i < E; ++i) o[i] = s0[i];
    for (int64_t j = 1; j < k; ++j) {
      const float* sj = s0 + j * E;
      for (int64_t i = 0; i < E; ++i) o[i] += sj[i];
    }
  }

  if (cfg.shared_expert) {
    s.shared.resize(static_cast<size_t>(n * E));
    LES_RETURN_IF_ERROR(swiglu_ffn(l.gate_shexp, l.up_shexp, l.down_shexp, h, n, s.shared.data(), s, ms,
                                   FfnTag{observers, il, -1, "_shexp"}));
    std::vector<float> g(static_cast<size_t>(n), 1.0f);
    if (cfg.shared_expert_gated) {
      WeightView gv = l.gate_inp_shexp;  // {n_embd} viewed as one row
      gv.ne[1] = 1;
      observe_input(observers, il, "ffn_gate_inp_shexp.weight", -1, h, n, E);
      LES_RETURN_IF_ERROR(matmul(gv, h, n, E, g.data(), 1, ms));
      for (float& x : g) x = 1.0f / (1.0f + std::exp(-x));
    }
    for (int64_t t = 0; t < n; ++t)
      for (int64_t i = 0; i < E; ++i) out[t * E + i] += s.shared[t * E + i] * g[t];
  }
  return Status();
}

}  // namespace

Status ffn_forward(const Model& model, int32_t il, ExpertSource& experts, const float* h, int64_t n_tokens,
                   int32_t first_token, float* out, FfnScratch& s, MatmulScratch& ms,
                   const ForwardObservers* observers) {
  const LayerWeights& l = model.weights().layers[static_cast<size_t>(il)];
  if (l.is_moe()) return moe_forward(model, il, experts, h, n_tokens, first_token, out, s, ms, observers);
  return swiglu_ffn(l.ffn_gate, l.ffn_up, l.ffn_down, h, n_tokens, out, s, ms, FfnTag{observers, il, -1, ""});
}

}  // namespace les
