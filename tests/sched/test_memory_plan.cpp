// Memory plan (sched/memory_plan.h): the expert budget is the limit minus
// the process baseline, dense weights, KV cache and scratch; the KV figure
// equals a real context's; the minimum is one token's worth of experts (as a
// created streaming source reports it); limits below it, a caller's budget
// that does not fit and a dense model that does not fit are refused with the
// arithmetic; a limit that holds every expert keeps them resident. The C API
// chooses the budget from les_context_params.memory_limit_bytes and reports
// the split.
#include <les/les.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include "core/gguf/gguf_reader.h"
#include "sched/context_factory.h"
#include "sched/memory_plan.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::sched;

namespace {

constexpr uint64_t kMiB = 1024 * 1024;

}  // namespace

TEST_CASE("memory plan: expert budget = limit - (baseline + dense + KV + scratch)", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-F16.gguf");
  auto m = Model::load(path, {});
  REQUIRE(m.ok());
  const Hparams& hp = (*m)->hparams();
  ContextParams cp;
  cp.n_ctx = 256;
  cp.n_threads = 2;
  const uint64_t baseline = 7 * kMiB;
  // What the caller measures (the process's resident set) includes the dense
  // weights the model read into its own memory (the default for MoE models);
  // the plan counts those once, as dense weights, not in the baseline too.
  REQUIRE((*m)->weights_read_bytes() > 0);
  const uint64_t rss_now = baseline + (*m)->weights_read_bytes();

  // Dense + routed = every tensor's bytes; routed are the *_exps tensors.
  const TensorSplit split = tensor_split(**m);
  uint64_t total = 0, exps = 0;
  for (const auto& t : (*m)->file().tensors()) {
    total += t.n_bytes;
    if (t.name.find("_exps") != std::string::npos) exps += t.n_bytes;
  }
  CHECK(split.dense + split.routed == total);
  CHECK(split.routed == exps);
  CHECK(split.routed > split.dense);

  // KV: 4 layers x 256 positions x (K + V rows of 2 heads x 128 F16) = 1 MiB; a context holds exactly that.
  auto kv = sequence_bytes(hp, 256, GgmlType::F16);
  REQUIRE(kv.ok());
  CHECK(*kv == 4u * 256u * 2u * (2u * 128u * 2u));
  auto ctx = create_context(**m, cp);
  REQUIRE(ctx.ok());
  CHECK((*ctx)->sequence().memory_bytes() == *kv);
  auto kv8 = sequence_bytes(hp, 256, GgmlType::Q8_0);
  REQUIRE(kv8.ok());
  CHECK(*kv8 == 4u * 256u * 2u * (2u * 128u / 32u * 34u));

  // The minimum: one token's worth of experts, as a streaming source of that model reports it.
  StreamingParams sp;
  sp.io = io::IoBackendKind::pread;
  auto min = min_expert_budget_bytes(**m, cp, sp);
  REQUIRE(min.ok());
  StreamingParams at_min = sp;
  at_min.budget_bytes = *min;
  auto sctx = create_context(**m, cp, at_min);
  REQUIRE(sctx.ok());
  const uint64_t one_token = streaming_source(**sctx)->one_token_budget_bytes();
  CHECK(one_token > *min);

  auto big = plan_memory(**m, cp, sp, 1024 * kMiB, rss_now);
  REQUIRE(big.ok());
  const MemoryPlan& p = *big;
  CHECK(p.baseline_bytes == baseline);
  CHECK(p.dense_bytes == split.dense);
  CHECK(p.routed_bytes == split.routed);
  CHECK(p.kv_bytes == *kv);
  CHECK(p.n_ctx == 256);
  CHECK(p.min_expert_bytes == one_token);
  CHECK(p.scratch_bytes == forward_scratch_bytes(hp, 256, 256, 2, GgmlType::F16));  // chunk: min(n_batch, n_ctx)
  // Scratch holds at least the logits and the residual rows of a full chunk.
  CHECK(p.scratch_bytes > 2u * hp.n_vocab * 4u + 3u * 256u * hp.n_embd * 4u);
  CHECK(p.fixed_bytes() == baseline + p.dense_bytes + p.kv_bytes + p.scratch_bytes);
  // 1 GiB holds the whole model: resident.
  CHECK(p.resident);
  CHECK(p.expert_budget_bytes == 0);

  SECTION("a limit between the minimum and the whole model streams with the rest as the budget") {
    const uint64_t limit = p.fixed_bytes() + p.min_expert_bytes + 3 * kMiB + 12345;
    REQUIRE(limit < p.fixed_bytes() + p.routed_bytes);
    auto q = plan_memory(**m, cp, sp, limit, rss_now);
    REQUIRE(q.ok());
    CHECK_FALSE(q->resident);
    CHECK(q->expert_budget_bytes == limit - p.fixed_bytes());
    CHECK(q->fixed_bytes() + q->expert_budget_bytes == limit);
    CHECK_THAT(describe(*q), Catch::Contains("(streamed)"));
  }
  SECTION("exactly the minimum is accepted; a byte less is refused with the arithmetic") {
    auto q = plan_memory(**m, cp, sp, p.fixed_bytes() + p.min_expert_bytes, rss_now);
    REQUIRE(q.ok());
    CHECK(q->expert_budget_bytes == p.min_expert_bytes);
    auto r = plan_memory(**m, cp, sp, p.fixed_bytes() + p.min_expert_bytes - 1, rss_now);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(r.status().message(), Catch::Contains("cannot hold the minimum") &&
                                         Catch::Contains("process baseline 7.0 MiB") &&
                                         Catch::Contains("KV cache 1.0 MiB (n_ctx 256)") &&
                                         Catch::Contains("one token's experts") && Catch::Contains("top-4"));
  }
  SECTION("a limit holding every expert keeps them resident") {
    auto q = plan_memory(**m, cp, sp, p.fixed_bytes() + p.routed_bytes, rss_now);
    REQUIRE(q.ok());
    CHECK(q->resident);
  }
  SECTION("a caller's budget is checked against the limit") {
    StreamingParams given = sp;
    given.budget_bytes = p.min_expert_bytes;
    auto ok = plan_memory(**m, cp, given, p.fixed_bytes() + given.budget_bytes, rss_now);
    REQUIRE(ok.ok());
    CHECK(ok->expert_budget_bytes == given.budget_bytes);
    auto no = plan_memory(**m, cp, given, p.fixed_bytes() + given.budget_bytes - 1, rss_now);
    REQUIRE_FALSE(no.ok());
    CHECK_THAT(no.status().message(), Catch::Contains("cannot hold the expert budget"));
  }
  SECTION("a longer context costs its KV cache, a longer chunk and attention scratch") {
    ContextParams longer = cp;
    longer.n_ctx = 1024;
    auto q = plan_memory(**m, longer, sp, 1024 * kMiB, rss_now);
    REQUIRE(q.ok());
    CHECK(q->kv_bytes == 4 * *kv);
    CHECK(q->scratch_bytes > p.scratch_bytes);
  }
}

