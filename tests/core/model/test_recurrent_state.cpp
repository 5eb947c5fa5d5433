// RecurrentState and SequenceState without a model: a recurrent layer is
// simulated with the same kernels the Gated DeltaNet layer uses (conv state
// shift, delta rule) and its journal rows, so checkpoint / restore / replay can
// be checked state by state, plus the rollback rules and error messages.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "core/model/sequence_state.h"
#include "kernels/kernels.h"

using namespace les;

namespace {

constexpr int32_t kS = 4, kNk = 1, kNv = 2, kConv = 4;
constexpr int32_t kC = 2 * kNk * kS + kNv * kS;  // q | k | v

RecurrentStateParams params() {
  RecurrentStateParams p;
  p.layers = {1, 0, 1};
  p.d_conv = kConv;
  p.conv_channels = kC;
  p.n_k_heads = kNk;
  p.n_v_heads = kNv;
  p.head_dim = kS;
  return p;
}

// One token through recurrent layer il the way linear_attention() updates the
// state: conv state shifted by the raw row, delta rule per v head, journal row.
struct Token {
  std::vector<float> raw, k, v, decay, beta;
};

Token random_token(std::mt19937& rng) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_real_distribution<float> ud(0.05f, 1.0f);
  Token t;
  for (int i = 0; i < kC; ++i) t.raw.push_back(nd(rng));
  for (int i = 0; i < kNk * kS; ++i) t.k.push_back(0.4f * nd(rng));
  for (int i = 0; i < kNv * kS; ++i) t.v.push_back(nd(rng));
  for (int i = 0; i < kNv; ++i) {
    t.decay.push_back(ud(rng));
    t.beta.push_back(ud(rng));
  }
  return t;
}

void step(RecurrentState& rs, int32_t il, const Token& t, int64_t journal_index) {
  const RecurrentState::Update u = rs.begin_update(il);
  std::vector<float> window(static_cast<size_t>(kConv * kC));
  std::memcpy(window.data(), u.conv_in, sizeof(float) * (kConv - 1) * kC);
  std::memcpy(window.data() + (kConv - 1) * kC, t.raw.data(), sizeof(float) * kC);
  std::memcpy(u.conv_out, window.data() + kC, sizeof(float) * (kConv - 1) * kC);
  std::vector<float> scratch(kS);
  for (int h = 0; h < kNv; ++h) {
    kernels::DeltaRuleArgs a;
    a.n_tokens = 1;
    a.head_dim = kS;
    a.state_in = u.ssm_in + h * kS * kS;
    a.state_out = u.ssm_out + h * kS * kS;
    a.k = t.k.data() + (h % kNk) * kS;
    a.v = t.v.data() + h * kS;
    a.decay = &t.decay[static_cast<size_t>(h)];
    a.beta = &t.beta[static_cast<size_t>(h)];
    a.scratch = scratch.data();
    kernels::default_kernel_table().ops.delta_rule(a);
  }
  if (float* row = rs.journal_row(il, journal_index)) {
    float* p = row;
    for (const auto* part : {&t.raw, &t.k, &t.v, &t.decay, &t.beta}) {
      std::memcpy(p, part->data(), part->size() * sizeof(float));
      p += part->size();
    }
  }
}

struct Snapshot {
  std::vector<float> conv, ssm;
  bool operator==(const Snapshot& o) const { return conv == o.conv && ssm == o.ssm; }
};

Snapshot snap(const RecurrentState& rs, int32_t il) {
  return {std::vector<float>(rs.conv_state(il), rs.conv_state(il) + rs.conv_floats()),
          std::vector<float>(rs.ssm_state(il), rs.ssm_state(il) + rs.ssm_floats())};
}

}  // namespace

TEST_CASE("RecurrentState: creation, sizes and errors", "[recurrent_state]") {
  auto rs = RecurrentState::create(params());
  REQUIRE(rs.ok());
  CHECK(rs->is_recurrent(0));
  CHECK_FALSE(rs->is_recurrent(1));
  CHECK_FALSE(rs->is_recurrent(7));
  CHECK(rs->conv_floats() == static_cast<size_t>((kConv - 1) * kC));
  CHECK(rs->ssm_floats() == static_cast<size_t>(kNv * kS * kS));
  CHECK(rs->journal_row_floats() == static_cast<size_t>(kC + kNk * kS + kNv * (kS + 2)));
  for (float x : snap(*rs, 2).ssm) CHECK(x == 0.0f);
  const size_t before = rs->memory_bytes();
  REQUIRE(rs->checkpoint(3).ok());
  CHECK(rs->memory_bytes() == 2 * before + 2 * 3 * rs->journal_row_floats() * sizeof(float));
  CHECK_FALSE(rs->checkpoint(-1).ok());

  RecurrentStateParams bad = params();
  bad.head_dim = 0;
  auto e = RecurrentState::create(bad);
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().code() == StatusCode::invalid_argument);
  CHECK(RecurrentState::create(RecurrentStateParams{}).ok());  // no recurrent layer: empty
}

