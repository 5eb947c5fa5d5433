// The MTP head of qwen35moe-mtp-F16 as a speculative-decoding Drafter in the
// generate loop (one drafter interface): greedy output and the final context
// state equal plain decoding, resident and streamed at the smallest budget
// (the MTP block's experts go through the target's cache); every draft the
// drafter proposed inside the loop is the MTP head's greedy prediction
// computed from scratch over the whole sequence (the head followed the
// target through every pass and rollback: its first draft after a sequence
// of length L+1 is argmax of the head at position L, given token L and the
// target's hidden row of L - 1). A target trimmed behind the head (a stop
// inside a verified run) and decoding on is followed again, drafting as a
// drafter that saw the sequence at once. Errors: no MTP block, no hidden rows.
#include <catch2/catch.hpp>

#include <cstring>

#include "core/speculative/mtp_drafter.h"
#include "spec_test_util.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::test;

namespace {

const char* kPrompt = "The door of the room was open, and she went in. The door of the room";

// Forwards to an MtpDrafter and records every proposal.
class Recording final : public Drafter {
 public:
  explicit Recording(std::unique_ptr<MtpDrafter> d) : d_(std::move(d)) {}
  const char* name() const noexcept override { return d_->name(); }
  Result<Draft> propose(const DraftRequest& r) override {
    Result<Draft> d = d_->propose(r);
    if (d.ok() && !d->tokens.empty()) seen.push_back({r.history.size(), d->tokens});
    if (!d.ok()) ++errors;
    return d;
  }
  void on_verified(const VerifiedPass& v) override { d_->on_verified(v); }
  Status prefill(const Context& target, std::span<const int32_t> sequence) override {
    Status s = d_->prefill(target, sequence);
    prefilled = d_->n_accepted();
    return s;
  }
  double seconds_per_token() const noexcept override { return d_->seconds_per_token(); }
  const MtpDrafter& inner() const { return *d_; }

  struct Seen {
    size_t history_len;
    std::vector<int32_t> tokens;
  };
  std::vector<Seen> seen;
  int errors = 0;
  int32_t prefilled = -1;  // the head's accepted positions right after prefill()

 private:
  std::unique_ptr<MtpDrafter> d_;
};

int32_t argmax_of(std::span<const float> x) {
  int32_t b = 0;
  for (size_t i = 1; i < x.size(); ++i)
    if (x[i] > x[static_cast<size_t>(b)]) b = static_cast<int32_t>(i);
  return b;
}

}  // namespace

TEST_CASE("MTP drafter in the generate loop: greedy = plain, drafts = the head's own prediction", "[speculative][mtp]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen35moe-mtp-F16.gguf");
  Loaded l = load_model_and_tokenizer(path);
  const int32_t n_ctx = 128, n_gen = 24;
  GenOut plain;
  {
    auto ctx = make_context(*l.model, n_ctx, 0);
    plain = generate_greedy(*ctx, *l.tok, kPrompt, n_gen, nullptr);
  }
  auto ids = l.tok->tokenize(kPrompt, true, false);
  REQUIRE(ids.ok());
  std::vector<int32_t> seq = *ids;
  seq.insert(seq.end(), plain.tokens.begin(), plain.tokens.end());
  const int64_t E = l.model->hparams().n_embd;

  // The head's greedy prediction at every position p (token p, target hidden row p - 1), from scratch.
  std::vector<int32_t> head_pred;
  {
    auto ctx = make_context(*l.model, n_ctx, 0, /*output_hidden=*/true);
    REQUIRE(ctx->decode(seq).ok());
    std::vector<float> h_prev(seq.size() * static_cast<size_t>(E), 0.0f);
    std::copy(ctx->hidden_all().begin(), ctx->hidden_all().end() - E, h_prev.begin() + E);
    MtpHeadParams hp;
    hp.n_ctx = n_ctx;
    auto head = MtpHead::create(*l.model, hp);
    REQUIRE(head.ok());
    REQUIRE((*head)->decode(seq, h_prev, l.model->resident_experts(), /*all_logits=*/true).ok());
    const size_t V = static_cast<size_t>(l.model->hparams().n_vocab);
    for (size_t p = 0; p < seq.size(); ++p)
      head_pred.push_back(argmax_of(std::span<const float>((*head)->logits_all().data() + p * V, V)));
  }

  for (size_t budget : {size_t{0}, SIZE_MAX}) {
    INFO((budget ? "streamed, smallest budget" : "resident"));
    for (int32_t draft_max : {1, 3}) {
      INFO("draft_max " << draft_max);
      auto ctx = make_context(*l.model, n_ctx, budget, /*output_hidden=*/true);
      auto mtp = MtpDrafter::create(*ctx);
      REQUIRE(mtp.ok());
      auto* rec = new Recording(std::move(mtp).value());
      auto dec = make_decoder(std::unique_ptr<Drafter>(rec), draft_max, /*forced=*/true);
      GenOut s = generate_greedy(*ctx, *l.tok, kPrompt, n_gen, dec.get());
      CHECK(s.tokens == plain.tokens);
      CHECK(s.n_past == plain.n_past);
      REQUIRE(s.next_logits.size() == plain.next_logits.size());
      // memcmp with a null pointer is undefined even for 0 bytes (UBSan).
      if (!plain.next_logits.empty())
        CHECK(std::memcmp(s.next_logits.data(), plain.next_logits.data(), plain.next_logits.size() * sizeof(float)) == 0);
      CHECK(rec->errors == 0);
      // The head read the prompt in the prefill phase, not on its first draft.
      CHECK(dec->last_prefill_status().ok());
      CHECK(rec->prefilled == static_cast<int32_t>(ids->size()));
      CHECK(dec->stats().n_spec_passes > 0);
      REQUIRE(rec->seen.size() >= static_cast<size_t>(n_gen) / 2);
      for (const auto& sn : rec->seen) {
        // History of length L + 1 ends with the pending token at position L.
        const size_t at = sn.history_len - 1;
        REQUIRE(at < head_pred.size());
        INFO("draft after position " << at);
        CHECK(sn.tokens[0] == head_pred[at]);
        // A chained draft whose predecessor the target confirmed is the head's own prediction too.
        if (sn.tokens.size() > 1 && at + 1 < seq.size() && seq[at + 1] == sn.tokens[0])
          CHECK(sn.tokens[1] == head_pred[at + 1]);
      }
      // The drafter followed the target to its end (the last pass's kept positions).
      CHECK(rec->inner().n_accepted() <= s.n_past);
    }
  }
}