TEST_CASE("memory plan: a draft model's weights, KV cache and scratch are counted", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(draft_path, "synthetic/qwen3moe-Q4_K_M.gguf");
  auto m = Model::load(path, {});
  auto d = Model::load(draft_path, {});
  REQUIRE(m.ok());
  REQUIRE(d.ok());
  ContextParams cp;
  cp.n_ctx = 256;
  cp.n_threads = 2;
  const uint64_t baseline = 7 * kMiB;
  // Both models' read weights are in the measured resident set; each is counted once.
  const uint64_t rss_now = baseline + (*m)->weights_read_bytes() + (*d)->weights_read_bytes();
  StreamingParams sp;
  auto alone = plan_memory(**m, cp, sp, 1024 * kMiB, rss_now - (*d)->weights_read_bytes());
  auto with = plan_memory(**m, cp, sp, 1024 * kMiB, rss_now, d->get());
  REQUIRE(alone.ok());
  REQUIRE(with.ok());
  CHECK(alone->draft_bytes == 0);
  CHECK(with->baseline_bytes == baseline);
  // The draft runs resident on a context of the target's n_ctx: every tensor, its KV cache, its scratch.
  const TensorSplit ds = tensor_split(**d);
  auto dkv = sequence_bytes((*d)->hparams(), 256, GgmlType::F16);
  REQUIRE(dkv.ok());
  const uint64_t dscratch = with->draft_bytes - ds.dense - ds.routed - *dkv;
  CHECK(with->draft_bytes > ds.dense + ds.routed + *dkv);
  // Threads as the draft context resolves them: the draft ModelParams' (0 here), then hardware.
  REQUIRE((*d)->params().n_threads == 0);
  const int draft_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  CHECK(dscratch == forward_scratch_bytes((*d)->hparams(), 256, 256, draft_threads, GgmlType::F16));
  CHECK(with->fixed_bytes() == alone->fixed_bytes() + with->draft_bytes);
  // A limit that held the target alone with room to stream now leaves the draft's bytes less.
  const uint64_t limit = alone->fixed_bytes() + with->draft_bytes + alone->min_expert_bytes + 3 * kMiB;
  auto q = plan_memory(**m, cp, sp, limit, rss_now, d->get());
  REQUIRE(q.ok());
  CHECK_FALSE(q->resident);
  CHECK(q->expert_budget_bytes == 3 * kMiB + alone->min_expert_bytes);
  CHECK(q->headroom_bytes() == 0);
  CHECK_THAT(describe(*q), Catch::Contains(" + draft model "));
  // Without room for the draft: refused, naming it.
  auto r = plan_memory(**m, cp, sp, alone->fixed_bytes() + alone->min_expert_bytes, rss_now, d->get());
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("cannot hold the minimum") && Catch::Contains("draft model"));
}

