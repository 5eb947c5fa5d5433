// KV cache and per-sequence state of one generation stream.
//
// Layout: per layer, K is n_ctx rows of n_embd_k halves (row = position,
// heads back to back: K[pos][h * head_dim + d]) and V is n_ctx rows of
// n_embd_v halves. Values are rounded to F16 when stored, as llama.cpp's
// default F16 cache does. Only F16 is implemented; asking for another type is
// StatusCode::unsupported.
//
// SequenceState is the abstraction the forward pass writes into: today it holds
// the KV cache and the number of positions filled; recurrent (Gated DeltaNet)
// state for hybrid models belongs here too, so trim/reset stay one operation.
//
// Thread-safety: thread-compatible (one thread at a time).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/ggml_type.h"
#include "util/status.h"

namespace les {

struct KvCacheParams {
  int32_t n_layer = 0;
  int32_t n_ctx = 0;      // positions
  int32_t n_embd_k = 0;   // n_head_kv * head_dim
  int32_t n_embd_v = 0;   // n_head_kv * head_dim_v
  GgmlType type = GgmlType::F16;
};

class KvCache {
 public:
  // Allocates n_layer * n_ctx * (n_embd_k + n_embd_v) halves. Errors: invalid_argument
  // (non-positive sizes), unsupported (type other than F16), out_of_memory.
  static Result<KvCache> create(const KvCacheParams& p);

  int32_t n_ctx() const noexcept { return p_.n_ctx; }
  const KvCacheParams& params() const noexcept { return p_; }
  // Row of position `pos` in layer `il` (n_embd_k / n_embd_v halves). Precondition: in range.
  fp16_t* k_row(int32_t il, int32_t pos) noexcept { return k_[il].data() + static_cast<size_t>(pos) * p_.n_embd_k; }
  fp16_t* v_row(int32_t il, int32_t pos) noexcept { return v_[il].data() + static_cast<size_t>(pos) * p_.n_embd_v; }
  const fp16_t* k_data(int32_t il) const noexcept { return k_[il].data(); }
  const fp16_t* v_data(int32_t il) const noexcept { return v_[il].data(); }

 private:
  KvCacheParams p_;
  std::vector<std::vector<fp16_t>> k_, v_;
};

// The state of one sequence: KV cache plus the number of positions filled.
class SequenceState {
 public:
  explicit SequenceState(KvCache kv) : kv_(std::move(kv)) {}

  int32_t n_past() const noexcept { return n_past_; }
  int32_t n_ctx() const noexcept { return kv_.n_ctx(); }
  KvCache& kv() noexcept { return kv_; }
  const KvCache& kv() const noexcept { return kv_; }

  // context_full if n more positions do not fit; nothing changes either way.
  Status check_room(int64_t n) const;
  // Marks n positions (already written) as filled. Precondition: check_room(n) ok.
  void advance(int32_t n) noexcept { n_past_ += n; }
  // Keeps the first n_keep positions. Errors: invalid_argument if n_keep < 0 or > n_past.
  Status trim(int32_t n_keep);
  void reset() noexcept { n_past_ = 0; }

 private:
  KvCache kv_;
  int32_t n_past_ = 0;
};

}  // namespace les
