// The MTP (NextN) head of qwen35moe-mtp-F16 against llama.cpp's MTP context
// (reference record `mtp`, fixtures README section 7): the target's hidden
// rows, the head's logits at every prompt position (input: token i and the
// target's hidden row i - 1, zeros before 0) and at 8 lock-step greedy steps
// (the draft after each target token): top-20 ids and logits within 2e-2 and
// the argmax wherever llama.cpp's top-1/top-2 margin is >= 0.05. Then the
// MtpDrafter in a speculative greedy loop (checkpoint, verify batch, rollback
// to the accepted prefix) must give the plain greedy text; its acceptance is
// printed (random weights: the drafts are not expected to match).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/speculative/mtp_drafter.h"
#include "golden_support.h"

using namespace les;
using namespace les::test;

namespace {

struct TopCheck {
  double max_err = 0;
  int set_mismatch = 0, clear = 0, clear_agree = 0;
};

// Our logits against a reference {argmax, margin_top1_top2, top20_ids, top20_logits}.
void check_top20(std::span<const float> ours, const nlohmann::json& r, TopCheck& c) {
  if (!compare_top20(ours, r["top20_ids"].get<std::vector<int32_t>>(), r["top20_logits"].get<std::vector<double>>(),
                     &c.max_err))
    ++c.set_mismatch;
  if (r["margin_top1_top2"].get<double>() >= 0.05) {
    ++c.clear;
    c.clear_agree += argmax(ours) == r["argmax"].get<int32_t>();
  }
}

std::unique_ptr<Context> target_context(const Model& m) {
  ContextParams cp;
  cp.n_ctx = 256;
  cp.output_hidden = true;
  auto c = Context::create(m, cp);
  REQUIRE(c.ok());
  return std::move(c).value();
}

std::unique_ptr<MtpHead> head_for(const Model& m) {
  MtpHeadParams hp;
  hp.n_ctx = 256;
  auto h = MtpHead::create(m, hp);
  INFO(h.status().to_string());
  REQUIRE(h.ok());
  return std::move(h).value();
}

}  // namespace

TEST_CASE("MTP head logits match llama.cpp's MTP context", "[mtp]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen35moe-mtp-F16.gguf");
  LES_REQUIRE_FIXTURE(ref_path, "synthetic/reference/qwen35moe-mtp-F16.json");
  auto model = load_model(path);
  const auto ref = load_json(ref_path)["mtp"]["mtp_ref"];
  const int64_t E = model->hparams().n_embd;
  const auto prompt = ref["prompt_tokens"].get<std::vector<int32_t>>();
  const size_t n = prompt.size();

  auto target = target_context(*model);
  REQUIRE(target->decode(prompt).ok());
  std::vector<float> h(target->hidden_all().begin(), target->hidden_all().end());
  REQUIRE(h.size() == n * static_cast<size_t>(E));
  const auto h0 = ref["h_row0_first8"].get<std::vector<double>>();
  const auto hl = ref["h_row_last_first8"].get<std::vector<double>>();
  double h_err = 0;
  for (size_t i = 0; i < 8; ++i) {
    h_err = std::max(h_err, std::fabs(h[i] - h0[i]));
    h_err = std::max(h_err, std::fabs(h[(n - 1) * static_cast<size_t>(E) + i] - hl[i]));
  }
  CHECK(h_err <= 2e-2);

  auto head = head_for(*model);
  // Prompt positions: token i with the hidden row of i - 1.
  std::vector<float> h_prev(n * static_cast<size_t>(E), 0.0f);
  std::copy(h.begin(), h.end() - E, h_prev.begin() + E);
  REQUIRE(head->decode(prompt, h_prev, model->resident_experts(), /*all_logits=*/true).ok());
  TopCheck prompt_check;
  const size_t V = static_cast<size_t>(model->hparams().n_vocab);
  for (size_t i = 0; i < n; ++i)
    check_top20(std::span<const float>(head->logits_all().data() + i * V, V), ref["mtp_prompt_positions"][i],
                prompt_check);

  // Lock-step greedy: the draft after g_k (at position n + k, with the target's
  // row of n + k - 1), then the target decodes g_k.
  TopCheck step_check;
  int target_agree = 0;
  std::vector<float> h_last(h.end() - E, h.end());
  for (const auto& s : ref["steps"]) {
    const int32_t g = s["input_token"].get<int32_t>();
    REQUIRE(head->n_past() == s["pos"].get<int32_t>());
    const int32_t one[1] = {g};
    REQUIRE(head->decode(one, h_last, model->resident_experts()).ok());
    check_top20(head->logits(), s["mtp"], step_check);
    REQUIRE(target->decode(one).ok());
    h_last.assign(target->hidden_all().begin(), target->hidden_all().end());
    target_agree += argmax(target->logits()) == s["target_next_argmax"].get<int32_t>();
  }
  std::printf("MTP head: hidden max err %.3g; prompt positions top-20 max err %.3g, set mismatches %d, clear argmax "
              "%d/%d; steps top-20 max err %.3g, set mismatches %d, clear argmax %d/%d; target %d/8\n",
              h_err, prompt_check.max_err, prompt_check.set_mismatch, prompt_check.clear_agree, prompt_check.clear,
              step_check.max_err, step_check.set_mismatch, step_check.clear_agree, step_check.clear, target_agree);
  CHECK(prompt_check.max_err <= 2e-2);
  CHECK(prompt_check.set_mismatch == 0);
  CHECK(prompt_check.clear_agree == prompt_check.clear);
  CHECK(step_check.max_err <= 2e-2);
  CHECK(step_check.set_mismatch == 0);
  CHECK(step_check.clear_agree == step_check.clear);
  CHECK(target_agree == 8);
}