TEST_CASE("MTP drafter: refused without an MTP block or without the target's hidden rows", "[speculative][mtp]") {
  LES_REQUIRE_FIXTURE(mtp_path, "synthetic/qwen35moe-mtp-F16.gguf");
  LES_REQUIRE_FIXTURE(plain_path, "synthetic/qwen35moe-F16.gguf");
  Loaded l = load_model_and_tokenizer(mtp_path);
  {
    auto ctx = make_context(*l.model, 64, 0, /*output_hidden=*/false);
    auto d = MtpDrafter::create(*ctx);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().code() == StatusCode::invalid_argument);
    CHECK(d.status().message().find("output_hidden") != std::string::npos);
  }
  Loaded p = load_model_and_tokenizer(plain_path);
  auto ctx = make_context(*p.model, 64, 0, /*output_hidden=*/true);
  auto d = MtpDrafter::create(*ctx);
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().code() == StatusCode::unsupported);
  // A drafter that lost the target (it never saw the prefill's rows) proposes nothing, with a message.
  auto ctx2 = make_context(*l.model, 64, 0, /*output_hidden=*/true);
  auto m = MtpDrafter::create(*ctx2);
  REQUIRE(m.ok());
  const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6};
  REQUIRE(ctx2->decode(std::span<const int32_t>(a.data(), 3)).ok());
  REQUIRE(ctx2->decode(std::span<const int32_t>(a.data() + 3, 2)).ok());
  DraftRequest r;
  r.history = a;
  r.max_tokens = 2;
  r.target = ctx2.get();
  auto got = (*m)->propose(r);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().message().find("are gone") != std::string::npos);
  r.target = nullptr;
  CHECK_FALSE((*m)->propose(r).ok());
}

TEST_CASE("MTP drafter: a target trimmed behind the head and decoding on is followed again", "[speculative][mtp]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen35moe-mtp-F16.gguf");
  Loaded l = load_model_and_tokenizer(path);
  const std::vector<int32_t> prompt = {1, 40, 41, 42, 43, 44};
  const std::vector<int32_t> pass = {50, 51, 52};  // kept by a verify pass at positions 6..8
  const int32_t x = 60, z = 61;                     // position 7 after the trim, then the pending token
  auto ctx = make_context(*l.model, 64, 0, /*output_hidden=*/true);
  auto m = MtpDrafter::create(*ctx);
  REQUIRE(m.ok());
  REQUIRE(ctx->decode(prompt).ok());
  REQUIRE((*m)->prefill(*ctx, prompt).ok());
  // A hybrid model's recurrent state returns to a row of the pass through its checkpoint.
  if (ctx->sequence().has_recurrent()) REQUIRE(ctx->checkpoint(static_cast<int32_t>(pass.size())).ok());
  REQUIRE(ctx->decode(pass, /*all_logits=*/true, /*rows_as_decode=*/true).ok());
  VerifiedPass vp;
  vp.n_verified = 2;
  vp.n_accepted = 2;
  vp.pos0 = 6;
  vp.kept = pass;
  vp.target = ctx.get();
  (*m)->on_verified(vp);
  REQUIRE((*m)->n_accepted() == 9);
  // A stop after position 6: the target drops 7..8 and decodes another token there.
  REQUIRE(ctx->trim(7).ok());
  ctx->drop_checkpoint();
  REQUIRE(ctx->decode(std::span<const int32_t>(&x, 1)).ok());
  std::vector<int32_t> hist = prompt;
  hist.insert(hist.end(), {pass[0], x, z});
  DraftRequest r;
  r.history = hist;
  r.max_tokens = 2;
  r.target = ctx.get();
  auto got = (*m)->propose(r);
  INFO(got.status().to_string());
  REQUIRE(got.ok());
  CHECK((*m)->n_accepted() == 8);
  // The same draft as a drafter that saw the sequence in one prefill.
  auto ctx2 = make_context(*l.model, 64, 0, /*output_hidden=*/true);
  auto m2 = MtpDrafter::create(*ctx2);
  REQUIRE(m2.ok());
  const std::vector<int32_t> seq(hist.begin(), hist.end() - 1);
  REQUIRE(ctx2->decode(seq).ok());
  REQUIRE((*m2)->prefill(*ctx2, seq).ok());
  r.target = ctx2.get();
  auto want = (*m2)->propose(r);
  REQUIRE(want.ok());
  CHECK(got->tokens == want->tokens);
}
