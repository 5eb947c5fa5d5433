// Multi-query F16 attention (kernels.h OpKernels::attn_f16_kq_multi and
// attn_f16_kqv_multi, ops::attention_queries_f16): on every tier this machine
// runs, each query's scores, outputs and whole attention are bit-identical to
// the single-query kernels of the scalar reference in the gemm order (the
// contract; the single-query SIMD kernels equal the reference, test_op_kernels),
// for 1..kAttnMultiMax queries with different n_kv (causal rows of a batch),
// head dims with tails, n_kv below / across 16-row blocks, unaligned rows.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernel_tiers.h"
#include "kernels/fp16.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"

using namespace les;
using namespace les::kernels;

namespace {

bool same_bits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

float half_exact(float x) { return fp16_to_fp32(fp32_to_fp16(x)); }

std::vector<const KernelTable*> all_tables() {
  std::vector<const KernelTable*> t{kernel_table(KernelTier::scalar)};
  for (const KernelTable* s : les::test::simd_tables()) t.push_back(s);
  return t;
}

// K and V of n_kv rows of head_dim halves, `stride` bytes apart, 1 byte off
// alignment.
struct Kv {
  int64_t stride;
  std::vector<uint8_t> k, v;
  Kv(int64_t n_kv, int head_dim, std::mt19937& rng) : stride(2 * head_dim + 6) {
    std::normal_distribution<float> nd(0.0f, 1.0f);
    k.assign(static_cast<size_t>(n_kv * stride + 1), 0);
    v.assign(k.size(), 0);
    for (int64_t j = 0; j < n_kv; ++j)
      for (int d = 0; d < head_dim; ++d) {
        const fp16_t hk = fp32_to_fp16(nd(rng)), hv = fp32_to_fp16(nd(rng));
        std::memcpy(k.data() + 1 + j * stride + 2 * d, &hk, 2);
        std::memcpy(v.data() + 1 + j * stride + 2 * d, &hv, 2);
      }
  }
  const uint8_t* kp() const { return k.data() + 1; }
  const uint8_t* vp() const { return v.data() + 1; }
};

}  // namespace

TEST_CASE("multi-query F16 attention sums equal the single-query reference bit for bit", "[op_kernels]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  std::mt19937 rng(21);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_real_distribution<float> ud(0.0f, 1.0f);
  for (const KernelTable* t : les::test::simd_tables()) {
    if (!t->ops.attn_f16_kq_multi || !t->ops.attn_f16_kqv_multi) continue;
    INFO(kernel_tier_name(t->tier));
    for (int head_dim : {16, 40, 64, 128}) {
      for (int64_t n_first : {1, 5, 16, 17, 64, 130}) {
        for (int nq : {1, 3, 8}) {
          INFO("head_dim " << head_dim << " n_first " << n_first << " nq " << nq);
          const int64_t n_max = n_first + nq - 1;  // query i sees n_first + i positions
          const Kv kv(n_max, head_dim, rng);
          const int64_t s_stride = n_max + 3;
          std::vector<float> q(static_cast<size_t>(nq * head_dim)), p(static_cast<size_t>(nq * s_stride), NAN);
          std::vector<int64_t> n_kv(static_cast<size_t>(nq));
          for (float& x : q) x = half_exact(nd(rng));
          for (int i = 0; i < nq; ++i) {
            n_kv[static_cast<size_t>(i)] = n_first + i;
            for (int64_t j = 0; j < n_first + i; ++j)  // incl. exact zeros and F16 subnormals
              p[static_cast<size_t>(i * s_stride + j)] =
                  j % 7 == 3 ? 0.0f : half_exact(j % 5 == 1 ? 1e-7f * ud(rng) : ud(rng));
          }
          std::vector<float> kq_scr(static_cast<size_t>(op_kernels_kq_multi_scratch(head_dim)), NAN);
          std::vector<float> sc(static_cast<size_t>(nq * s_stride), NAN);
          t->ops.attn_f16_kq_multi(q.data(), head_dim, nq, kv.kp(), kv.stride, n_max, head_dim, sc.data(), s_stride,
                                   kq_scr.data());
          std::vector<float> kqv_scr(static_cast<size_t>(op_kernels_kqv_multi_scratch(nq, head_dim)), NAN);
          std::vector<float> out(static_cast<size_t>(nq * (head_dim + 1)), NAN);
          t->ops.attn_f16_kqv_multi(p.data(), s_stride, n_kv.data(), nq, kv.vp(), kv.stride, head_dim, out.data(),
                                    head_dim + 1, kqv_scr.data());
          for (int i = 0; i < nq; ++i) {
            INFO("query " << i);
            std::vector<float> ref(static_cast<size_t>(n_max));
            s->ops.attn_f16_kq(q.data() + i * head_dim, kv.kp(), kv.stride, n_max, head_dim, false, ref.data());
            CHECK(same_bits(ref.data(), sc.data() + i * s_stride, ref.size()));
            CHECK(std::isnan(sc[static_cast<size_t>(i * s_stride + n_max)]));  // nothing written past n_kv
            std::vector<float> ro(static_cast<size_t>(head_dim)), rs(static_cast<size_t>(op_kernels_kqv_scratch(head_dim)));
            s->ops.attn_f16_kqv(p.data() + i * s_stride, kv.vp(), kv.stride, n_kv[static_cast<size_t>(i)], head_dim,
                                false, ro.data(), rs.data());
            CHECK(same_bits(ro.data(), out.data() + i * (head_dim + 1), ro.size()));
            CHECK(std::isnan(out[static_cast<size_t>(i * (head_dim + 1) + head_dim)]));
          }
        }
      }
    }
  }
}

