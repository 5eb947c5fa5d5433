#include "core/model/weight_view.h"

namespace les {

WeightView WeightView::expert(int64_t e) const {
  WeightView v = *this;
  v.data = data + static_cast<size_t>(e) * (expert_stride != 0 ? expert_stride : slab_bytes());
  v.expert_stride = 0;
  v.ne[2] = 1;
  return v;
}

}  // namespace les
