#include "core/kv_cache.h"

#include <new>
#include <string>

namespace les {

Result<KvCache> KvCache::create(const KvCacheParams& p) {
  if (p.n_layer <= 0 || p.n_ctx <= 0 || p.n_embd_k <= 0 || p.n_embd_v <= 0)
    return invalid_argument_error("KV cache sizes must be positive (n_layer " + std::to_string(p.n_layer) +
                                  ", n_ctx " + std::to_string(p.n_ctx) + ")");
  if (p.type != GgmlType::F16)
    return unsupported_error(std::string("KV cache type ") + ggml_type_name(p.type) + " (only F16 is implemented)");
  KvCache c;
  c.p_ = p;
  try {
    c.k_.resize(static_cast<size_t>(p.n_layer));
    c.v_.resize(static_cast<size_t>(p.n_layer));
    for (int32_t il = 0; il < p.n_layer; ++il) {
      c.k_[il].assign(static_cast<size_t>(p.n_ctx) * static_cast<size_t>(p.n_embd_k), 0);
      c.v_[il].assign(static_cast<size_t>(p.n_ctx) * static_cast<size_t>(p.n_embd_v), 0);
    }
  } catch (const std::bad_alloc&) {
    return out_of_memory_error("KV cache of " + std::to_string(p.n_ctx) + " positions");
  }
  return c;
}

Status SequenceState::check_room(int64_t n) const {
  if (n_past_ + n > kv_.n_ctx())
    return context_full_error("context full: " + std::to_string(n_past_) + " + " + std::to_string(n) +
                              " tokens exceed n_ctx " + std::to_string(kv_.n_ctx()));
  return Status();
}

Status SequenceState::trim(int32_t n_keep) {
  if (n_keep < 0 || n_keep > n_past_)
    return invalid_argument_error("trim to " + std::to_string(n_keep) + " positions, but " +
                                  std::to_string(n_past_) + " are filled");
  n_past_ = n_keep;
  return Status();
}

}  // namespace les
