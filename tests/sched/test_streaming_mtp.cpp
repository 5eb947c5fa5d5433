// The MTP block's routed experts stream like a trunk layer's: an MTP head
// drafting from a streaming context's expert source (blk.n_layer in the same
// cache and budget) gives logits bit-identical to the resident head, at the
// minimum budget and with room to spare, in a speculative greedy loop.
#include <catch2/catch.hpp>

#include "core/speculative/mtp_drafter.h"
#include "sched/context_factory.h"
#include "sched_test_util.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::sched;

namespace {

// Prompt, then 6 rounds of: draft 2 after the target's greedy token, target
// decodes the greedy token; every MTP logit row and target logit row recorded.
std::vector<std::vector<float>> run(const Model& m, const StreamingParams* sp, SchedStats* stats) {
  ContextParams cp;
  cp.n_ctx = 128;
  cp.output_hidden = true;
  auto ctx = sp ? create_context(m, cp, *sp) : create_context(m, cp);
  REQUIRE(ctx.ok());
  MtpHeadParams hp;
  hp.n_ctx = 128;
  auto head = MtpHead::create(m, hp);
  REQUIRE(head.ok());
  std::vector<std::vector<float>> rows;
  const std::vector<int32_t> prompt = test::test_prompt(m.hparams().n_vocab, 12);
  REQUIRE((*ctx)->decode(prompt).ok());
  std::vector<float> h_prev(prompt.size() * static_cast<size_t>(m.hparams().n_embd), 0.0f);
  std::copy((*ctx)->hidden_all().begin(), (*ctx)->hidden_all().end() - m.hparams().n_embd,
            h_prev.begin() + m.hparams().n_embd);
  REQUIRE((*head)->decode(prompt, h_prev, (*ctx)->expert_source(), true).ok());
  rows.emplace_back((*head)->logits_all().begin(), (*head)->logits_all().end());
  MtpDrafter drafter(**head, (*ctx)->expert_source());
  (*head)->reset();
  REQUIRE(drafter.accept(0, prompt, (*ctx)->hidden_all()).ok());
  for (int i = 0; i < 6; ++i) {
    const int32_t next = test::argmax((*ctx)->logits());
    auto d = drafter.draft(next, 2);
    REQUIRE(d.ok());
    rows.emplace_back((*head)->logits().begin(), (*head)->logits().end());
    const int32_t pos = (*ctx)->n_past();
    REQUIRE((*ctx)->decode(std::span<const int32_t>(&next, 1)).ok());
    rows.emplace_back((*ctx)->logits().begin(), (*ctx)->logits().end());
    REQUIRE(drafter.accept(pos, std::span<const int32_t>(&next, 1), (*ctx)->hidden_all()).ok());
  }
  if (stats) {
    const StreamingExpertSource* src = streaming_source(**ctx);
    REQUIRE(src != nullptr);
    *stats = src->stats();
  }
  return rows;
}

}  // namespace

TEST_CASE("MTP experts stream through the target's expert cache bit-identically", "[sched][mtp]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen35moe-mtp-F16.gguf");
  auto m = Model::load(path, {});
  REQUIRE(m.ok());
  const auto want = run(**m, nullptr, nullptr);
  ContextParams cp;
  cp.n_ctx = 128;
  auto min = min_expert_budget_bytes(**m, cp);
  REQUIRE(min.ok());
  auto layout = SlotLayout::from_model(**m, 4096);
  REQUIRE(layout.ok());
  CHECK(layout->layer_has_experts((*m)->hparams().n_layer));  // blk.4, the MTP block
  for (size_t budget : {*min, *min + 40 * layout->slot_bytes()}) {
    DYNAMIC_SECTION("budget " << budget) {
      StreamingParams sp;
      sp.budget_bytes = budget;
      sp.io = io::IoBackendKind::pread;
      SchedStats stats;
      const auto got = run(**m, &sp, &stats);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        INFO("row " << i);
        CHECK(test::same_bits(got[i], want[i]));
      }
      const int32_t mtp = (*m)->hparams().n_layer;
      const LayerSchedStats& ls = stats.layers[static_cast<size_t>(mtp)];
      CHECK(ls.hits + ls.inflight_hits + ls.misses > 0);  // the MTP block's experts went through the cache
    }
  }
}
