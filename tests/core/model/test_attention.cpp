// attention_rows (core/model/attention.h): the (token, head) split over a ThreadPool
// gives bit-identical outputs for 1, 2 and 3 threads, for F16 and Q8_0 caches;
// the F16 path equals ops::attention_f16 (the single-token reference); the Q8_0
// path on every kernel tier is within a derived rounding bound of exact attention
// over the same quantised values; and a whole Context decodes to identical
// logits with 1, 2 and 3 threads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "core/model/attention.h"
#include "core/model/context.h"
#include "core/model/model.h"
#include "kernels/fp16.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"
#include "kernels/ref.h"
#include "support/fixtures.h"

using namespace les;

namespace {

Hparams attn_hparams() {
  Hparams hp;
  hp.n_head = 8;
  hp.n_head_kv = 2;
  hp.head_dim = 64;
  hp.head_dim_v = 64;
  return hp;
}

// A 1-layer cache of `n_pos` random positions and n_rows random query rows.
struct Setup {
  KvCache kv;
  std::vector<float> q;
};

Setup make_setup(const Hparams& hp, GgmlType type, int32_t n_pos, int64_t n_rows, uint32_t seed) {
  KvCacheParams p;
  p.n_layer = 1;
  p.n_ctx = n_pos;
  p.n_embd_k = hp.n_embd_k();
  p.n_embd_v = hp.n_embd_v();
  p.head_dim = hp.head_dim;
  p.head_dim_v = hp.head_dim_v;
  p.type = type;
  auto kv = KvCache::create(p);
  REQUIRE(kv.ok());
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> k(static_cast<size_t>(p.n_embd_k)), v(static_cast<size_t>(p.n_embd_v));
  for (int32_t pos = 0; pos < n_pos; ++pos) {
    for (auto& x : k) x = nd(rng);
    for (auto& x : v) x = nd(rng);
    kv->store(0, pos, k.data(), v.data());
  }
  std::vector<float> q(static_cast<size_t>(n_rows * hp.n_embd_q()));
  for (auto& x : q) x = nd(rng);
  return {std::move(kv).value(), std::move(q)};
}

std::vector<float> run(const Hparams& hp, const Setup& s, int64_t n_rows, int64_t pos_first, int threads) {
  std::vector<float> out(static_cast<size_t>(n_rows * hp.n_head * hp.head_dim_v), NAN);
  AttentionScratch scratch;
  kernels::ThreadPool pool(threads);
  attention_rows(hp, s.kv, 0, s.q.data(), n_rows, pos_first, n_rows > 1, out.data(), scratch,
                 threads > 0 ? &pool : nullptr);
  return out;
}

}  // namespace

