// See vit_ops.h.
#include "vision/vit_ops.h"

#include <algorithm>

namespace les::vision {
namespace {

// Runs fn(begin, end) over [0, n) on the pool (or inline without one).
template <typename F>
void for_rows(kernels::ThreadPool* pool, int64_t n, F&& fn) {
  if (pool == nullptr || n < 2) {
    fn(int64_t{0}, n);
    return;
  }
  auto task = [&](int64_t b, int64_t e, int) { fn(b, e); };
  pool->parallel_for(n, task);
}

}  // namespace

Status linear_shared(const WeightView* const* ws, const WeightView* const* bs, float* const* ys, int count,
                     const float* x, int64_t n, VitCompute& c) {
  const float* xr = nullptr;  // x rounded to F16, made on first need
  for (int i = 0; i < count; ++i) {
    const WeightView& w = *ws[i];
    const int64_t rows = w.rows(), cols = w.cols();
    if (w.type == GgmlType::F16 || w.type == GgmlType::F32) {
      const float* in = x;
      if (w.type == GgmlType::F16) {
        if (xr == nullptr) {
          const size_t count_x = static_cast<size_t>(n * cols);
          if (c.xr.size() < count_x) c.xr.resize(count_x);
          std::copy(x, x + count_x, c.xr.begin());
          c.table->ops.round_f16(c.xr.data(), static_cast<int64_t>(count_x));
          xr = c.xr.data();
        }
        in = xr;
      }
      LES_RETURN_IF_ERROR(kernels::gemm_checked(*c.table, c.pool(), w.type, w.data, w.row_bytes, rows, cols, in, cols,
                                                n, ys[i], rows, c.gemm));
    } else {
      LES_RETURN_IF_ERROR(matmul(w, x, n, ys[i], c.mm));
    }
    if (bs[i]->present()) {
      const auto* bias = reinterpret_cast<const float*>(bs[i]->data);
      for (int64_t t = 0; t < n; ++t) add_inplace(ys[i] + t * rows, bias, rows);
    }
  }
  return Status();
}

Status linear(const WeightView& w, const WeightView& b, const float* x, int64_t n, float* y, VitCompute& c) {
  const WeightView* ws[1] = {&w};
  const WeightView* bs[1] = {&b};
  float* ys[1] = {y};
  return linear_shared(ws, bs, ys, 1, x, n, c);
}

void layer_norm_rows(const float* x, int64_t n, int64_t width, const WeightView& w, const WeightView& b, float eps,
                     float* y, VitCompute& c) {
  const auto* wp = w.present() ? reinterpret_cast<const float*>(w.data) : nullptr;
  const auto* bp = b.present() ? reinterpret_cast<const float*>(b.data) : nullptr;
  const auto ln = c.table->ops.layer_norm;
  for_rows(c.pool(), n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) ln(x + t * width, wp, bp, width, eps, y + t * width);
  });
}

void gelu_inplace(float* x, int64_t count, Gelu kind, VitCompute& c) {
  const auto fn = kind == Gelu::tanh ? c.table->ops.gelu_tanh : c.table->ops.gelu_erf;
  constexpr int64_t kChunk = 4096;
  const int64_t n_chunks = (count + kChunk - 1) / kChunk;
  for_rows(c.pool(), n_chunks, [&](int64_t begin, int64_t end) {
    for (int64_t ch = begin; ch < end; ++ch) {
      const int64_t off = ch * kChunk;
      const int64_t len = count - off < kChunk ? count - off : kChunk;
      fn(x + off, len, x + off);
    }
  });
}

void add_inplace(float* y, const float* x, int64_t count) {
  for (int64_t i = 0; i < count; ++i) y[i] += x[i];
}

void scale_rows(float* x, int64_t n, int64_t width, const float* s) {
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < width; ++j) x[t * width + j] *= s[j];
}

void gather_2x2(const float* x, int64_t gh, int64_t gw, int64_t width, float* out, float* mean) {
  const int64_t oh = gh / 2, ow = gw / 2;
  for (int64_t r = 0; r < oh; ++r) {
    for (int64_t c = 0; c < ow; ++c) {
      const int64_t o = r * ow + c;
      const float* p[4] = {x + ((2 * r) * gw + 2 * c) * width, x + ((2 * r) * gw + 2 * c + 1) * width,
                           x + ((2 * r + 1) * gw + 2 * c) * width, x + ((2 * r + 1) * gw + 2 * c + 1) * width};
      float* dst = out + o * 4 * width;
      for (int k = 0; k < 4; ++k)
        for (int64_t j = 0; j < width; ++j) dst[k * width + j] = p[k][j];
      if (mean != nullptr) {
        float* m = mean + o * width;
        for (int64_t j = 0; j < width; ++j) m[j] = (((p[0][j] + p[1][j]) + p[2][j]) + p[3][j]) * 0.25f;
      }
    }
  }
}

}  // namespace les::vision
