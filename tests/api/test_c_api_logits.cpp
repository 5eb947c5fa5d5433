// The C ABI's per-position logits (les_context_decode_all_logits,
// les_context_logits_ith) against llama.cpp's teacher-forced references, and
// the activation callback (les_activations.h) on the trained fixture model.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "les/les.h"
#include "support/fixtures.h"

namespace {

struct Loaded {
  les_model* model = nullptr;
  les_context* ctx = nullptr;
  ~Loaded() {
    les_context_free(ctx);
    les_model_free(model);
  }
};

bool load(const std::string& path, Loaded& l) {
  les_model_params mp = les_model_default_params();
  mp.n_threads = 2;
  if (les_model_load(path.c_str(), &mp, &l.model) != LES_OK) return false;
  les_context_params cp = les_context_default_params();
  cp.n_ctx = 64;
  return les_context_create(l.model, &cp, &l.ctx) == LES_OK;
}

double logsumexp(const float* x, int n) {
  double m = x[0];
  for (int i = 1; i < n; ++i) m = std::max(m, double(x[i]));
  double s = 0;
  for (int i = 0; i < n; ++i) s += std::exp(double(x[i]) - m);
  return m + std::log(s);
}

int argmax(const float* x, int n) {
  int b = 0;
  for (int i = 1; i < n; ++i)
    if (x[i] > x[b]) b = i;
  return b;
}

}  // namespace

TEST_CASE("C API: decode_all_logits keeps every position, as llama.cpp computes them", "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(ref_path, "trained/reference/tiny-qwen3moe-F16.json");
  std::ifstream f(ref_path);
  const nlohmann::json ref = nlohmann::json::parse(f);
  const std::vector<les_token> ids = ref["experts"]["tokens"].get<std::vector<les_token>>();
  const std::vector<int> want_argmax = ref["experts"]["prompt_pos_argmax"].get<std::vector<int>>();
  const std::vector<double> want_lse = ref["experts"]["prompt_pos_logsumexp"].get<std::vector<double>>();
  REQUIRE(ids.size() == want_argmax.size());
  const int n = static_cast<int>(ids.size());
  Loaded l;
  REQUIRE(load(path, l));
  const int n_vocab = les_model_n_vocab(l.model);

  CHECK(les_context_logits_ith(l.ctx, -1) == nullptr);  // nothing decoded yet
  REQUIRE(les_context_decode_all_logits(l.ctx, ids.data(), n) == LES_OK);
  CHECK(les_context_n_past(l.ctx) == n);
  for (int i = 0; i < n; ++i) {
    const float* li = les_context_logits_ith(l.ctx, i);
    REQUIRE(li != nullptr);
    CHECK(les_context_logits_ith(l.ctx, i - n) == li);  // negative indices count from the end
    INFO("position " << i);
    CHECK(argmax(li, n_vocab) == want_argmax[static_cast<size_t>(i)]);
    // The golden tests' F16 bound on full logits (1e-2), applied to the logsumexp.
    CHECK(std::fabs(logsumexp(li, n_vocab) - want_lse[static_cast<size_t>(i)]) < 1e-2);
  }
  CHECK(std::memcmp(les_context_logits_ith(l.ctx, -1), les_context_logits(l.ctx), sizeof(float) * n_vocab) == 0);
  CHECK(les_context_logits_ith(l.ctx, n) == nullptr);
  CHECK(les_context_logits_ith(l.ctx, -n - 1) == nullptr);
  CHECK(les_context_logits_ith(nullptr, 0) == nullptr);

  // The last position equals a plain decode's logits up to the matvec/matmul kernels' order.
  std::vector<float> last(les_context_logits_ith(l.ctx, -1), les_context_logits_ith(l.ctx, -1) + n_vocab);
  REQUIRE(les_context_reset(l.ctx) == LES_OK);
  CHECK(les_context_logits_ith(l.ctx, -1) == nullptr);
  REQUIRE(les_context_decode(l.ctx, ids.data(), n) == LES_OK);
  const float* plain = les_context_logits(l.ctx);
  for (int v = 0; v < n_vocab; ++v) REQUIRE(std::fabs(plain[v] - last[static_cast<size_t>(v)]) < 1e-2);
  CHECK(les_context_logits_ith(l.ctx, -1) == plain);
  CHECK(les_context_logits_ith(l.ctx, 0) == nullptr);  // not kept by a plain decode

  // Errors leave the state as it was.
  CHECK(les_context_decode_all_logits(nullptr, ids.data(), n) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_decode_all_logits(l.ctx, nullptr, n) == LES_ERR_INVALID_ARGUMENT);
  const les_token bad[2] = {5, 9000};
  CHECK(les_context_decode_all_logits(l.ctx, bad, 2) == LES_ERR_INVALID_ARGUMENT);
  CHECK(les_context_n_past(l.ctx) == n);
}

