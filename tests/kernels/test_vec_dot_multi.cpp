// vec_dot_multi (kernels.h): one weight row against 1..kVecDotMultiMax
// activation rows gives, for each row, the bits the same tier's vec_dot gives
// for that row alone, so a batched matmul never changes a token's result.
// Every tier this machine runs, every type with a multi-row kernel, edge-case
// scales and magnitudes, SIMD-misaligned rows and strided outputs.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "random_blocks.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::kernels;
using les::test::ScaleMode;

TEST_CASE("vec_dot_multi equals vec_dot row by row, bit for bit", "[kernels][matmul][batch]") {
  const KernelTable& scalar = *kernel_table(KernelTier::scalar);
  std::mt19937 rng(16);
  int checked = 0;
  for (int i = 0; i < kKernelTierCount; ++i) {
    const KernelTable* table = kernel_table(static_cast<KernelTier>(i));
    if (table == nullptr) continue;
    for (GgmlType t : les::test::dot_weight_types()) {
      const TypeKernels& k = table->of(t);
      if (k.vec_dot_multi == nullptr) continue;
      REQUIRE(k.vec_dot != nullptr);
      const int64_t bs = std::max<int64_t>(ggml_type_traits(t).block_size, ggml_type_traits(k.vec_dot_type).block_size);
      // Element types (block size 1: F16) also get lengths that end inside
      // their 32- and 8-lane loops, so every tail path is compared.
      const std::vector<int64_t> lengths = bs == 1 ? std::vector<int64_t>{1, 3, 8, 45, 299}
                                                   : std::vector<int64_t>{1, 3, 8};
      for (int64_t nblocks : lengths) {
        const int64_t n = nblocks * bs;
        for (ScaleMode mode : {ScaleMode::normal, ScaleMode::zero, ScaleMode::huge, ScaleMode::tiny}) {
          for (float mag : {1.0f, 0.0f, 1e4f}) {
            const auto w = les::test::random_weights(scalar, t, 1, n, mode, rng);
            const auto x = les::test::random_activations(scalar, t, kVecDotMultiMax, n, mag, rng);
            const size_t xrb = x.size() / kVecDotMultiMax;
            // Rows 4 bytes apart from their natural packing and 4 bytes off a
            // 32-byte boundary: misaligned for every vector load.
            const size_t x_stride = xrb + 4;
            std::vector<uint8_t> wbuf(w.size() + 36), xbuf(x_stride * kVecDotMultiMax + 36);
            std::memcpy(wbuf.data() + 4, w.data(), w.size());
            for (int r = 0; r < kVecDotMultiMax; ++r)
              std::memcpy(xbuf.data() + 4 + r * x_stride, x.data() + r * xrb, xrb);
            for (int nx = 1; nx <= kVecDotMultiMax; ++nx) {
              INFO("tier " << kernel_tier_name(table->tier) << " type " << ggml_type_name(t) << " n " << n << " nx "
                           << nx << " mag " << mag << " scale mode " << static_cast<int>(mode));
              const int64_t s_stride = 3;
              std::vector<float> s(static_cast<size_t>(s_stride * nx), -7.0f);
              k.vec_dot_multi(n, s.data(), s_stride, wbuf.data() + 4, xbuf.data() + 4, x_stride, nx);
              for (int r = 0; r < nx; ++r) {
                float alone = 0;
                k.vec_dot(n, &alone, w.data(), x.data() + r * xrb);
                CHECK(std::memcmp(&alone, &s[static_cast<size_t>(r * s_stride)], sizeof(float)) == 0);
                CHECK(s[static_cast<size_t>(r * s_stride + 1)] == -7.0f);  // only s[t * s_stride] is written
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  if (checked == 0) les::test::mark_skipped("no tier of this machine has a vec_dot_multi kernel");
}
