#include "core/model/expert_source.h"

#include <string>

namespace les {

Result<ExpertMatrices> ResidentExpertSource::get(int32_t layer, int32_t expert) {
  if (layer < 0 || static_cast<size_t>(layer) >= layers_.size())
    return invalid_argument_error("expert layer " + std::to_string(layer) + " out of range");
  const LayerExperts& l = layers_[static_cast<size_t>(layer)];
  if (!l.gate_exps.present() || expert < 0 || expert >= l.gate_exps.ne[2])
    return invalid_argument_error("expert " + std::to_string(expert) + " of layer " + std::to_string(layer) +
                                  " out of range");
  return ExpertMatrices{l.gate_exps.expert(expert), l.up_exps.expert(expert), l.down_exps.expert(expert)};
}

}  // namespace les
