// Per-element weights of the weight quantisers' error (ref.h): an imatrix
// row's importance shrunk toward its row mean, w_i = importance_i +
// kImportanceFloor * mean(importance). An imatrix is an estimate from finite
// calibration text; columns it saw little of would otherwise be given up
// entirely. With the floor at half the mean, the fixture rows' plain and
// importance-weighted errors are both below ggml's
// (tests/kernels/test_quantize_weights.cpp).
//
// Thread-safety: a RowWeights is used by one thread (group() fills its buffer).
#pragma once

#include <cstdint>

#include "kernels/block_formats.h"

namespace les::kernels {

inline constexpr double kImportanceFloor = 0.5;

class RowWeights {
 public:
  // importance: null (unit weights) or the n importances of one row.
  RowWeights(const float* importance, int64_t n) : imp_(importance) {
    if (!imp_) return;
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += imp_[i];
    floor_ = static_cast<float>(kImportanceFloor * sum / static_cast<double>(n));
  }
  // Weights of elements [offset, offset + len) (len <= 256), valid until the
  // next call, or null without importance.
  const float* group(int64_t offset, int len) {
    if (!imp_) return nullptr;
    for (int i = 0; i < len; ++i) buf_[i] = imp_[offset + i] + floor_;
    return buf_;
  }

 private:
  const float* imp_;
  float floor_ = 0.0f;
  float buf_[kQKK];
};

}  // namespace les::kernels