namespace {

struct Seen {
  std::map<std::string, int64_t> rows;     // tensor -> rows seen (all experts)
  std::map<std::string, int64_t> cols;     // tensor -> n_cols
  std::map<std::string, int> experts_seen; // tensor -> distinct calls with expert >= 0
  int bad_expert = 0;
  int calls = 0;
};

void on_activation(const char* tensor, int32_t expert, const float* x, int64_t n_rows, int64_t n_cols, void* ud) {
  auto* s = static_cast<Seen*>(ud);
  ++s->calls;
  s->rows[tensor] += n_rows;
  s->cols[tensor] = n_cols;
  const bool routed = std::string(tensor).find("_exps.weight") != std::string::npos;
  if (routed != (expert >= 0) || expert >= 32 || x == nullptr) ++s->bad_expert;
  if (expert >= 0) ++s->experts_seen[tensor];
}

}  // namespace

TEST_CASE("C API: the activation callback sees every weight matrix's input rows", "[api]") {
  LES_REQUIRE_FIXTURE(path, "trained/tiny-qwen3moe-F16.gguf");
  Loaded l;
  REQUIRE(load(path, l));
  const std::vector<les_token> ids = {1, 404, 1331, 1713, 516, 261, 2921, 8125, 285, 266};
  const int n = static_cast<int>(ids.size());
  Seen seen;
  CHECK(les_context_set_activation_callback(nullptr, on_activation, &seen) == LES_ERR_INVALID_ARGUMENT);
  REQUIRE(les_context_set_activation_callback(l.ctx, on_activation, &seen) == LES_OK);
  REQUIRE(les_context_decode_all_logits(l.ctx, ids.data(), n) == LES_OK);
  CHECK(seen.bad_expert == 0);
  // 8 layers x (q, k, v, output, router, gate/up/down experts) + output.weight.
  CHECK(seen.rows.size() == 8 * 8 + 1);
  for (int il = 0; il < 8; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    for (const char* t : {"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight", "ffn_gate_inp.weight"}) {
      CHECK(seen.rows[b + t] == n);
      CHECK(seen.cols[b + t] == 256);
    }
    // Every token goes to 4 experts.
    CHECK(seen.rows[b + "ffn_gate_exps.weight"] == 4 * n);
    CHECK(seen.rows[b + "ffn_up_exps.weight"] == 4 * n);
    CHECK(seen.rows[b + "ffn_down_exps.weight"] == 4 * n);
    CHECK(seen.cols[b + "ffn_down_exps.weight"] == 64);
    CHECK(seen.experts_seen[b + "ffn_gate_exps.weight"] >= 4);
  }
  CHECK(seen.rows["output.weight"] == n);

  // A plain decode computes the last layer's attention output and FFN for the last token only.
  seen = Seen{};
  REQUIRE(les_context_reset(l.ctx) == LES_OK);
  REQUIRE(les_context_decode(l.ctx, ids.data(), n) == LES_OK);
  CHECK(seen.rows["blk.7.attn_q.weight"] == n);
  CHECK(seen.rows["blk.7.attn_output.weight"] == 1);
  CHECK(seen.rows["blk.7.ffn_gate_exps.weight"] == 4);
  CHECK(seen.rows["output.weight"] == 1);

  // Removed: no more calls.
  REQUIRE(les_context_set_activation_callback(l.ctx, nullptr, nullptr) == LES_OK);
  seen = Seen{};
  const les_token one = 404;
  REQUIRE(les_context_decode(l.ctx, &one, 1) == LES_OK);
  CHECK(seen.calls == 0);
}
