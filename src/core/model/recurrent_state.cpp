#include "core/model/recurrent_state.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <string>

#include "kernels/kernels.h"

namespace les {

Result<RecurrentState> RecurrentState::create(const RecurrentStateParams& p) {
  RecurrentState r;
  r.p_ = p;
  r.index_.assign(p.layers.size(), -1);
  int32_t n = 0;
  for (size_t il = 0; il < p.layers.size(); ++il)
    if (p.layers[il]) r.index_[il] = n++;
  if (n == 0) return r;
  if (p.d_conv < 1 || p.conv_channels < 1 || p.n_k_heads < 1 || p.n_v_heads < 1 || p.head_dim < 1)
    return invalid_argument_error("recurrent state sizes must be positive (d_conv " + std::to_string(p.d_conv) +
                                  ", conv_channels " + std::to_string(p.conv_channels) + ", heads " +
                                  std::to_string(p.n_k_heads) + "/" + std::to_string(p.n_v_heads) + ", head_dim " +
                                  std::to_string(p.head_dim) + ")");
  const size_t S = static_cast<size_t>(p.head_dim);
  r.conv_floats_ = static_cast<size_t>(p.d_conv - 1) * static_cast<size_t>(p.conv_channels);
  r.ssm_floats_ = static_cast<size_t>(p.n_v_heads) * S * S;
  r.row_floats_ = static_cast<size_t>(p.conv_channels) + static_cast<size_t>(p.n_k_heads) * S +
                  static_cast<size_t>(p.n_v_heads) * (S + 2);
  try {
    r.layers_.resize(static_cast<size_t>(n));
    for (size_t il = 0; il < p.layers.size(); ++il) {
      if (r.index_[il] < 0) continue;
      Layer& L = r.layers_[static_cast<size_t>(r.index_[il])];
      L.il = static_cast<int32_t>(il);
      L.conv[0].assign(r.conv_floats_, 0.0f);
      L.ssm[0].assign(r.ssm_floats_, 0.0f);
    }
  } catch (const std::bad_alloc&) {
    return out_of_memory_error("recurrent state of " + std::to_string(n) + " layers");
  }
  return r;
}

RecurrentState::Layer* RecurrentState::slot(int32_t il) noexcept {
  if (il < 0 || static_cast<size_t>(il) >= index_.size() || index_[static_cast<size_t>(il)] < 0) return nullptr;
  return &layers_[static_cast<size_t>(index_[static_cast<size_t>(il)])];
}

const RecurrentState::Layer* RecurrentState::slot(int32_t il) const noexcept {
  return const_cast<RecurrentState*>(this)->slot(il);
}

RecurrentState::Update RecurrentState::begin_update(int32_t il) noexcept {
  Layer& L = *slot(il);
  if (L.fresh) {
    L.fresh = false;
    L.cur = 1 - L.base;
    return {L.conv[L.base].data(), L.conv[L.cur].data(), L.ssm[L.base].data(), L.ssm[L.cur].data()};
  }
  return {L.conv[L.cur].data(), L.conv[L.cur].data(), L.ssm[L.cur].data(), L.ssm[L.cur].data()};
}

const float* RecurrentState::conv_state(int32_t il) const noexcept {
  const Layer& L = *slot(il);
  return L.conv[L.cur].data();
}

const float* RecurrentState::ssm_state(int32_t il) const noexcept {
  const Layer& L = *slot(il);
  return L.ssm[L.cur].data();
}

void RecurrentState::set_state(int32_t il, const float* conv, const float* ssm) noexcept {
  Layer& L = *slot(il);
  std::memcpy(L.conv[L.cur].data(), conv, conv_floats_ * sizeof(float));
  std::memcpy(L.ssm[L.cur].data(), ssm, ssm_floats_ * sizeof(float));
}

float* RecurrentState::journal_row(int32_t il, int64_t index) noexcept {
  Layer* L = slot(il);
  if (L == nullptr || !has_checkpoint_ || index < 0 || index >= max_replay_) return nullptr;
  L->journaled = std::max(L->journaled, index + 1);
  return L->journal.data() + static_cast<size_t>(index) * row_floats_;
}

Status RecurrentState::checkpoint(int32_t max_replay) {
  if (max_replay < 0) return invalid_argument_error("checkpoint: max_replay " + std::to_string(max_replay) + " < 0");
  try {
    for (Layer& L : layers_) {
      if (L.conv[1].empty()) {
        L.conv[1].assign(conv_floats_, 0.0f);
        L.ssm[1].assign(ssm_floats_, 0.0f);
      }
      const size_t want = static_cast<size_t>(max_replay) * row_floats_;
      if (L.journal.size() < want) L.journal.resize(want);
    }
  } catch (const std::bad_alloc&) {
    return out_of_memory_error("checkpoint of the recurrent state (" + std::to_string(max_replay) +
                               " replayable tokens)");
  }
  for (Layer& L : layers_) {
    L.base = L.cur;
    L.fresh = true;
    L.journaled = 0;
  }
  has_checkpoint_ = true;
  max_replay_ = max_replay;
  return Status();
}

int64_t RecurrentState::replayable() const noexcept {
  if (!has_checkpoint_) return 0;
  int64_t n = std::numeric_limits<int64_t>::max();
  for (const Layer& L : layers_) n = std::min(n, L.journaled);
  return n;
}

void RecurrentState::restore() noexcept {
  if (!has_checkpoint_) return;
  for (Layer& L : layers_) {
    L.cur = L.base;
    L.fresh = true;
  }
}

void RecurrentState::replay(int64_t n) {
  restore();
  const kernels::KernelTable& kt = kernels::default_kernel_table();
  const int64_t C = p_.conv_channels, S = p_.head_dim, nk = p_.n_k_heads, nv = p_.n_v_heads;
  const int64_t R = p_.d_conv - 1, row = static_cast<int64_t>(row_floats_);
  std::vector<float> scratch(static_cast<size_t>(S));
  for (Layer& L : layers_) {
    L.journaled = n;
    if (n == 0) continue;
    const int spare = 1 - L.base;
    // Conv state: the last R raw rows of [checkpoint's conv state ; journaled rows].
    for (int64_t r = 0; r < R; ++r) {
      const int64_t src = n + r;  // index in the concatenation
      const float* from = src < R ? L.conv[L.base].data() + src * C : L.journal.data() + (src - R) * row;
      std::memcpy(L.conv[spare].data() + r * C, from, static_cast<size_t>(C) * sizeof(float));
    }
    const float* j0 = L.journal.data();
    for (int64_t h = 0; h < nv; ++h) {
      kernels::DeltaRuleArgs a;
      a.n_tokens = n;
      a.head_dim = static_cast<int>(S);
      a.state_in = L.ssm[L.base].data() + h * S * S;
      a.state_out = L.ssm[spare].data() + h * S * S;
      a.k = j0 + C + (h % nk) * S;
      a.qk_stride = row;
      a.v = j0 + C + nk * S + h * S;
      a.v_stride = row;
      a.decay = j0 + C + nk * S + nv * S + h;
      a.beta = a.decay + nv;
      a.gate_stride = row;
      a.scratch = scratch.data();
      kt.ops.delta_rule(a);
    }
    L.cur = spare;
    L.fresh = false;
  }
}

void RecurrentState::drop_checkpoint() noexcept {
  for (Layer& L : layers_) {
    L.fresh = false;
    L.journaled = 0;
  }
  has_checkpoint_ = false;
}

void RecurrentState::reset() noexcept {
  for (Layer& L : layers_) {
    std::fill(L.conv[L.cur].begin(), L.conv[L.cur].end(), 0.0f);
    std::fill(L.ssm[L.cur].begin(), L.ssm[L.cur].end(), 0.0f);
    L.base = L.cur;
    L.fresh = false;
    L.journaled = 0;
  }
  has_checkpoint_ = false;
}

size_t RecurrentState::memory_bytes() const noexcept {
  size_t b = 0;
  for (const Layer& L : layers_)
    b += (L.conv[0].size() + L.conv[1].size() + L.ssm[0].size() + L.ssm[1].size() + L.journal.size()) * sizeof(float);
  return b;
}

}  // namespace les
