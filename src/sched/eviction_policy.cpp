#include "sched/eviction_policy.h"

#include <cmath>

namespace les::sched {

const char* eviction_policy_name(EvictionPolicy p) noexcept {
  switch (p) {
    case EvictionPolicy::lru: return "lru";
    case EvictionPolicy::lfu_aged: return "lfu_aged";
    case EvictionPolicy::next_use: return "next_use";
    case EvictionPolicy::adaptive: return "adaptive";
  }
  return "?";
}

Result<EvictionPolicy> parse_eviction_policy(const std::string& name) {
  if (name == "lru") return EvictionPolicy::lru;
  if (name == "lfu" || name == "lfu_aged") return EvictionPolicy::lfu_aged;
  if (name == "next_use") return EvictionPolicy::next_use;
  if (name == "adaptive") return EvictionPolicy::adaptive;
  return invalid_argument_error("unknown eviction policy '" + name + "' (known: adaptive, next_use, lfu_aged, lru)");
}

std::vector<EvictionPolicy> all_eviction_policies() {
  return {EvictionPolicy::adaptive, EvictionPolicy::next_use, EvictionPolicy::lfu_aged, EvictionPolicy::lru};
}

Result<std::unique_ptr<Evictor>> make_evictor(EvictionPolicy policy, const EvictorParams& p) {
  if (p.n_layer <= 0 || p.n_expert <= 0 || p.n_expert_used <= 0)
    return invalid_argument_error("evictor: n_layer " + std::to_string(p.n_layer) + ", n_expert " +
                                  std::to_string(p.n_expert) + ", n_expert_used " + std::to_string(p.n_expert_used) +
                                  " must be positive");
  if (p.entry_bytes.size() != static_cast<size_t>(p.n_layer))
    return invalid_argument_error("evictor: " + std::to_string(p.entry_bytes.size()) + " entry sizes for " +
                                  std::to_string(p.n_layer) + " layers");
  for (size_t b : p.entry_bytes)
    if (b == 0) return invalid_argument_error("evictor: an entry size is 0 bytes");
  if (!(p.half_life_tokens > 0) || !(p.next_use_half_life > 0) || !std::isfinite(p.half_life_tokens) ||
      !std::isfinite(p.next_use_half_life))
    return invalid_argument_error("evictor: half-lives must be positive and finite");
  switch (policy) {
    case EvictionPolicy::lru: return make_lru_evictor(p);
    case EvictionPolicy::lfu_aged: return make_lfu_aged_evictor(p);
    case EvictionPolicy::next_use: return make_next_use_evictor(p);
    case EvictionPolicy::adaptive: return make_adaptive_evictor(p);
  }
  return invalid_argument_error("evictor: unknown policy");
}

}  // namespace les::sched