TEST_CASE("memory plan: a dense model must fit whole", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/llama-dense-Q4_K_M.gguf");
  auto m = Model::load(path, {});
  REQUIRE(m.ok());
  ContextParams cp;
  cp.n_ctx = 128;
  auto p = plan_memory(**m, cp, {}, 512 * kMiB, 0);
  REQUIRE(p.ok());
  CHECK(p->resident);
  CHECK(p->routed_bytes == 0);
  auto r = plan_memory(**m, cp, {}, p->fixed_bytes() - 1, 0);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("cannot hold this dense model"));
}

TEST_CASE("C API: memory_limit_bytes chooses the expert budget and reports the split", "[sched][api]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-F16.gguf");
  les_model* model = nullptr;
  REQUIRE(les_model_load(path.c_str(), nullptr, &model) == LES_OK);
  les_context_params cp = les_context_default_params();
  CHECK(cp.memory_limit_bytes == 0);
  cp.n_ctx = 256;
  cp.n_threads = 1;
  cp.io_backend = LES_IO_PREAD;

  // Without a limit the plan is all zeros.
  les_context* ctx = nullptr;
  REQUIRE(les_context_create(model, &cp, &ctx) == LES_OK);
  les_memory_plan plan{};
  plan.struct_size = sizeof plan;
  REQUIRE(les_context_memory_plan(ctx, &plan) == LES_OK);
  CHECK(plan.limit_bytes == 0);
  CHECK(plan.expert_budget_bytes == 0);
  les_context_free(ctx);
  ctx = nullptr;

  // A limit that holds the whole model: resident, the parts reported.
  cp.memory_limit_bytes = process_rss_bytes() + 1024 * kMiB;
  REQUIRE(les_context_create(model, &cp, &ctx) == LES_OK);
  REQUIRE(les_context_memory_plan(ctx, &plan) == LES_OK);
  CHECK(plan.limit_bytes == cp.memory_limit_bytes);
  CHECK(plan.resident == 1);
  CHECK(plan.baseline_bytes > 0);
  CHECK(plan.kv_bytes == 1 * kMiB);
  CHECK(plan.n_ctx == 256);
  CHECK(plan.routed_bytes > plan.min_expert_bytes);
  les_stream_stats st{};
  st.struct_size = sizeof st;
  CHECK(les_context_stream_stats(ctx, &st) == LES_ERR_INVALID_ARGUMENT);  // resident: nothing streams
  les_context_free(ctx);
  ctx = nullptr;

  // The process now, the fixed parts, the minimum and 2 MiB: streamed with a budget of what is left.
  const uint64_t parts = plan.dense_bytes + plan.kv_bytes + plan.scratch_bytes;
  cp.memory_limit_bytes = process_rss_bytes() + parts + plan.min_expert_bytes + 2 * kMiB;
  REQUIRE(les_context_create(model, &cp, &ctx) == LES_OK);
  REQUIRE(les_context_memory_plan(ctx, &plan) == LES_OK);
  CHECK(plan.resident == 0);
  CHECK(plan.expert_budget_bytes >= plan.min_expert_bytes);
  CHECK(plan.baseline_bytes + parts + plan.expert_budget_bytes == plan.limit_bytes);
  REQUIRE(les_context_stream_stats(ctx, &st) == LES_OK);
  CHECK(st.budget_bytes == plan.expert_budget_bytes);
  les_memory_plan bad{};
  bad.struct_size = 3;
  CHECK(les_context_memory_plan(ctx, &bad) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_memory_plan(nullptr, &plan) == LES_ERR_INVALID_ARGUMENT);
  les_context_free(ctx);
  ctx = nullptr;

  // A limit below the process itself: refused, nothing created, the message gives the numbers.
  cp.memory_limit_bytes = 1 * kMiB;
  CHECK(les_context_create(model, &cp, &ctx) == LES_ERR_INVALID_ARGUMENT);
  CHECK(ctx == nullptr);
  CHECK_THAT(std::string(les_last_error()), Catch::Contains("memory_limit_bytes") &&
                                               Catch::Contains("cannot hold the minimum") &&
                                               Catch::Contains("process baseline"));
  les_model_free(model);
}

TEST_CASE("memory plan: experts read into memory at load are resident whatever the limit", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-F16.gguf");
  ModelParams mp;
  mp.weights = WeightMemory::read;
  auto m = Model::load(path, mp);
  REQUIRE(m.ok());
  REQUIRE_FALSE((*m)->experts_mapped());
  ContextParams cp;
  cp.n_ctx = 256;
  cp.n_threads = 2;
  const uint64_t baseline = 7 * kMiB, rss_now = baseline + (*m)->weights_read_bytes();
  auto p = plan_memory(**m, cp, {}, 1024 * kMiB, rss_now);
  REQUIRE(p.ok());
  CHECK(p->resident);
  CHECK(p->baseline_bytes == baseline);
  auto r = plan_memory(**m, cp, {}, p->fixed_bytes() + p->routed_bytes - 1, rss_now);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::invalid_argument);
  CHECK_THAT(r.status().message(), Catch::Contains("read into memory at load"));
}