TEST_CASE("attention_rows is bit-identical for 1, 2 and 3 threads", "[attention]") {
  const Hparams hp = attn_hparams();
  for (GgmlType type : {GgmlType::F16, GgmlType::Q8_0}) {
    INFO(ggml_type_name(type));
    const int32_t n_pos = 37;
    for (int64_t n_rows : {1, 5, 13}) {
      INFO("rows " << n_rows);
      const int64_t pos_first = n_pos - n_rows;
      const Setup s = make_setup(hp, type, n_pos, n_rows, 11);
      const auto ref = run(hp, s, n_rows, pos_first, 0);  // no pool: the calling thread alone
      for (float x : ref) REQUIRE(std::isfinite(x));
      for (int threads : {1, 2, 3}) {
        INFO("threads " << threads);
        const auto out = run(hp, s, n_rows, pos_first, threads);
        CHECK(std::memcmp(out.data(), ref.data(), ref.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("attention_rows on an F16 cache equals ops::attention_f16 per token", "[attention]") {
  const Hparams hp = attn_hparams();
  const int32_t n_pos = 20;
  const int64_t n_rows = 4, pos_first = n_pos - n_rows;
  const Setup s = make_setup(hp, GgmlType::F16, n_pos, n_rows, 12);
  const auto out = run(hp, s, n_rows, pos_first, 2);
  const int64_t Dq = hp.n_embd_q(), Da = static_cast<int64_t>(hp.n_head) * hp.head_dim_v;
  std::vector<float> expect(static_cast<size_t>(Da)),
      scratch(static_cast<size_t>(ops::attention_head_f16_scratch(n_pos, hp.head_dim, hp.head_dim_v)));
  const auto* k = reinterpret_cast<const fp16_t*>(s.kv.k_data(0));
  const auto* v = reinterpret_cast<const fp16_t*>(s.kv.v_data(0));
  for (int64_t t = 0; t < n_rows; ++t) {
    ops::attention_f16(s.q.data() + t * Dq, k, hp.n_embd_k(), v, hp.n_embd_v(), pos_first + t + 1, hp.n_head,
                       hp.n_head_kv, hp.head_dim, hp.head_dim_v, 1.0f / 8.0f, expect.data(), scratch.data(),
                       ops::F16DotOrder::gemm);
    CHECK(std::memcmp(out.data() + t * Da, expect.data(), expect.size() * sizeof(float)) == 0);
  }
}

// Error bound of attention_head_q8_0 against exact attention over the same
// quantised values: q̂ = dequant(q8_0(q)) (the reference quantiser, which every
// tier reproduces bit for bit), K̂_j and V̂_j the dequantised cache rows.
// Exact (double): s*_j = scale·Σ_i q̂_i K̂_ji, p* = softmax(s*), o*_d = Σ_j p*_j V̂_jd.
// Float rounding (u = 2^-24, γ_n = n·u / (1 - n·u); Higham, Accuracy and
// Stability of Numerical Algorithms, 2nd ed., §3.1):
//  * score: the block integer sums are exact; each block's d_q·d_k, its product
//    with the sum, the accumulation over nb = head_dim / 32 blocks (in any
//    order, fused or not) and the product with scale round at most nb + 3 times
//    per term, so |ŝ_j - s*_j| <= δ_j = γ_{nb+3} · scale · Σ_i |q̂_i K̂_ji|.
//  * softmax of ŝ: shifting by the max rounds the exponent argument by <= u·R
//    (R = the score range); exp (ggml's vectorised expf, <= 1.5 ulp + rounding,
//    or std::exp for the tail) is taken as <= 8u relative; the chunk sums of 16
//    round 4 times (γ_4); 1 / sum and the product round once each. So
//    p̂_j = p̃_j (1 + θ_j), |θ_j| <= ρ = 2 (8u + u·R) + γ_4 + 2u (+ 1% for second
//    order terms), where p̃ = softmax(ŝ) and |ln p̃_j - ln p*_j| <= 2δ (δ = max δ_j).
//  * output: out_d = Σ_j p̂_j V̂_jd accumulated in float, <= γ_{n+1} Σ_j p̂_j |V̂_jd|.
// Together: |out_d - o*_d| <= S_d · ((e^{2δ} - 1) + ρ e^{2δ} + γ_{n+1} e^{2δ} (1 + ρ)),
// S_d = Σ_j p*_j |V̂_jd|. Every tier's kernel table is checked with it.
TEST_CASE("attention on a Q8_0 cache equals exact attention over the quantised q, K, V within the rounding bound",
          "[attention]") {
  const Hparams hp = attn_hparams();
  const int32_t n_pos = 37;  // two 16-wide exp chunks and a tail
  const int64_t n_rows = 5, pos_first = n_pos - n_rows;
  const Setup b = make_setup(hp, GgmlType::Q8_0, n_pos, n_rows, 13);
  const int D = hp.head_dim, Dv = hp.head_dim_v, group = hp.n_head / hp.n_head_kv;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const size_t k_head = static_cast<size_t>(D / 32) * sizeof(block_q8_0);
  const size_t v_head = static_cast<size_t>(Dv / 32) * sizeof(block_q8_0);
  const double u = 0x1p-24;
  auto gamma = [&](double n) { return n * u / (1 - n * u); };
  std::vector<float> out(static_cast<size_t>(Dv)),
      scratch(static_cast<size_t>(ops::attention_head_q8_0_scratch(n_pos, D, Dv)));
  std::vector<block_q8_0> qb(static_cast<size_t>(D / 32));
  std::vector<float> qhat(static_cast<size_t>(D)), khat(static_cast<size_t>(n_pos) * D),
      vhat(static_cast<size_t>(n_pos) * Dv);
  int checked_tiers = 0;
  double worst_ratio = 0, max_bound = 0;
  for (int ti = 0; ti < kernels::kKernelTierCount; ++ti) {
    const kernels::KernelTable* table = kernels::kernel_table(static_cast<kernels::KernelTier>(ti));
    if (table == nullptr) continue;
    INFO("tier " << kernels::kernel_tier_name(table->tier));
    ++checked_tiers;
    const kernels::TypeKernels& q8k = table->of(GgmlType::Q8_0);
    for (int64_t t = 0; t < n_rows; ++t) {
      const int64_t n = pos_first + t + 1;
      for (int h = 0; h < hp.n_head; ++h) {
        const int hk = h / group;
        const float* q = b.q.data() + t * hp.n_embd_q() + static_cast<int64_t>(h) * D;
        const uint8_t* k = b.kv.k_data(0) + static_cast<size_t>(hk) * k_head;
        const uint8_t* v = b.kv.v_data(0) + static_cast<size_t>(hk) * v_head;
        ops::attention_head_q8_0(q, k, static_cast<int64_t>(b.kv.k_row_bytes()), v,
                                 static_cast<int64_t>(b.kv.v_row_bytes()), n, D, Dv, scale, out.data(),
                                 scratch.data(), q8k.vec_dot, q8k.quantize_row, q8k.dequantize_row);
        kernels::quantize_row_q8_0_ref(q, qb.data(), D);
        kernels::dequantize_row_q8_0_ref(qb.data(), qhat.data(), D);
        std::vector<double> s(static_cast<size_t>(n)), p(static_cast<size_t>(n));
        double delta = 0, s_max = -INFINITY, s_min = INFINITY;
        for (int64_t j = 0; j < n; ++j) {
          float* kj = khat.data() + j * D;
          kernels::dequantize_row_q8_0_ref(
              reinterpret_cast<const block_q8_0*>(k + static_cast<size_t>(j) * b.kv.k_row_bytes()), kj, D);
          kernels::dequantize_row_q8_0_ref(
              reinterpret_cast<const block_q8_0*>(v + static_cast<size_t>(j) * b.kv.v_row_bytes()),
              vhat.data() + j * Dv, Dv);
          double dot = 0, abs_dot = 0;
          for (int i = 0; i < D; ++i) {
            dot += static_cast<double>(qhat[i]) * kj[i];
            abs_dot += std::fabs(static_cast<double>(qhat[i]) * kj[i]);
          }
          s[j] = scale * dot;
          delta = std::max(delta, gamma(D / 32 + 3) * scale * abs_dot);
          s_max = std::max(s_max, s[j]);
          s_min = std::min(s_min, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < n; ++j) sum += p[j] = std::exp(s[j] - s_max);
        for (double& x : p) x /= sum;
        const double range = s_max - s_min + 2 * delta;
        const double rho = 1.01 * (2 * (8 * u + u * range) + gamma(4) + 2 * u);
        const double e2d = std::exp(2 * delta);
        const double factor = (e2d - 1) + rho * e2d + gamma(static_cast<double>(n) + 1) * e2d * (1 + rho);
        for (int d = 0; d < Dv; ++d) {
          double o = 0, S = 0;
          for (int64_t j = 0; j < n; ++j) {
            o += p[j] * vhat[j * Dv + d];
            S += p[j] * std::fabs(vhat[j * Dv + d]);
          }
          const double bound = S * factor, err = std::fabs(out[d] - o);
          max_bound = std::max(max_bound, bound);
          worst_ratio = std::max(worst_ratio, err / bound);
          if (err > bound) {
            INFO("row " << t << " head " << h << " d " << d << ": |out - exact| " << err << " > bound " << bound);
            CHECK(err <= bound);
          }
        }
      }
    }
  }
  std::printf("Q8_0 attention vs exact over the quantised values: %d tiers, largest bound %.3g, worst error/bound %.3f\n",
              checked_tiers, max_bound, worst_ratio);
  CHECK(checked_tiers >= 1);
  CHECK(worst_ratio <= 1.0);
}

TEST_CASE("Context logits are bit-identical for 1, 2 and 3 threads", "[attention][golden]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  auto m = Model::load(path, {});
  REQUIRE(m.ok());
  const std::vector<int32_t> prompt = {1, 450, 3021, 17, 901, 2048, 77, 5, 1234, 42, 8000, 300};
  for (GgmlType type : {GgmlType::F16, GgmlType::Q8_0}) {
    INFO(ggml_type_name(type));
    std::vector<float> ref_all, ref_step;
    for (int threads : {1, 2, 3}) {
      INFO("threads " << threads);
      ContextParams cp;
      cp.n_ctx = 64;
      cp.n_threads = threads;
      cp.kv_type = type;
      auto c = Context::create(**m, cp);
      REQUIRE(c.ok());
      Context& ctx = **c;
      REQUIRE(ctx.decode(prompt, /*all_logits=*/true).ok());
      std::vector<float> all(ctx.logits_all().begin(), ctx.logits_all().end());
      const int32_t next[] = {99, 1000, 7};
      std::vector<float> step;
      for (int32_t id : next) {
        REQUIRE(ctx.decode(std::span<const int32_t>(&id, 1)).ok());
        step.insert(step.end(), ctx.logits().begin(), ctx.logits().end());
      }
      if (threads == 1) {
        ref_all = all;
        ref_step = step;
      } else {
        REQUIRE(all.size() == ref_all.size());
        CHECK(std::memcmp(all.data(), ref_all.data(), all.size() * sizeof(float)) == 0);
        CHECK(std::memcmp(step.data(), ref_step.data(), step.size() * sizeof(float)) == 0);
      }
    }
  }
}
