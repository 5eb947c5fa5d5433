// attention_rows (core/attention.h): the (token, head) split over a ThreadPool
// gives bit-identical outputs for 1, 2 and 3 threads, for F16 and Q8_0 caches;
// the F16 path equals ops::attention_f16 (the single-token reference); and a
// whole Context decodes to identical logits with 1, 2 and 3 threads.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/model/attention.h"
#include "core/model/context.h"
#include "core/model/model.h"
#include "kernels/fp16.h"
#include "kernels/ops.h"
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

TEST_CASE("attention_rows on a Q8_0 cache is close to the F16 cache", "[attention]") {
  const Hparams hp = attn_hparams();
  const int32_t n_pos = 24;
  const int64_t n_rows = 3, pos_first = n_pos - n_rows;
  const Setup a = make_setup(hp, GgmlType::F16, n_pos, n_rows, 13);
  const Setup b = make_setup(hp, GgmlType::Q8_0, n_pos, n_rows, 13);  // same random K, V, q
  const auto oa = run(hp, a, n_rows, pos_first, 1), ob = run(hp, b, n_rows, pos_first, 1);
  double max_diff = 0;
  for (size_t i = 0; i < oa.size(); ++i) max_diff = std::max(max_diff, std::fabs(double(oa[i]) - ob[i]));
  INFO("max diff " << max_diff);
  CHECK(max_diff > 0);     // the caches really differ
  CHECK(max_diff < 0.05);  // Q8_0 error of N(0,1) values, averaged by the softmax
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
