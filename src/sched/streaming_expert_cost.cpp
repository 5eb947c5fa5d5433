// StreamingExpertSource's answers to speculative decoding (ExpertCost):
// predicted batch bytes, the last batch's reads, and a verify pass's cache
// bookkeeping; see streaming_expert_source.h.
#include <algorithm>

#include "sched/streaming_expert_source.h"

namespace les::sched {

void StreamingExpertSource::predict_batch_bytes(std::span<const int32_t> tokens, std::span<uint64_t> out) {
  Lock lk(mu_);
  const auto held = [this](int32_t layer, int32_t expert) { return cache_->lookup(layer, expert) >= 0; };
  const auto bytes = [this](int32_t layer) { return layout_.expert_bytes(layer); };
  (void)batch_bytes_.predict(tokens, held, bytes, out);  // zeros on failure (documented)
}

ExpertCost::BatchIo StreamingExpertSource::last_batch_io() const {
  Lock lk(mu_);
  BatchIo io;
  io.bytes_read = last_.bytes_read;
  io.io_wait_s = last_.io_wait_s;
  return io;
}

void StreamingExpertSource::begin_verify() {
  Lock lk(mu_);
  verify_next_ = true;
}

void StreamingExpertSource::credit_verify_uses(const Routing& r) {
  const int32_t k = r.n_expert_used;
  const int64_t row0 = n_batch_rows_ - r.n_tokens;  // the routed rows are the batch's last n_tokens
  for (int64_t t = 0; t < r.n_tokens; ++t) {
    for (int32_t i = 0; i < k; ++i) {
      const int32_t e = r.selected[t * k + i];
      if (row0 + t == 0) {
        cache_->credit_use(r.layer, e);
        continue;
      }
      bool row_zero = false;  // row 0 selected it too (credited already)
      if (row0 == 0)
        for (int32_t j = 0; j < k && !row_zero; ++j) row_zero = r.selected[j] == e;
      if (row_zero) continue;
      bool listed = false;  // this layer's entries are the list's last ones
      for (auto u = draft_uses_.rbegin(); u != draft_uses_.rend() && u->layer == r.layer && !listed; ++u)
        listed = u->expert == e;
      if (!listed) draft_uses_.push_back({r.layer, e, static_cast<int32_t>(row0 + t)});
    }
  }
}

void StreamingExpertSource::on_verified(int32_t n_rows_kept) {
  Lock lk(mu_);
  for (const DraftUse& u : draft_uses_)
    if (u.first_row < n_rows_kept) cache_->credit_use(u.layer, u.expert);
  draft_uses_.clear();
  in_verify_ = false;
}

}  // namespace les::sched
