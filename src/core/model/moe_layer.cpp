#include "core/model/moe_layer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/geglu.h"
#include "kernels/matmul.h"
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
                  float* y, FfnScratch& s, MatmulScratch& ms, const FfnTag& tag, FfnAct act = FfnAct::silu) {
  const int64_t e = gate.cols(), f = gate.rows();
  s.gate.resize(static_cast<size_t>(n * f));
  s.up.resize(static_cast<size_t>(n * f));
  observe_ffn(tag, "ffn_gate", x, n, e);
  observe_ffn(tag, "ffn_up", x, n, e);
  const WeightView* gate_up[] = {&gate, &up};
  float* const out[] = {s.gate.data(), s.up.data()};
  LES_RETURN_IF_ERROR(matmul_shared_input(gate_up, out, 2, x, n, ms));
  if (act == FfnAct::gelu) {
    ops::geglu_f16_table(s.gate.data(), s.up.data(), n * f, s.gate.data());  // element-wise: no chunk order
  } else {
    for (int64_t t = 0; t < n; ++t)  // row by row: ggml's chunks of 16 start at each row
      ops::swiglu(s.gate.data() + t * f, s.up.data() + t * f, f, s.gate.data() + t * f);
  }
  observe_ffn(tag, "ffn_down", s.gate.data(), n, f);
  return matmul(down, s.gate.data(), n, y, ms);
}

// Hands the router's decisions to the router observer, if any.
void report_routing(const ForwardObservers* observers, int32_t il, int32_t first_token, int64_t n, int64_t n_expert,
                    int64_t k, const RouterOutput& r) {
  if (observers == nullptr || !observers->router) return;
  RouterObservation o;
  o.layer = il;
  o.first_token = first_token;
  o.n_tokens = static_cast<int32_t>(n);
  o.n_expert = static_cast<int32_t>(n_expert);
  o.n_expert_used = static_cast<int32_t>(k);
  o.probs = r.probs.data();
  o.selected = r.selected.data();
  o.weights = r.weights.data();
  observers->router(o);
}

// The bench-only routing override (routing_override.h), if set: lets it
// rewrite the router's n x k choice as n x k' (k' <= k) and checks what it
// wrote (ids in range, distinct within a token). `k` becomes k'.
Status apply_routing_override(const RoutingOverride* routing_override, int32_t il, int32_t first_token, int64_t n,
                              int64_t n_expert, int64_t& k, RouterOutput& r) {
  if (routing_override == nullptr || !*routing_override) return Status();
  RoutingOverrideRequest q;
  q.layer = il;
  q.first_token = first_token;
  q.n_tokens = n;
  q.n_expert = static_cast<int32_t>(n_expert);
  q.k = static_cast<int32_t>(k);
  q.selected = r.selected.data();
  q.weights = r.weights.data();
  const int32_t kk = (*routing_override)(q);
  if (kk < 0 || kk > k)
    return invalid_argument_error("routing override of layer " + std::to_string(il) + " returned " +
                                  std::to_string(kk) + " experts per token (router top-k " + std::to_string(k) + ")");
  if (kk == 0) return Status();
  k = kk;
  r.selected.resize(static_cast<size_t>(n * k));
  r.weights.resize(static_cast<size_t>(n * k));
  for (int64_t t = 0; t < n; ++t) {
    const auto row = r.selected.begin() + t * k;
    for (int64_t j = 0; j < k; ++j) {
      const int32_t e = row[j];
      if (e < 0 || e >= n_expert || std::find(row, row + j, e) != row + j)
        return invalid_argument_error("routing override of layer " + std::to_string(il) + ": expert " +
                                      std::to_string(e) + " of token " + std::to_string(first_token + t) +
                                      " out of range or repeated");
    }
  }
  return Status();
}

// Groups the (token, slot) entries t * k + slot of `selected` by expert: each
// expert's entries in order, and the experts used at all, ascending.
void group_by_expert(const std::vector<int32_t>& selected, int64_t n_expert, ExpertGroups& g) {
  g.rows.resize(static_cast<size_t>(n_expert));
  for (std::vector<int32_t>& r : g.rows) r.clear();
  for (size_t i = 0; i < selected.size(); ++i)
    g.rows[static_cast<size_t>(selected[i])].push_back(static_cast<int32_t>(i));
  g.used.clear();
  for (int64_t e = 0; e < n_expert; ++e)
    if (!g.rows[static_cast<size_t>(e)].empty()) g.used.push_back(static_cast<int32_t>(e));
}

