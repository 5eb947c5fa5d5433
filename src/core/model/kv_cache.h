// KV cache and per-sequence state of one generation stream.
//
// Layout: per layer, K is n_ctx rows (row = position) of n_embd_k elements,
// heads back to back (K[pos][h * head_dim + d]); V likewise with n_embd_v
// elements. Rows are ggml rows of the cache type:
//  * F16 (default): each value rounded to half when stored, as llama.cpp's
//    default F16 cache does.
//  * Q8_0: each run of 32 values one Q8_0 block (d = amax / 127 as F16, codes
//    round-half-even), quantised by the activation quantiser ggml's f32 -> q8_0
//    copy uses. head_dim and head_dim_v must be multiples of 32 so that every
//    block lies inside one head.
// Any other type is StatusCode::unsupported.
//
// SequenceState is the abstraction the forward pass writes into: today it holds
// the KV cache and the number of positions filled; recurrent (Gated DeltaNet)
// state for hybrid models belongs here too, so trim/reset stay one operation.
//
// Thread-safety: thread-compatible (one thread at a time); the const accessors
// may be used from several threads at once while nothing is stored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/ggml_type.h"
#include "util/status.h"

namespace les {

struct KvCacheParams {
  int32_t n_layer = 0;
  int32_t n_ctx = 0;       // positions
  int32_t n_embd_k = 0;    // n_head_kv * head_dim
  int32_t n_embd_v = 0;    // n_head_kv * head_dim_v
  int32_t head_dim = 0;    // K elements per head (0: n_embd_k, i.e. not checked per head)
  int32_t head_dim_v = 0;  // V elements per head (0: n_embd_v)
  GgmlType type = GgmlType::F16;  // F16 or Q8_0
};

class KvCache {
 public:
  // Allocates n_layer * n_ctx rows of K and of V, zero-filled. Errors:
  // invalid_argument (non-positive sizes), unsupported (type other than F16 /
  // Q8_0; Q8_0 with a head_dim or head_dim_v that is not a multiple of 32),
  // out_of_memory.
  static Result<KvCache> create(const KvCacheParams& p);

  int32_t n_ctx() const noexcept { return p_.n_ctx; }
  const KvCacheParams& params() const noexcept { return p_; }
  GgmlType type() const noexcept { return p_.type; }
  size_t k_row_bytes() const noexcept { return k_row_bytes_; }  // bytes of one K row (one position)
  size_t v_row_bytes() const noexcept { return v_row_bytes_; }

  // Converts k (n_embd_k floats) and v (n_embd_v floats) to the cache type and
  // stores them as position `pos` of layer `il`. Precondition: both in range.
  void store(int32_t il, int32_t pos, const float* k, const float* v) noexcept;

  // Position 0 of layer il; position j starts j * k_row_bytes() (v_row_bytes()) later.
  const uint8_t* k_data(int32_t il) const noexcept { return k_[static_cast<size_t>(il)].data(); }
  const uint8_t* v_data(int32_t il) const noexcept { return v_[static_cast<size_t>(il)].data(); }

 private:
  KvCacheParams p_;
  size_t k_row_bytes_ = 0, v_row_bytes_ = 0;
  std::vector<std::vector<uint8_t>> k_, v_;
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