TEST_CASE("RecurrentState: restore and replay rebuild every journaled state bit for bit", "[recurrent_state]") {
  std::mt19937 rng(9);
  auto r = RecurrentState::create(params());
  REQUIRE(r.ok());
  RecurrentState& rs = *r;
  for (int t = 0; t < 3; ++t) {  // some history before the checkpoint
    const Token tok = random_token(rng);
    step(rs, 0, tok, -1);
    step(rs, 2, tok, -1);
  }
  REQUIRE(rs.checkpoint(4).ok());
  std::vector<Snapshot> after0{snap(rs, 0)}, after2{snap(rs, 2)};  // [i] = after i tokens past the checkpoint
  std::vector<Token> toks;
  for (int t = 0; t < 6; ++t) {
    toks.push_back(random_token(rng));
    step(rs, 0, toks.back(), t);
    step(rs, 2, toks.back(), t);
    after0.push_back(snap(rs, 0));
    after2.push_back(snap(rs, 2));
  }
  CHECK(rs.replayable() == 4);  // journal of 4 tokens
  for (int64_t n : {2, 0, 4, 1, 3}) {
    INFO("replay " << n);
    rs.replay(n);
    CHECK(snap(rs, 0) == after0[static_cast<size_t>(n)]);
    CHECK(snap(rs, 2) == after2[static_cast<size_t>(n)]);
    CHECK(rs.replayable() == n);
    // continuing from there gives the states of the first run again
    for (int64_t t = n; t < 6; ++t) {
      step(rs, 0, toks[static_cast<size_t>(t)], t);
      step(rs, 2, toks[static_cast<size_t>(t)], t);
      CHECK(snap(rs, 0) == after0[static_cast<size_t>(t + 1)]);
      CHECK(snap(rs, 2) == after2[static_cast<size_t>(t + 1)]);
    }
  }
  rs.restore();
  CHECK(snap(rs, 2) == after2[0]);
  rs.drop_checkpoint();
  CHECK(rs.replayable() == 0);
  CHECK(rs.journal_row(0, 0) == nullptr);
  rs.reset();
  for (float x : snap(rs, 0).conv) CHECK(x == 0.0f);
}

TEST_CASE("SequenceState: rollback rules for attention-only and recurrent sequences", "[recurrent_state]") {
  KvCacheParams kp;
  kp.n_layer = 3;
  kp.n_ctx = 16;
  kp.n_embd_k = kp.n_embd_v = 8;
  kp.layers = {0, 1, 0};
  auto kv = KvCache::create(kp);
  REQUIRE(kv.ok());
  CHECK(kv->k_data(0) == nullptr);
  CHECK(kv->k_data(1) != nullptr);
  KvCacheParams bad = kp;
  bad.layers = {1, 1};
  CHECK_FALSE(KvCache::create(bad).ok());

  {  // attention only: any suffix
    SequenceState seq(*KvCache::create(kp));
    seq.advance(10);
    REQUIRE(seq.rollback(4).ok());
    CHECK(seq.n_past() == 4);
    CHECK_FALSE(seq.rollback(5).ok());
    CHECK(seq.check_room(12).ok());
    CHECK(seq.check_room(13).code() == StatusCode::context_full);
  }
  auto rs = RecurrentState::create(params());
  REQUIRE(rs.ok());
  SequenceState seq(*KvCache::create(kp), std::move(rs).value());
  seq.advance(5);
  Status none = seq.rollback(3);
  REQUIRE_FALSE(none.ok());
  CHECK(none.code() == StatusCode::invalid_argument);
  CHECK(none.message().find("no checkpoint") != std::string::npos);
  CHECK(seq.n_past() == 5);
  REQUIRE(seq.checkpoint(2).ok());
  CHECK(seq.checkpoint_pos() == 5);
  std::mt19937 rng(1);
  for (int t = 0; t < 3; ++t) {
    const Token tok = random_token(rng);
    step(seq.recurrent(), 0, tok, t);
    step(seq.recurrent(), 2, tok, t);
  }
  seq.advance(3);
  CHECK(seq.rollback(8).ok());  // n_past itself
  CHECK(seq.rollback(7).ok());  // 2 tokens journaled: the reach is [5, 7]
  CHECK(seq.n_past() == 7);
  Status early = seq.rollback(4);
  REQUIRE_FALSE(early.ok());
  CHECK(early.message().find("[5, 7]") != std::string::npos);
  REQUIRE(seq.rollback(0).ok());
  CHECK(seq.n_past() == 0);
  CHECK_FALSE(seq.has_checkpoint());
}