// Releases a layer's experts (ExpertSource::release) on every return.
class ReleaseLayer {
 public:
  ReleaseLayer(ExpertSource& experts, int32_t il) : experts_(experts), il_(il) {}
  ~ReleaseLayer() { experts_.release(il_); }
  ReleaseLayer(const ReleaseLayer&) = delete;
  ReleaseLayer& operator=(const ReleaseLayer&) = delete;

 private:
  ExpertSource& experts_;
  int32_t il_;
};

// Expert e's rows of h (rows: its entries t * k + slot) through its FFN,
// w · FFN_e(h_t) written into row t * k + slot of s.slot_out.
Status run_one_expert(const ExpertMatrices& mats, int32_t il, int32_t e, const std::vector<int32_t>& rows,
                      const float* h, int64_t E, int64_t k, FfnScratch& s, MatmulScratch& ms,
                      const ForwardObservers* observers) {
  const int64_t m = static_cast<int64_t>(rows.size());
  s.gathered.resize(static_cast<size_t>(m * E));
  for (int64_t r = 0; r < m; ++r)
    std::memcpy(s.gathered.data() + r * E, h + (rows[r] / k) * E, static_cast<size_t>(E) * sizeof(float));
  s.down.resize(static_cast<size_t>(m * E));
  LES_RETURN_IF_ERROR(swiglu_ffn(mats.gate, mats.up, mats.down, s.gathered.data(), m, s.down.data(), s, ms,
                                 FfnTag{observers, il, e, "_exps"}));
  for (int64_t r = 0; r < m; ++r) {
    const float w = s.route.weights[static_cast<size_t>(rows[r])];
    float* dst = s.slot_out.data() + static_cast<int64_t>(rows[r]) * E;
    const float* src = s.down.data() + r * E;
    for (int64_t i = 0; i < E; ++i) dst[i] = src[i] * w;
  }
  return Status();
}

// True when every fetched expert (s.mats) has the same gate, up and down
// types and shapes (gate/up {E -> f}, down {f -> E}), with kernels, gate and
// up sharing one activation type: what run_experts_grouped needs.
bool experts_uniform(const std::vector<ExpertMatrices>& mats, int64_t E) {
  const ExpertMatrices& a = mats[0];
  const kernels::KernelTable& kt = kernels::default_kernel_table();
  if (!matmul_type_supported(a.gate.type) || !matmul_type_supported(a.up.type) || !matmul_type_supported(a.down.type) ||
      kt.of(a.gate.type).vec_dot_type != kt.of(a.up.type).vec_dot_type)
    return false;
  const int64_t f = a.gate.rows();
  for (const ExpertMatrices& m : mats)
    if (m.gate.type != a.gate.type || m.up.type != a.up.type || m.down.type != a.down.type || m.gate.cols() != E ||
        m.up.cols() != E || m.gate.rows() != f || m.up.rows() != f || m.down.cols() != f || m.down.rows() != E)
      return false;
  return true;
}

