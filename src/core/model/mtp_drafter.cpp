#include "core/model/mtp_drafter.h"

#include <algorithm>
#include <string>

namespace les {
namespace {

int32_t argmax(std::span<const float> x) {
  int32_t best = 0;
  for (size_t i = 1; i < x.size(); ++i)
    if (x[i] > x[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
  return best;
}

}  // namespace

MtpDrafter::MtpDrafter(MtpHead& head, ExpertSource& experts)
    : head_(head), experts_(experts), h_last_(static_cast<size_t>(head.model().hparams().n_embd), 0.0f) {}

void MtpDrafter::reset() noexcept {
  head_.reset();
  std::fill(h_last_.begin(), h_last_.end(), 0.0f);
  accepted_ = 0;
  drafted_token_ = -1;
}

Status MtpDrafter::accept(int32_t pos0, std::span<const int32_t> tokens, std::span<const float> hidden) {
  const size_t E = h_last_.size();
  const size_t m = tokens.size();
  if (pos0 != accepted_)
    return invalid_argument_error("MTP drafter: accept at position " + std::to_string(pos0) + ", expected " +
                                  std::to_string(accepted_));
  if (hidden.size() != m * E)
    return invalid_argument_error("MTP drafter: " + std::to_string(hidden.size()) + " hidden floats for " +
                                  std::to_string(m) + " tokens of n_embd " + std::to_string(E));
  if (m == 0) return Status();
  // The entry at accepted_ from draft(next) is exact when next was kept.
  size_t skip = 0;
  if (drafted_token_ >= 0 && tokens[0] == drafted_token_ && head_.n_past() > accepted_) skip = 1;
  drafted_token_ = -1;
  LES_RETURN_IF_ERROR(head_.trim(accepted_ + static_cast<int32_t>(skip)));
  if (m > skip) {
    // h_prev of token i is the hidden row of the position before it.
    std::vector<float> h_prev((m - skip) * E);
    for (size_t i = skip; i < m; ++i) {
      const float* src = i == 0 ? h_last_.data() : hidden.data() + (i - 1) * E;
      std::copy(src, src + E, h_prev.begin() + static_cast<std::ptrdiff_t>((i - skip) * E));
    }
    Status st = head_.decode(tokens.subspan(skip), h_prev, experts_);
    if (!st.ok()) {
      reset();
      return st;
    }
  }
  std::copy(hidden.end() - static_cast<std::ptrdiff_t>(E), hidden.end(), h_last_.begin());
  accepted_ = pos0 + static_cast<int32_t>(m);
  return Status();
}

Result<std::vector<int32_t>> MtpDrafter::draft(int32_t next, int32_t n_draft) {
  if (n_draft < 1) return invalid_argument_error("MTP drafter: n_draft " + std::to_string(n_draft) + " < 1");
  LES_RETURN_IF_ERROR(head_.trim(accepted_));
  std::vector<int32_t> out;
  int32_t tok = next;
  std::vector<float> h = h_last_;
  for (int32_t i = 0; i < n_draft; ++i) {
    const int32_t one[1] = {tok};
    Status st = head_.decode(one, h, experts_);
    if (!st.ok()) {
      if (st.code() == StatusCode::context_full && !out.empty()) break;  // as many as fit
      (void)head_.trim(accepted_);
      drafted_token_ = -1;
      return st;
    }
    tok = argmax(head_.logits());
    out.push_back(tok);
    h.assign(head_.hidden().begin(), head_.hidden().end());
  }
  drafted_token_ = next;
  return out;
}

}  // namespace les