TEST_CASE("MTP head: bad input is refused and changes nothing", "[mtp]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen35moe-mtp-F16.gguf");
  LES_REQUIRE_FIXTURE(plain_path, "synthetic/qwen35moe-F16.gguf");
  auto plain = load_model(plain_path);
  auto none = MtpHead::create(*plain, {});
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == StatusCode::unsupported);
  CHECK(none.status().message().find("no MTP") != std::string::npos);

  auto model = load_model(path);
  MtpHeadParams hp;
  hp.n_ctx = 4;
  auto head = MtpHead::create(*model, hp);
  REQUIRE(head.ok());
  const int64_t E = model->hparams().n_embd;
  std::vector<float> h(static_cast<size_t>(5 * E), 0.1f);
  const int32_t bad[1] = {model->hparams().n_vocab};
  CHECK((*head)->decode(bad, h, model->resident_experts()).code() == StatusCode::invalid_argument);
  const int32_t two[2] = {1, 2};
  CHECK((*head)->decode(two, std::span<const float>(h.data(), static_cast<size_t>(E)), model->resident_experts())
            .code() == StatusCode::invalid_argument);
  const int32_t five[5] = {1, 2, 3, 4, 5};
  CHECK((*head)->decode(five, h, model->resident_experts()).code() == StatusCode::context_full);
  CHECK((*head)->n_past() == 0);
  CHECK((*head)->trim(1).code() == StatusCode::invalid_argument);
  auto neg = MtpHead::create(*model, MtpHeadParams{-1, 0, GgmlType::F16});
  CHECK_FALSE(neg.ok());
}

TEST_CASE("MTP drafts in a speculative greedy loop keep the plain greedy text", "[mtp]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen35moe-mtp-F16.gguf");
  LES_REQUIRE_FIXTURE(ref_path, "synthetic/reference/qwen35moe-mtp-F16.json");
  auto model = load_model(path);
  const auto ref = load_json(ref_path);
  const int64_t E = model->hparams().n_embd;
  const int n_gen = 24;
  int proposed = 0, accepted = 0;
  for (size_t pi = 0; pi < ref["prompts"].size(); ++pi) {
    const auto prompt = ref["prompts"][pi]["tokens_model"].get<std::vector<int32_t>>();
    // Plain greedy.
    auto plain = target_context(*model);
    REQUIRE(plain->decode(prompt).ok());
    std::vector<int32_t> want;
    for (int i = 0; i < n_gen; ++i) {
      want.push_back(argmax(plain->logits()));
      REQUIRE(plain->decode(std::span<const int32_t>(&want.back(), 1)).ok());
    }
    // Speculative: drafts of 3, verified in one batch, rolled back to the accepted prefix.
    for (int32_t n_draft : {1, 3}) {
      auto target = target_context(*model);
      auto head = head_for(*model);
      MtpDrafter drafter(*head, model->resident_experts());
      REQUIRE(target->decode(prompt).ok());
      REQUIRE(drafter.accept(0, prompt, target->hidden_all()).ok());
      std::vector<int32_t> got;
      int32_t next = argmax(target->logits());
      while (static_cast<int>(got.size()) < n_gen) {
        auto d = drafter.draft(next, n_draft);
        REQUIRE(d.ok());
        std::vector<int32_t> batch{next};
        batch.insert(batch.end(), d->begin(), d->end());
        const int32_t pos0 = target->n_past();
        REQUIRE(target->checkpoint(static_cast<int32_t>(batch.size())).ok());
        REQUIRE(target->decode(batch, /*all_logits=*/true).ok());
        const size_t V = static_cast<size_t>(model->hparams().n_vocab);
        size_t keep = 1;  // next is the target's own choice
        while (keep < batch.size() &&
               argmax(std::span<const float>(target->logits_all().data() + (keep - 1) * V, V)) == batch[keep])
          ++keep;
        proposed += static_cast<int>(d->size());
        accepted += static_cast<int>(keep - 1);
        const int32_t after = argmax(std::span<const float>(target->logits_all().data() + (keep - 1) * V, V));
        std::vector<float> hid(target->hidden_all().begin(),
                               target->hidden_all().begin() + static_cast<std::ptrdiff_t>(keep * static_cast<size_t>(E)));
        REQUIRE(target->trim(pos0 + static_cast<int32_t>(keep)).ok());
        target->drop_checkpoint();
        REQUIRE(drafter.accept(pos0, std::span<const int32_t>(batch.data(), keep), hid).ok());
        got.insert(got.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(keep));
        next = after;
      }
      got.resize(static_cast<size_t>(n_gen));
      INFO("prompt " << pi << " n_draft " << n_draft);
      CHECK(got == want);
    }
  }
  std::printf("MTP drafts on qwen35moe-mtp-F16 (random weights): %d of %d accepted (%.1f%%)\n", accepted, proposed,
              proposed ? 100.0 * accepted / proposed : 0.0);
}
