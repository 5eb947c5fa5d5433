#include "core/model/kv_cache.h"

#include <new>
#include <string>

#include "kernels/fp16.h"
#include "kernels/kernels.h"
#include "kernels/unaligned.h"

namespace les {
namespace {

// Stores n floats as one row of `type` (F16 or Q8_0) at dst.
void convert_row(GgmlType type, const float* x, int64_t n, uint8_t* dst) {
  if (type == GgmlType::F16) {
    for (int64_t i = 0; i < n; ++i) kernels::store_unaligned(dst, i, fp32_to_fp16(x[i]));
  } else {
    kernels::default_kernel_table().of(GgmlType::Q8_0).quantize_row(x, dst, n);
  }
}

}  // namespace

Result<KvCache> KvCache::create(const KvCacheParams& p) {
  if (p.n_layer <= 0 || p.n_ctx <= 0 || p.n_embd_k <= 0 || p.n_embd_v <= 0)
    return invalid_argument_error("KV cache sizes must be positive (n_layer " + std::to_string(p.n_layer) +
                                  ", n_ctx " + std::to_string(p.n_ctx) + ", n_embd_k " +
                                  std::to_string(p.n_embd_k) + ", n_embd_v " + std::to_string(p.n_embd_v) + ")");
  if (!p.layers.empty() && p.layers.size() != static_cast<size_t>(p.n_layer))
    return invalid_argument_error("KV cache layer mask has " + std::to_string(p.layers.size()) + " entries, n_layer is " +
                                  std::to_string(p.n_layer));
  if (p.type != GgmlType::F16 && p.type != GgmlType::Q8_0)
    return unsupported_error(std::string("KV cache type ") + ggml_type_name(p.type) + " (F16 and Q8_0 are implemented)");
  if (p.type == GgmlType::Q8_0) {
    const int32_t hd = p.head_dim > 0 ? p.head_dim : p.n_embd_k;
    const int32_t hdv = p.head_dim_v > 0 ? p.head_dim_v : p.n_embd_v;
    if (hd % kQK8_0 != 0 || hdv % kQK8_0 != 0 || p.n_embd_k % kQK8_0 != 0 || p.n_embd_v % kQK8_0 != 0)
      return unsupported_error("Q8_0 KV cache needs head_dim and head_dim_v to be multiples of 32 (head_dim " +
                               std::to_string(hd) + ", head_dim_v " + std::to_string(hdv) + ")");
  }
  KvCache c;
  c.p_ = p;
  c.k_row_bytes_ = *ggml_row_bytes(p.type, p.n_embd_k);
  c.v_row_bytes_ = *ggml_row_bytes(p.type, p.n_embd_v);
  try {
    c.k_.resize(static_cast<size_t>(p.n_layer));
    c.v_.resize(static_cast<size_t>(p.n_layer));
    for (int32_t il = 0; il < p.n_layer; ++il) {
      if (!p.layers.empty() && p.layers[static_cast<size_t>(il)] == 0) continue;
      c.k_[static_cast<size_t>(il)].assign(static_cast<size_t>(p.n_ctx) * c.k_row_bytes_, 0);
      c.v_[static_cast<size_t>(il)].assign(static_cast<size_t>(p.n_ctx) * c.v_row_bytes_, 0);
    }
  } catch (const std::bad_alloc&) {
    return out_of_memory_error("KV cache of " + std::to_string(p.n_ctx) + " positions");
  }
  return c;
}

void KvCache::store(int32_t il, int32_t pos, const float* k, const float* v) noexcept {
  const auto l = static_cast<size_t>(il), j = static_cast<size_t>(pos);
  convert_row(p_.type, k, p_.n_embd_k, k_[l].data() + j * k_row_bytes_);
  convert_row(p_.type, v, p_.n_embd_v, v_[l].data() + j * v_row_bytes_);
}

size_t KvCache::memory_bytes() const noexcept {
  size_t b = 0;
  for (size_t l = 0; l < k_.size(); ++l) b += k_[l].size() + v_[l].size();
  return b;
}

}  // namespace les
