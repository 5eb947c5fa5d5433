// MTP head as a drafter; see mtp_drafter.h.
#include "core/speculative/mtp_drafter.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "core/model/context.h"

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

MtpDrafter::MtpDrafter(std::unique_ptr<MtpHead> head, ExpertSource& experts)
    : owned_(std::move(head)), head_(*owned_), experts_(experts),
      h_last_(static_cast<size_t>(head_.model().hparams().n_embd), 0.0f) {}

Result<std::unique_ptr<MtpDrafter>> MtpDrafter::create(const Context& target, MtpHeadParams p) {
  if (!target.keeps_hidden())
    return invalid_argument_error(
        "MTP drafter: the target context does not keep its hidden rows (ContextParams.output_hidden)");
  if (p.n_ctx == 0) p.n_ctx = target.n_ctx();
  if (p.n_threads == 0) p.n_threads = target.n_threads();
  LES_ASSIGN_OR_RETURN(std::unique_ptr<MtpHead> head, MtpHead::create(target.model(), p));
  return std::unique_ptr<MtpDrafter>(new MtpDrafter(std::move(head), target.expert_source()));
}

void MtpDrafter::reset() noexcept {
  head_.reset();
  recent_.clear();
  recent_tokens_.clear();
  recent_pos0_ = 0;
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
  // The target rows of positions pos0 - 1 .. pos0 + m - 1, for rewind().
  recent_.assign(h_last_.begin(), h_last_.end());
  recent_.insert(recent_.end(), hidden.begin(), hidden.end());
  recent_pos0_ = pos0 - 1;
  recent_tokens_.assign(tokens.begin(), tokens.end());
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
  const auto t0 = std::chrono::steady_clock::now();
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
  const double per = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                     static_cast<double>(out.size());
  sec_per_token_ = sec_per_token_ > 0 ? 0.8 * sec_per_token_ + 0.2 * per : per;
  return out;
}

bool MtpDrafter::rewind(int32_t pos) {
  if (pos < 1 || pos > accepted_) return false;
  const size_t E = h_last_.size();
  const int64_t r = static_cast<int64_t>(pos) - 1 - recent_pos0_;
  if (r < 0 || static_cast<size_t>(r + 1) * E > recent_.size()) return false;
  if (!head_.trim(pos).ok()) return false;
  std::copy(recent_.begin() + r * static_cast<int64_t>(E), recent_.begin() + (r + 1) * static_cast<int64_t>(E),
            h_last_.begin());
  accepted_ = pos;
  drafted_token_ = -1;
  return true;
}

Status MtpDrafter::catch_up(const Context& target, std::span<const int32_t> known) {
  const int32_t n_past = target.n_past();
  const int32_t p0 = target.hidden_pos0();
  // The target went back behind the head: trimmed after a stop inside a
  // verified run (generate drops the accepted drafts after it), and perhaps
  // decoding on from there (the next turn's prefill). The head agrees with
  // the target up to the first position of its last accepted pass whose
  // token differs (or n_past); step it back there if it kept that row.
  if (p0 > 0 && accepted_ > std::min(n_past, p0) && !recent_tokens_.empty()) {
    int32_t agree = recent_pos0_ + 1;
    const int32_t lim = std::min(accepted_, n_past);
    const int64_t base = static_cast<int64_t>(known.size()) - n_past;  // known[base + p] is position p
    while (agree < lim && base + agree >= 0 &&
           recent_tokens_[static_cast<size_t>(agree - recent_pos0_ - 1)] == known[static_cast<size_t>(base + agree)])
      ++agree;
    if (agree < accepted_) (void)rewind(agree);
  }
  // The target went back (reset, trimmed) or re-decoded positions the head
  // holds: start over when its last decode starts at 0 (a new prefill).
  if (accepted_ > n_past || (accepted_ < n_past && p0 < accepted_)) {
    if (p0 != 0)
      return invalid_argument_error("MTP drafter: the target went back to position " + std::to_string(p0) +
                                       " behind the drafter's " + std::to_string(accepted_) +
                                       " (the drafter must see every pass of the target)");
    reset();
  }
  if (accepted_ == n_past) return Status();
  const int64_t E = static_cast<int64_t>(h_last_.size());
  const int64_t rows = static_cast<int64_t>(target.hidden_all().size()) / E;
  // The token at position p is known[size - (n_past - p)].
  const int64_t first_hist = static_cast<int64_t>(known.size()) - (n_past - accepted_);
  if (accepted_ < p0 || p0 + rows < n_past || first_hist < 0)
    return invalid_argument_error("MTP drafter: the target's hidden rows of positions " +
                                     std::to_string(accepted_) + ".." + std::to_string(n_past - 1) +
                                     " are gone (the drafter must see every pass of the target)");
  const size_t m = static_cast<size_t>(n_past - accepted_);
  const auto rows_from =
      target.hidden_all().subspan(static_cast<size_t>((accepted_ - p0) * E), m * static_cast<size_t>(E));
  return accept(accepted_, known.subspan(static_cast<size_t>(first_hist), m), rows_from);
}

Status MtpDrafter::prefill(const Context& target, std::span<const int32_t> sequence) {
  if (!target.keeps_hidden())
    return invalid_argument_error("MTP drafter: the target context does not keep its hidden rows");
  return catch_up(target, sequence);
}

Result<Draft> MtpDrafter::propose(const DraftRequest& r) {
  if (r.history.empty()) return invalid_argument_error("MTP drafter: empty history");
  Draft d;
  if (r.max_tokens <= 0) return d;
  if (r.target == nullptr) return invalid_argument_error("MTP drafter: no target context in the request");
  LES_RETURN_IF_ERROR(catch_up(*r.target, r.history.first(r.history.size() - 1)));
  LES_ASSIGN_OR_RETURN(d.tokens, draft(r.history.back(), r.max_tokens));
  return d;
}

void MtpDrafter::on_verified(const VerifiedPass& v) {
  if (v.target == nullptr || v.pos0 != accepted_) return;  // propose() resynchronises or reports the gap
  const size_t E = h_last_.size();
  const auto hid = v.target->hidden_all();
  if (v.target->hidden_pos0() != v.pos0 || hid.size() < v.kept.size() * E) return;
  (void)accept(v.pos0, v.kept, hid.first(v.kept.size() * E));  // an error resets the head; propose() reports it
}

}  // namespace les