TEST_CASE("attention_queries_f16 equals attention_head_f16 in the gemm order on every tier", "[op_kernels]") {
  const KernelTable* s = kernel_table(KernelTier::scalar);
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  for (const KernelTable* t : all_tables()) {
    INFO(kernel_tier_name(t->tier));
    for (int head_dim : {40, 64, 128}) {
      for (int64_t n_first : {1, 15, 33, 200}) {
        for (int nq : {1, 2, 5, kAttnMultiMax}) {
          INFO("head_dim " << head_dim << " n_first " << n_first << " nq " << nq);
          // two rows per n_kv, as two query heads of a GQA group share a row
          const int64_t n_max = n_first + (nq - 1) / 2;
          const Kv kv(n_max, head_dim, rng);
          std::vector<float> q(static_cast<size_t>(nq * head_dim)), out(static_cast<size_t>(nq * head_dim), NAN);
          for (float& x : q) x = nd(rng);
          std::vector<const float*> qs;
          std::vector<float*> os;
          std::vector<int64_t> n_kv;
          for (int i = 0; i < nq; ++i) {
            qs.push_back(q.data() + i * head_dim);
            os.push_back(out.data() + i * head_dim);
            n_kv.push_back(n_first + i / 2);
          }
          std::vector<float> scr(static_cast<size_t>(ops::attention_queries_f16_scratch(n_max, nq, head_dim, head_dim)));
          const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
          ops::attention_queries_f16(qs.data(), n_kv.data(), nq, kv.kp(), kv.stride, kv.vp(), kv.stride, head_dim,
                                     head_dim, scale, os.data(), scr.data(), &t->ops);
          std::vector<float> ref(static_cast<size_t>(head_dim)),
              rs(static_cast<size_t>(ops::attention_head_f16_scratch(n_max, head_dim, head_dim)));
          for (int i = 0; i < nq; ++i) {
            INFO("query " << i);
            ops::attention_head_f16(qs[static_cast<size_t>(i)], kv.kp(), kv.stride, kv.vp(), kv.stride,
                                    n_kv[static_cast<size_t>(i)], head_dim, head_dim, scale, ref.data(), rs.data(),
                                    ops::F16DotOrder::gemm, &s->ops);
            CHECK(same_bits(ref.data(), os[static_cast<size_t>(i)], ref.size()));
          }
        }
      }
    }
  }
}