// Every used expert of the layer (s.mats, in s.groups.used order) at once,
// with the results of run_one_expert for each: h quantised once and its rows
// gathered per expert (quantisation is per row, so a row's codes are those
// run_one_expert would make), all gate and up matrices in one parallel_for,
// the down inputs quantised once, all downs in one parallel_for. Each output
// element is the same vec_dot (or vec_dot_multi row) of the same rows.
void run_experts_grouped(const float* h, int64_t n, int64_t E, int64_t k, FfnScratch& s, MatmulScratch& ms) {
  const ExpertGroups& g = s.groups;
  const size_t ng = g.used.size();
  const ExpertMatrices& a = s.mats[0];
  const int64_t f = a.gate.rows();
  const kernels::KernelTable& kt = kernels::default_kernel_table();
  s.first_row.assign(ng + 1, 0);
  for (size_t i = 0; i < ng; ++i)
    s.first_row[i + 1] = s.first_row[i] + static_cast<int64_t>(g.rows[static_cast<size_t>(g.used[i])].size());
  const int64_t M = s.first_row[ng];
  const kernels::QuantizedActivations xh = kernels::quantize_activations(kt, ms.pool, a.gate.type, h, E, n, s.xq_h);
  const size_t rb = xh.row_bytes;
  s.xq_rows.resize(static_cast<size_t>(M) * rb);
  std::vector<kernels::QuantizedActivations> in(ng);
  std::vector<kernels::MatmulJob> jobs(2 * ng);
  s.gate.resize(static_cast<size_t>(M * f));
  s.up.resize(static_cast<size_t>(M * f));
  for (size_t i = 0; i < ng; ++i) {
    const std::vector<int32_t>& rows = g.rows[static_cast<size_t>(g.used[i])];
    const int64_t r0 = s.first_row[i];
    for (size_t r = 0; r < rows.size(); ++r)
      std::memcpy(s.xq_rows.data() + (static_cast<size_t>(r0) + r) * rb, xh.row(rows[r] / k), rb);
    in[i] = {xh.type, E, static_cast<int64_t>(rows.size()), rb, s.xq_rows.data() + static_cast<size_t>(r0) * rb};
    jobs[2 * i] = {a.gate.type, s.mats[i].gate.data, f, s.gate.data() + r0 * f, &in[i]};
    jobs[2 * i + 1] = {a.up.type, s.mats[i].up.data, f, s.up.data() + r0 * f, &in[i]};
  }
  kernels::matmul_quantized_jobs(kt, ms.pool, jobs.data(), static_cast<int>(2 * ng), in[0]);
  for (int64_t t = 0; t < M; ++t)  // row by row, as swiglu_ffn
    ops::swiglu(s.gate.data() + t * f, s.up.data() + t * f, f, s.gate.data() + t * f);
  const kernels::QuantizedActivations xd =
      kernels::quantize_activations(kt, ms.pool, a.down.type, s.gate.data(), f, M, s.xq_down);
  s.down.resize(static_cast<size_t>(M * E));
  for (size_t i = 0; i < ng; ++i) {
    const int64_t r0 = s.first_row[i];
    in[i] = {xd.type, f, s.first_row[i + 1] - r0, xd.row_bytes, xd.row(r0)};
    jobs[i] = {a.down.type, s.mats[i].down.data, E, s.down.data() + r0 * E, &in[i]};
  }
  kernels::matmul_quantized_jobs(kt, ms.pool, jobs.data(), static_cast<int>(ng), in[0]);
  for (size_t i = 0; i < ng; ++i) {
    const std::vector<int32_t>& rows = g.rows[static_cast<size_t>(g.used[i])];
    for (size_t r = 0; r < rows.size(); ++r) {
      const float w = s.route.weights[static_cast<size_t>(rows[r])];
      float* dst = s.slot_out.data() + static_cast<int64_t>(rows[r]) * E;
      const float* src = s.down.data() + (s.first_row[i] + static_cast<int64_t>(r)) * E;
      for (int64_t c = 0; c < E; ++c) dst[c] = src[c] * w;
    }
  }
}

// Runs every used expert on its rows of h, writing w · FFN_e(h_t) into row
// t * k + slot of s.slot_out. Ready-first: experts are computed in the order
// their weights become ready; each writes only its own rows, summed in slot
// order afterwards, so the order never changes the result. A source whose
// get() never waits (and no activation observer) computes all experts
// together (run_experts_grouped), with the same results.
Status run_routed_experts(ExpertSource& experts, int32_t il, const float* h, int64_t n, int64_t E, int64_t k,
                          FfnScratch& s, MatmulScratch& ms, const ForwardObservers* observers) {
  const ExpertGroups& g = s.groups;
  ReleaseLayer release(experts, il);
  LES_RETURN_IF_ERROR(experts.prepare(il, g.used));
  s.union_experts += static_cast<int64_t>(g.used.size());
  ExpertSource::Routing routing;
  routing.layer = il;
  routing.n_tokens = n;
  routing.n_embd = E;
  routing.n_expert_used = static_cast<int32_t>(k);
  routing.router_input = h;
  routing.selected = s.route.selected.data();
  experts.on_routed(routing);

  s.slot_out.assign(static_cast<size_t>(n * k * E), 0.0f);
  const bool observed = observers != nullptr && observers->activations;
  if (experts.get_never_waits() && !observed && !g.used.empty()) {
    s.mats.clear();
    for (const int32_t e : g.used) {
      LES_ASSIGN_OR_RETURN(const ExpertMatrices mats, experts.get(il, e));
      s.union_bytes += mats.gate.slab_bytes() + mats.up.slab_bytes() + mats.down.slab_bytes();
      s.mats.push_back(mats);
    }
    if (experts_uniform(s.mats, E)) {
      run_experts_grouped(h, n, E, k, s, ms);
    } else {
      for (size_t i = 0; i < g.used.size(); ++i)
        LES_RETURN_IF_ERROR(run_one_expert(s.mats[i], il, g.used[i], g.rows[static_cast<size_t>(g.used[i])], h, E,
                                           k, s, ms, observers));
    }
    for (const int32_t e : g.used) experts.done(il, e);
    return Status();
  }
  std::vector<int32_t> pending = g.used;
  while (!pending.empty()) {
    LES_ASSIGN_OR_RETURN(const size_t next, experts.next_ready(il, pending));
    if (next >= pending.size()) return internal_error("next_ready returned an index out of range");
    const int32_t e = pending[next];
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(next));
    LES_ASSIGN_OR_RETURN(const ExpertMatrices mats, experts.get(il, e));
    s.union_bytes += mats.gate.slab_bytes() + mats.up.slab_bytes() + mats.down.slab_bytes();
    LES_RETURN_IF_ERROR(run_one_expert(mats, il, e, g.rows[static_cast<size_t>(e)], h, E, k, s, ms, observers));
    experts.done(il, e);
  }
  return Status();
}

