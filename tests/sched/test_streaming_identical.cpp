// Lossless streaming: for every budget (minimum, small, full), candidate count
// c in {k, k+2, 2k} and I/O backend (pread, io_uring, dispatch_io where built),
// the logits of a prefill + decode run through StreamingExpertSource are bit-identical to the
// resident run, on the trained fixtures (F16, Q4_K_M, mixed), a synthetic
// qwen3moe, the trained model with IQ4_XS and MXFP4 experts, and every
// qwen35moe fixture (hybrid linear attention, shared expert, MTP block); with and without ready-first hand-out; in the original
// and the repacked (contiguous) expert layout. The smallest budget of every
// qwen35moe fixture is at most 1 MiB.
#include <catch2/catch.hpp>

#include <cstdio>

#include "core/gguf/expert_repack.h"
#include "io/io_backend_list.h"
#include "sched/context_factory.h"
#include "sched_test_util.h"
#include "support/fixtures.h"
#include "support/gguf_patch.h"

using namespace les;
using namespace les::sched;

namespace {

struct Reference {
  std::unique_ptr<Model> model;
  test::RunLogits logits;
  std::vector<int32_t> prompt;
};

Reference reference_run(const std::string& path, int n_prompt, int n_steps, int32_t n_batch) {
  Reference r;
  auto m = Model::load(path, {});
  REQUIRE(m.ok());
  r.model = std::move(m).value();
  ContextParams cp;
  cp.n_batch = n_batch;
  auto ctx = Context::create(*r.model, cp);
  REQUIRE(ctx.ok());
  r.prompt = test::test_prompt(r.model->hparams().n_vocab, n_prompt);
  REQUIRE(test::run_logits(**ctx, r.prompt, n_steps, nullptr, &r.logits).ok());
  return r;
}

// Streams with the given parameters and checks every logit row against `ref`.
void check_streaming(const std::string& path, const Reference& ref, StreamingParams sp, int32_t n_batch,
                     SchedStats* stats_out = nullptr) {
  auto m = Model::load(path, {});
  REQUIRE(m.ok());
  ContextParams cp;
  cp.n_batch = n_batch;
  auto ctx = create_context(**m, cp, sp);
  if (!ctx.ok() && ctx.status().code() == StatusCode::unsupported && sp.io == io::IoBackendKind::io_uring) {
    test::mark_skipped("io_uring unavailable here: " + ctx.status().to_string());
    return;
  }
  REQUIRE(ctx.ok());
  const StreamingExpertSource* src = streaming_source(**ctx);
  REQUIRE(src != nullptr);
  test::RunLogits got;
  Status st = test::run_logits(**ctx, ref.prompt, static_cast<int>(ref.logits.fed.size()), &ref.logits.fed, &got);
  INFO(st.to_string());
  REQUIRE(st.ok());
  CHECK(test::same_bits(got.prefill, ref.logits.prefill));
  REQUIRE(got.steps.size() == ref.logits.steps.size());
  for (size_t i = 0; i < got.steps.size(); ++i) {
    INFO("decode step " << i);
    CHECK(test::same_bits(got.steps[i], ref.logits.steps[i]));
  }
  const SchedStats& s = src->stats();
  CHECK(s.batches == (ref.prompt.size() + n_batch - 1) / n_batch + ref.logits.fed.size());
  CHECK(s.hits() + s.inflight_hits() + s.misses() > 0);
  const uint64_t reads_per_expert = src->layout().contiguous() ? 1 : 3;
  CHECK(s.reads_issued == reads_per_expert * (s.demand_experts + s.prefetch_experts));
  if (stats_out) *stats_out = s;
}

void matrix_for(const std::string& path) {
  const Reference ref = reference_run(path, 16, 4, 512);
  const Hparams& hp = ref.model->hparams();
  const int32_t k = hp.n_expert_used;
  StreamingParams base;
  auto min = min_expert_budget_bytes(*ref.model, {}, base);
  REQUIRE(min.ok());
  auto layout = SlotLayout::from_model(*ref.model, 4096);
  REQUIRE(layout.ok());
  const size_t full = *min + static_cast<size_t>(hp.n_layer) * hp.n_expert * layout->slot_bytes();
  const size_t small = *min + 3 * static_cast<size_t>(k) * layout->slot_bytes();
  for (io::IoBackendKind kind : test::io_backend_kind_list()) {
    for (int32_t c : {k, k + 2, 2 * k}) {
      for (size_t budget : {*min, small, full}) {
        DYNAMIC_SECTION(io::io_backend_kind_name(kind) << " c=" << c << " budget=" << budget) {
          StreamingParams sp;
          sp.io = kind;
          sp.prefetch_c = std::min(c, hp.n_expert);
          sp.budget_bytes = budget;
          SchedStats stats;
          check_streaming(path, ref, sp, 512, &stats);
          // Prefetch keeps k slots claimable for demand reads: none at the
          // minimum budget (one slot), some once there is room.
          if (budget == *min) CHECK(stats.prefetch_experts == 0);
          if (budget == full) CHECK(stats.prefetch_experts > 0);
          // A prefetched expert's first use is counted once, and only for a prefetch.
          CHECK(stats.prefetch_hits() <= stats.prefetch_experts);
          if (budget == full) CHECK(stats.prefetch_hits() > 0);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("streaming logits are bit-identical to resident: trained F16", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  matrix_for(path);
}

TEST_CASE("streaming logits are bit-identical to resident: trained Q4_K_M", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  matrix_for(path);
}

TEST_CASE("streaming logits are bit-identical to resident: trained mixed Q3_K", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf");
  matrix_for(path);
}

TEST_CASE("streaming logits are bit-identical to resident: synthetic qwen3moe Q4_K_M", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-Q4_K_M.gguf");
  matrix_for(path);
}

TEST_CASE("streaming: chunked prefill, no lookahead, lru, embeddings layer-0 predictor", "[sched]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  const Reference ref = reference_run(path, 40, 4, 7);
  ContextParams cp7;
  cp7.n_batch = 7;
  auto min = min_expert_budget_bytes(*ref.model, cp7);
  REQUIRE(min.ok());
  for (int32_t c : {0, 4}) {
    for (Layer0Lookahead l0 : {Layer0Lookahead::none, Layer0Lookahead::embeddings, Layer0Lookahead::final_hidden}) {
      for (bool ready_first : {true, false}) {
        DYNAMIC_SECTION("c=" << c << " layer0=" << static_cast<int>(l0) << " ready_first=" << ready_first) {
          StreamingParams sp;
          sp.prefetch_c = c;
          sp.layer0 = l0;
          sp.policy = EvictionPolicy::lru;
          sp.io = io::IoBackendKind::pread;
          sp.budget_bytes = *min;
          sp.ready_first = ready_first;
          SchedStats stats;
          check_streaming(path, ref, sp, 7, &stats);
          if (c == 0) CHECK(stats.prefetch_hits() == 0);
        }
      }
    }
  }
}

namespace {

// The repacked copy of a fixture streams bit-identically to the original's resident run.
void repacked_matrix(const std::string& src_path, const std::string& name) {
  const std::string path = test::temp_dir() + "/" + name;
  REQUIRE(repack_experts(src_path, path).ok());
  const Reference ref = reference_run(src_path, 16, 4, 512);  // resident run of the original file
  auto m = Model::load(path, {});
  REQUIRE(m.ok());
  auto layout = SlotLayout::from_model(**m, 4096);
  REQUIRE(layout.ok());
  CHECK(layout->contiguous());
  auto min = min_expert_budget_bytes(**m, {});
  REQUIRE(min.ok());
  const int32_t k = (*m)->hparams().n_expert_used;
  for (io::IoBackendKind kind : test::io_backend_kind_list()) {
    for (size_t budget : {*min, *min + 64 * layout->slot_bytes()}) {
      for (int32_t c : {k, k + 2, 2 * k}) {
        for (bool ready_first : {true, false}) {
          if (!ready_first && c != k + 2) continue;  // the baseline order once per budget and backend
          DYNAMIC_SECTION(io::io_backend_kind_name(kind) << " budget=" << budget << " c=" << c
                                                         << " ready_first=" << ready_first) {
            StreamingParams sp;
            sp.io = kind;
            sp.budget_bytes = budget;
            sp.prefetch_c = c;
            sp.ready_first = ready_first;
            check_streaming(path, ref, sp, 512);
          }
        }
      }
    }
  }
}

constexpr const char* kQwen35moeFixtures[] = {"synthetic/qwen35moe-F16.gguf", "synthetic/qwen35moe-Q4_K_M.gguf",
                                              "synthetic/qwen35moe-MIXED.gguf", "synthetic/qwen35moe-mtp-F16.gguf"};

}  // namespace

TEST_CASE("streaming logits are bit-identical to resident: repacked (contiguous) trained F16", "[sched]") {
  LES_REQUIRE_FIXTURE(src_path, "trained/tiny-qwen3moe-F16.gguf");
  repacked_matrix(src_path, "sched-repacked-F16.gguf");
}

TEST_CASE("streaming logits are bit-identical to resident: IQ4_XS and MXFP4 experts", "[sched]") {
  // The trained model with llama-quantize's IQ4_XS / MXFP4 expert tensors (support/gguf_patch.h),
  // in its own layout and repacked.
  for (const char* patch : {"trained-iq4_xs.patch.gguf", "trained-mxfp4_moe.patch.gguf"}) {
    const std::string path = test::golden_patch_model("trained/tiny-qwen3moe-F16.gguf", patch);
    if (path.empty()) return;
    INFO(patch);
    matrix_for(path);
    repacked_matrix(path, std::string("sched-repacked-") + patch);
  }
}

TEST_CASE("streaming logits are bit-identical to resident: qwen35moe fixtures", "[sched]") {
  for (const char* f : kQwen35moeFixtures) {
    LES_REQUIRE_FIXTURE(path, f);
    INFO(f);
    matrix_for(path);
  }
}

TEST_CASE("streaming logits are bit-identical to resident: repacked qwen35moe", "[sched]") {
  LES_REQUIRE_FIXTURE(q4, "synthetic/qwen35moe-Q4_K_M.gguf");
  repacked_matrix(q4, "sched-repacked-qwen35moe-Q4_K_M.gguf");
  LES_REQUIRE_FIXTURE(mtp, "synthetic/qwen35moe-mtp-F16.gguf");  // MTP block packed too
  repacked_matrix(mtp, "sched-repacked-qwen35moe-mtp-F16.gguf");
}

TEST_CASE("qwen35moe fixtures stream through an expert budget of at most 1 MiB", "[sched]") {
  for (const char* f : kQwen35moeFixtures) {
    LES_REQUIRE_FIXTURE(path, f);
    auto m = Model::load(path, {});
    REQUIRE(m.ok());
    auto min = min_expert_budget_bytes(**m, ContextParams{}, StreamingParams{});  // default n_batch 512
    REQUIRE(min.ok());
    auto layout = SlotLayout::from_model(**m, 4096);
    REQUIRE(layout.ok());
    std::printf("%s: smallest expert budget %.1f KiB (one slot of %.1f KiB)\n", f, *min / 1024.0,
                layout->slot_bytes() / 1024.0);
    INFO(f << ": " << *min << " bytes");
    CHECK(*min <= size_t{1} << 20);
  }
}

namespace {

// llama-quantize's i-quant files of the source tree (tests/core/model/data/iquants).
std::string iquant_file(const char* stem) {
  return std::string(LES_TESTS_SOURCE_DIR) + "/core/model/data/iquants/" + stem + ".gguf";
}

}  // namespace

TEST_CASE("streaming logits are bit-identical to resident: llama-quantize i-quant files", "[sched][iquants]") {
  // Every lattice type: IQ3_XXS / IQ3_S / IQ2_S, IQ2_XS, IQ2_XXS, IQ1_S, IQ1_M experts and matrices.
  SECTION("IQ3_XXS") { matrix_for(iquant_file("tiny-2l-IQ3_XXS")); }
  SECTION("IQ2_S") { matrix_for(iquant_file("tiny-2l-IQ2_S")); }
  SECTION("IQ2_XXS") { matrix_for(iquant_file("tiny-2l-IQ2_XXS")); }
  SECTION("IQ1_S") { matrix_for(iquant_file("tiny-2l-IQ1_S")); }
  SECTION("IQ1_M") { matrix_for(iquant_file("tiny-2l-IQ1_M")); }
}

TEST_CASE("streaming logits are bit-identical to resident: repacked i-quant files", "[sched][iquants]") {
  repacked_matrix(iquant_file("tiny-2l-IQ2_XXS"), "sched-repacked-IQ2_XXS.gguf");
  repacked_matrix(iquant_file("tiny-2l-IQ1_M"), "sched-repacked-IQ1_M.gguf");
}
