// The KV cache of one generation stream.
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
// Layers listed in KvCacheParams::layers only: a hybrid model keeps K and V
// for its attention layers and none for its linear-attention ones. The
// sequence state (sequence_state.h) holds the cache.
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
  // Per layer: 1 = keep K and V. Empty: every layer. A layer without them has
  // k_data / v_data null and must not be stored to.
  std::vector<uint8_t> layers;
};

class KvCache {
 public:
  // Allocates n_ctx rows of K and of V per kept layer, zero-filled. Errors:
  // invalid_argument (non-positive sizes, `layers` not n_layer entries), unsupported (type other than F16 /
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
  const uint8_t* k_data(int32_t il) const noexcept { return k_[static_cast<size_t>(il)].empty() ? nullptr : k_[static_cast<size_t>(il)].data(); }
  const uint8_t* v_data(int32_t il) const noexcept { return v_[static_cast<size_t>(il)].empty() ? nullptr : v_[static_cast<size_t>(il)].data(); }
  size_t memory_bytes() const noexcept;
  // Writable rows of a kept layer, for restoring a saved state
  // (session_state.h); null for a layer without K/V. Precondition: il in range.
  uint8_t* k_data_mut(int32_t il) noexcept { return k_[static_cast<size_t>(il)].empty() ? nullptr : k_[static_cast<size_t>(il)].data(); }
  uint8_t* v_data_mut(int32_t il) noexcept { return v_[static_cast<size_t>(il)].empty() ? nullptr : v_[static_cast<size_t>(il)].data(); }

 private:
  KvCacheParams p_;
  size_t k_row_bytes_ = 0, v_row_bytes_ = 0;
  std::vector<std::vector<uint8_t>> k_, v_;
};

}  // namespace les