// out[t] = sum over slots j = 0..k-1, in that order, of slot_out[t * k + j].
void sum_slots(const std::vector<float>& slot_out, int64_t n, int64_t E, int64_t k, float* out) {
  for (int64_t t = 0; t < n; ++t) {
    float* o = out + t * E;
    const float* s0 = slot_out.data() + t * k * E;
    for (int64_t i = 0; i < E; ++i) o[i] = s0[i];
    for (int64_t j = 1; j < k; ++j) {
      const float* sj = s0 + j * E;
      for (int64_t i = 0; i < E; ++i) o[i] += sj[i];
    }
  }
}

// out += g · down_s(silu(gate_s(h)) ⊙ up_s(h)), g = sigmoid(ffn_gate_inp_shexp · h) when gated, else 1.
Status add_shared_expert(const LayerWeights& l, bool gated, int32_t il, const float* h, int64_t n, int64_t E,
                         float* out, FfnScratch& s, MatmulScratch& ms, const ForwardObservers* observers) {
  s.shared.resize(static_cast<size_t>(n * E));
  LES_RETURN_IF_ERROR(swiglu_ffn(l.gate_shexp, l.up_shexp, l.down_shexp, h, n, s.shared.data(), s, ms,
                                 FfnTag{observers, il, -1, "_shexp"}));
  std::vector<float> g(static_cast<size_t>(n), 1.0f);
  if (gated) {
    WeightView gv = l.gate_inp_shexp;  // {n_embd} viewed as one row
    gv.ne[1] = 1;
    observe_input(observers, il, "ffn_gate_inp_shexp.weight", -1, h, n, E);
    LES_RETURN_IF_ERROR(matmul(gv, h, n, g.data(), ms));
    for (float& x : g) x = 1.0f / (1.0f + std::exp(-x));
  }
  for (int64_t t = 0; t < n; ++t)
    for (int64_t i = 0; i < E; ++i) out[t * E + i] += s.shared[t * E + i] * g[t];
  return Status();
}

Status moe_forward(const Model& model, int32_t il, ExpertSource& experts, const float* h, int64_t n,
                   int32_t first_token, float* out, FfnScratch& s, MatmulScratch& ms,
                   const ForwardObservers* observers, const RoutingOverride* routing_override) {
  const Hparams& hp = model.hparams();
  const int64_t E = hp.n_embd, ne = hp.n_expert;
  int64_t k = hp.n_expert_used;  // the bench-only routing override may lower it
  LES_ASSIGN_OR_RETURN(const Router router, Router::of(model, il));
  observe_input(observers, il, "ffn_gate_inp.weight", -1, h, n, E);
  LES_RETURN_IF_ERROR(router.route(h, n, s.route, ms));
  LES_RETURN_IF_ERROR(apply_routing_override(routing_override, il, first_token, n, ne, k, s.route));
  report_routing(observers, il, first_token, n, ne, k, s.route);
  group_by_expert(s.route.selected, ne, s.groups);
  LES_RETURN_IF_ERROR(run_routed_experts(experts, il, h, n, E, k, s, ms, observers));
  sum_slots(s.slot_out, n, E, k, out);
  if (model.config().shared_expert) {
    const LayerWeights& l = model.weights().layers[static_cast<size_t>(il)];
    LES_RETURN_IF_ERROR(
        add_shared_expert(l, model.config().shared_expert_gated, il, h, n, E, out, s, ms, observers));
  }
  return Status();
}

}  // namespace

Status ffn_forward(const Model& model, int32_t il, ExpertSource& experts, const float* h, int64_t n_tokens,
                   int32_t first_token, float* out, FfnScratch& s, MatmulScratch& ms,
                   const ForwardObservers* observers, const RoutingOverride* routing_override) {
  const LayerWeights& l = model.weights().layers[static_cast<size_t>(il)];
  if (l.is_moe())
    return moe_forward(model, il, experts, h, n_tokens, first_token, out, s, ms, observers, routing_override);
  return swiglu_ffn(l.ffn_gate, l.ffn_up, l.ffn_down, h, n_tokens, out, s, ms, FfnTag{observers, il, -1, ""},
                    model.config().ffn_act);
}

}  // namespace les
