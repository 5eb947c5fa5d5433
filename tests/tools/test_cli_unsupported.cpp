// `les run` and `les inspect` on a file LES cannot run name every reason at
// once (core/model/model.h model_support_problems), not only the first; and
// `les inspect` shows the tokenizer model and pre-tokenizer, the RoPE
// scaling, and per tensor type whether LES computes it.
#include <catch2/catch.hpp>

#include "support/cli_tool.h"
#include "support/fixtures.h"
#include "support/gguf_copy.h"

using namespace les;
using namespace les::test;
using gguf::Value;
using gguf::ValueType;

namespace {

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

// The trained fixture with three keys LES refuses.
std::string refused_copy(const std::string& src) {
  const std::string p = temp_dir() + "/three-reasons.gguf";
  GgufEdit e;
  e.set = {{"qwen3moe.expert_gating_func", Value::from_uint(ValueType::UINT32, 2)},
           {"qwen3moe.final_logit_softcapping", Value::from_float(ValueType::FLOAT32, 30.0)},
           {"qwen3moe.attention.causal", Value::from_bool(false)}};
  copy_gguf_edited(src, p, e);
  return p;
}

}  // namespace

TEST_CASE("les run on an unsupported file names every reason", "[cli]") {
  LES_REQUIRE_FIXTURE(src, "trained/tiny-qwen3moe-F16.gguf");
  const std::string p = refused_copy(src);
  const RunResult r = run_les("run -m " + sh_quote(p) + " -p hello -n 2");
  INFO(r.out << r.err);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.err, "3 reasons LES cannot run this file"));
  CHECK(contains(r.err, "qwen3moe.expert_gating_func' = 2"));
  CHECK(contains(r.err, "qwen3moe.final_logit_softcapping' = 30"));
  CHECK(contains(r.err, "qwen3moe.attention.causal' = false"));
}

TEST_CASE("les inspect lists every reason, the rope scaling, the tokenizer and the kernels per type", "[cli]") {
  LES_REQUIRE_FIXTURE(src, "trained/tiny-qwen3moe-F16.gguf");
  const RunResult bad = run_les("inspect " + sh_quote(refused_copy(src)));
  INFO(bad.out << bad.err);
  CHECK(bad.exit_code == 0);
  CHECK(contains(bad.out, "LES support: cannot run this file (3 reasons):"));
  CHECK(contains(bad.out, "\n  - metadata key 'qwen3moe.expert_gating_func' = 2"));
  CHECK(contains(bad.out, "\n  - metadata key 'qwen3moe.attention.causal' = false"));

  const std::string yarn = temp_dir() + "/yarn.gguf";
  GgufEdit e;
  e.set = {{"qwen3moe.rope.scaling.type", Value::from_string("yarn")},
           {"qwen3moe.rope.scaling.factor", Value::from_float(ValueType::FLOAT32, 4.0)},
           {"qwen3moe.rope.scaling.original_context_length", Value::from_uint(ValueType::UINT32, 256)}};
  copy_gguf_edited(src, yarn, e);
  const RunResult ok = run_les("inspect " + sh_quote(yarn));
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(contains(ok.out, "LES support: runs this file"));
  CHECK(contains(ok.out, "scaling yarn x4 (original context 256,"));
  CHECK(contains(ok.out, "tokenizer model llama, pre-tokenizer "));
  CHECK(contains(ok.out, "F16 "));
  CHECK(contains(ok.out, "LES computes it"));
}
