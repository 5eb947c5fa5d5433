#include "core/model/linear_attention.h"

#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/ops.h"

namespace les {
namespace {

const float* f32(const WeightView& w) { return reinterpret_cast<const float*>(w.data); }

}  // namespace

Status linear_attention(const Model& model, int32_t il, SequenceState& seq, const float* h, int64_t n, float* out,
                        LinearAttnScratch& s, MatmulScratch& ms, const ForwardObservers* observers) {
  const Hparams& hp = model.hparams();
  const LinearAttnWeights& w = model.weights().layers[static_cast<size_t>(il)].lin;
  const kernels::OpKernels& kk = kernels::default_kernel_table().ops;
  const int64_t E = hp.n_embd, C = hp.ssm_conv_channels(), S = hp.ssm_d_state;
  const int64_t nk = hp.ssm_n_group, nv = hp.ssm_dt_rank, Dk = nk * S, Dv = hp.ssm_d_inner;
  const int64_t R = hp.ssm_d_conv - 1;

  s.qkv.resize(static_cast<size_t>(n * C));
  s.z.resize(static_cast<size_t>(n * Dv));
  s.b.resize(static_cast<size_t>(n * nv));
  s.a.resize(static_cast<size_t>(n * nv));
  for (const char* name : {"attn_qkv.weight", "attn_gate.weight", "ssm_beta.weight", "ssm_alpha.weight"})
    observe_input(observers, il, name, -1, h, n, E);
  LES_RETURN_IF_ERROR(matmul(w.wqkv, h, n, s.qkv.data(), ms));
  LES_RETURN_IF_ERROR(matmul(w.wgate, h, n, s.z.data(), ms));
  LES_RETURN_IF_ERROR(matmul(w.wbeta, h, n, s.b.data(), ms));
  LES_RETURN_IF_ERROR(matmul(w.walpha, h, n, s.a.data(), ms));

  // Nothing below can fail: the state is updated only now.
  RecurrentState& rs = seq.recurrent();
  const RecurrentState::Update st = rs.begin_update(il);

  // Conv over [state ; new rows], then the new state = the window's last R rows.
  s.window.resize(static_cast<size_t>((R + n) * C));
  std::memcpy(s.window.data(), st.conv_in, static_cast<size_t>(R * C) * sizeof(float));
  std::memcpy(s.window.data() + R * C, s.qkv.data(), static_cast<size_t>(n * C) * sizeof(float));
  s.conv.resize(static_cast<size_t>(n * C));
  kk.ssm_conv(s.window.data(), n, C, f32(w.conv1d), hp.ssm_d_conv, s.conv.data());
  std::memcpy(st.conv_out, s.window.data() + n * C, static_cast<size_t>(R * C) * sizeof(float));

  s.decay.resize(static_cast<size_t>(n * nv));
  s.beta.resize(static_cast<size_t>(n * nv));
  const float* dt = f32(w.dt_bias);
  const float* A = f32(w.a);
  for (int64_t t = 0; t < n; ++t) {
    float* u = s.conv.data() + t * C;
    ops::silu_row(u, C, u);
    for (int64_t hk = 0; hk < nk; ++hk) {
      kk.l2_norm(u + hk * S, S, hp.rms_eps, u + hk * S);            // q
      kk.l2_norm(u + Dk + hk * S, S, hp.rms_eps, u + Dk + hk * S);  // k
    }
    for (int64_t hv = 0; hv < nv; ++hv) {
      const int64_t i = t * nv + hv;
      s.beta[static_cast<size_t>(i)] = ops::sigmoid(s.b[static_cast<size_t>(i)]);
      const float g = ops::softplus(s.a[static_cast<size_t>(i)] + dt[hv]) * A[hv];
      s.decay[static_cast<size_t>(i)] = std::exp(g);
    }
  }

  // Journal what the state update consumes (for rollback after a checkpoint).
  if (seq.has_checkpoint()) {
    const int64_t first = seq.n_past() - seq.checkpoint_pos();
    for (int64_t t = 0; t < n; ++t) {
      float* row = rs.journal_row(il, first + t);
      if (row == nullptr) break;
      std::memcpy(row, s.qkv.data() + t * C, static_cast<size_t>(C) * sizeof(float));
      std::memcpy(row + C, s.conv.data() + t * C + Dk, static_cast<size_t>(Dk + Dv) * sizeof(float));  // k | v
      for (int64_t hv = 0; hv < nv; ++hv) {
        row[C + Dk + Dv + hv] = s.decay[static_cast<size_t>(t * nv + hv)];
        row[C + Dk + Dv + nv + hv] = s.beta[static_cast<size_t>(t * nv + hv)];
      }
    }
  }

  // Delta rule, one v head per task.
  s.o.resize(static_cast<size_t>(n * Dv));
  const int n_threads = ms.pool ? ms.pool->n_threads() : 1;
  s.delta.resize(static_cast<size_t>(S * n_threads));
  const float scale = 1.0f / std::sqrt(static_cast<float>(S));
  auto task = [&](int64_t begin, int64_t end, int thread) {
    for (int64_t hv = begin; hv < end; ++hv) {
      const int64_t hk = hv % nk;
      kernels::DeltaRuleArgs a;
      a.n_tokens = n;
      a.head_dim = static_cast<int>(S);
      a.state_in = st.ssm_in + hv * S * S;
      a.state_out = st.ssm_out + hv * S * S;
      a.q = s.conv.data() + hk * S;
      a.k = s.conv.data() + Dk + hk * S;
      a.qk_stride = C;
      a.v = s.conv.data() + 2 * Dk + hv * S;
      a.v_stride = C;
      a.decay = s.decay.data() + hv;
      a.beta = s.beta.data() + hv;
      a.gate_stride = nv;
      a.scale = scale;
      a.out = s.o.data() + hv * S;
      a.out_stride = Dv;
      a.scratch = s.delta.data() + static_cast<int64_t>(thread) * S;
      kk.delta_rule(a);
    }
  };
  if (ms.pool && n_threads > 1) {
    ms.pool->parallel_for(nv, task);
  } else {
    task(0, nv, 0);
  }

  // Gated RMS norm per head, then the output projection.
  for (int64_t t = 0; t < n; ++t)
    for (int64_t hv = 0; hv < nv; ++hv) {
      float* o = s.o.data() + t * Dv + hv * S;
      kk.rms_norm_gated(o, f32(w.norm), s.z.data() + t * Dv + hv * S, S, hp.rms_eps, o);
    }
  observe_input(observers, il, "ssm_out.weight", -1, s.o.data(), n, Dv);
  return matmul(w.wout, s.o.data(), n, out, ms);
}

}  // namespace les
