// Model quantisation (quant/quantize_model.h) on the trained fixture: LES's
// Q4_K_M has llama-quantize's tensor types and passes the forward-pass golden
// checks with the K-quant tolerance; metadata keys as llama-quantize writes
// them; every refusal names what is wrong; a cancelled run leaves no file.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <string>

#include "core/gguf/expert_layout.h"
#include "core/gguf/expert_repack.h"
#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "core/model/golden_support.h"
#include "quant/expert_bits.h"
#include "quant/quantize_model.h"
#include "support/fixtures.h"

using namespace les;
using namespace les::quant;

namespace {

bool exists(const std::string& p) { return std::ifstream(p).good(); }

std::unique_ptr<gguf::GgufFile> open_meta(const std::string& path) {
  gguf::ReadOptions ro;
  ro.use_mmap = false;
  auto f = gguf::GgufFile::open(path, ro);
  REQUIRE(f.ok());
  return std::move(f).value();
}

uint64_t tensor_bytes(const gguf::GgufFile& f) {
  uint64_t n = 0;
  for (const gguf::TensorInfo& t : f.tensors()) n += t.n_bytes;
  return n;
}

QuantizeParams params(Preset p) {
  QuantizeParams q;
  q.plan.preset = p;
  q.n_threads = 2;
  return q;
}

}  // namespace

TEST_CASE("quantize: LES's Q4_K_M of the trained model passes the golden checks", "[quant]") {
  LES_REQUIRE_FIXTURE(f16, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(ref_q4, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  LES_REQUIRE_FIXTURE(ref_json, "trained/reference/tiny-qwen3moe-Q4_K_M.json");
  const std::string out = test::temp_dir() + "/les-q4_k_m.gguf";
  QuantizeParams p = params(Preset::q4_k_m);
  p.slab_bytes = 64 * 1024;  // many slabs per tensor: rows split across slabs and experts
  auto r = quantize_model(f16, out, p);
  REQUIRE(r.ok());
  CHECK_FALSE(exists(out + ".tmp"));
  CHECK(r->n_fallback == 8);  // ffn_down_exps in every layer (Q6_K -> Q8_0, Q4_K -> Q5_0)
  const auto ours = open_meta(out);
  const auto theirs = open_meta(ref_q4);
  CHECK(tensor_bytes(*ours) == tensor_bytes(*theirs));  // same types: same data size
  REQUIRE(ours->tensors().size() == theirs->tensors().size());
  for (const gguf::TensorInfo& t : ours->tensors()) {  // llama-quantize writes another order
    const gguf::TensorInfo* u = theirs->find_tensor(t.name);
    REQUIRE(u != nullptr);
    CHECK(t.type == u->type);
  }
  CHECK(*ours->get_uint("general.file_type") == 15);
  CHECK(*ours->get_uint("general.quantization_version") == 2);
  CHECK(*ours->get_string("general.architecture") == "qwen3moe");
  CHECK(ours->find("quantize.imatrix.file") == nullptr);

  auto model = test::load_model(out);
  const auto ref = test::load_json(ref_json);
  test::GoldenStats st;
  test::run_prompt_checks(*model, ref, test::fixtures_root(), false, st);
  test::run_expert_checks(*model, ref, st);
  test::print_stats("LES Q4_K_M", st);
  REQUIRE(st.tf_checked > 0);
  CHECK(st.tf_agree >= 0.93 * st.tf_checked);
  CHECK(st.experts_agree >= 0.97 * st.experts_checked);
}

TEST_CASE("quantize: les-mixed with an imatrix records llama-quantize's keys", "[quant]") {
  LES_REQUIRE_FIXTURE(f16, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(imat_path, "trained/imatrix-train.gguf");
  LES_REQUIRE_FIXTURE(mixed, "trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf");
  auto im = read_imatrix(imat_path);
  REQUIRE(im.ok());
  const std::string out = test::temp_dir() + "/les-mixed.gguf";
  QuantizeParams p = params(Preset::les_mixed);
  p.imatrix = &*im;
  p.imatrix_path = "imatrix-train.gguf";
  auto r = quantize_model(f16, out, p);
  REQUIRE(r.ok());
  CHECK(r->n_imatrix_used == 56);  // 8 layers x (q, k, v, output, 3 experts); routers are not quantised
  const auto ours = open_meta(out);
  const auto theirs = open_meta(mixed);
  CHECK(tensor_bytes(*ours) == tensor_bytes(*theirs));
  for (const char* key : {"quantize.imatrix.file", "quantize.imatrix.dataset"})
    CHECK(*ours->get_string(key) == *theirs->get_string(key));
  for (const char* key : {"quantize.imatrix.entries_count", "quantize.imatrix.chunks_count", "general.file_type"}) {
    CHECK(*ours->get_uint(key) == *theirs->get_uint(key));
    CHECK(ours->find(key)->type() == theirs->find(key)->type());
  }
}

TEST_CASE("quantize: refusals", "[quant]") {
  LES_REQUIRE_FIXTURE(f16, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(q4, "trained/tiny-qwen3moe-Q4_K_M.gguf");
  LES_REQUIRE_FIXTURE(imat_path, "trained/imatrix-train.gguf");
  LES_REQUIRE_FIXTURE(synth, "synthetic/qwen3moe-F16.gguf");
  const std::string out = test::temp_dir() + "/refused.gguf";
  auto refused = [&](const std::string& in, const QuantizeParams& p, const char* text) {
    auto r = quantize_model(in, out, p);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(r.status().message(), Catch::Contains(text));
    CHECK_FALSE(exists(out));
    CHECK_FALSE(exists(out + ".tmp"));
  };
  refused(q4, params(Preset::q8_0), "requantises only F32, F16, BF16 and Q8_0");
  auto im = read_imatrix(imat_path);
  REQUIRE(im.ok());
  QuantizeParams other = params(Preset::q4_k_m);
  other.imatrix = &*im;
  refused(synth, other, "imatrix was made for another model");
  QuantizeParams iq = params(Preset::les_mixed);
  iq.plan.overrides.push_back(*parse_type_override("ffn_up_exps=iq1_s"));
  refused(f16, iq, "needs an importance matrix");
  iq.imatrix = &*im;
  refused(f16, iq, "LES cannot produce IQ1_S");
  QuantizeParams ints = params(Preset::les_mixed);
  ints.plan.overrides.push_back(*parse_type_override("ffn_up_exps=i32"));
  refused(f16, ints, "LES cannot produce I32 (it writes F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, ");
  {
    // The list names exactly the types LES writes.
    const std::string msg = quantize_model(f16, out, ints).status().message();
    CHECK_THAT(msg, Catch::Contains("IQ4_XS") && Catch::Contains("MXFP4") && Catch::Contains("IQ4_NL"));
    CHECK_THAT(msg, !Catch::Contains("TQ1_0") && !Catch::Contains("Q8_K") && !Catch::Contains("Q8_1"));
    CHECK_THAT(msg, Catch::Contains("IQ2_XXS") && Catch::Contains("IQ2_XS") && Catch::Contains("IQ3_S"));
    CHECK_THAT(msg, !Catch::Contains("IQ1_S") && !Catch::Contains("IQ1_M"));
  }
  auto same = quantize_model(f16, f16, params(Preset::q8_0));
  REQUIRE_FALSE(same.ok());
  CHECK_THAT(same.status().message(), Catch::Contains("is the input file"));
  auto missing = quantize_model("/nonexistent/in.gguf", out, params(Preset::q8_0));
  CHECK(missing.status().code() == StatusCode::io);
}

TEST_CASE("quantize: a cancelled run leaves no output", "[quant]") {
  LES_REQUIRE_FIXTURE(f16, "trained/tiny-qwen3moe-F16.gguf");
  const std::string out = test::temp_dir() + "/cancelled.gguf";
  std::atomic<bool> cancel{false};
  QuantizeParams p = params(Preset::q8_0);
  p.cancel = &cancel;
  int seen = 0;
  p.on_progress = [&](const QuantizeProgress& g) {
    if (++seen == 10) cancel = true;  // mid-way
    CHECK(g.tensor_index <= g.n_tensors);
  };
  auto r = quantize_model(f16, out, p);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::cancelled);
  CHECK(seen == 10);
  CHECK_FALSE(exists(out));
  CHECK_FALSE(exists(out + ".tmp"));
}

TEST_CASE("quantize --layout contiguous: the experts of quantise-then-repack, in one pass", "[quant]") {
  LES_REQUIRE_FIXTURE(f16, "trained/tiny-qwen3moe-F16.gguf");
  const std::string dir = test::temp_dir();
  const std::string per_tensor = dir + "/q4km-per-tensor.gguf", packed = dir + "/q4km-contiguous.gguf";
  // Q4_K_M: ffn_down_exps is Q8_0 in some layers and Q5_0 in others, so blob
  // strides differ between layers; 64 KiB slabs split tensors mid-expert.
  QuantizeParams p = params(Preset::q4_k_m);
  p.slab_bytes = 64 * 1024;
  REQUIRE(quantize_model(f16, per_tensor, p).ok());
  p.layout = OutputLayout::contiguous;
  auto r = quantize_model(f16, packed, p);
  REQUIRE(r.ok());
  CHECK_FALSE(exists(packed + ".tmp"));
  // Every expert matrix, every other tensor and every key identical to the per-tensor file's.
  auto n = verify_repacked(per_tensor, packed);
  REQUIRE(n.ok());
  CHECK(*n == 8 * 32);
  const auto meta = open_meta(packed);
  auto layout = ExpertLayout::from_file(*meta);
  REQUIRE(layout.ok());
  CHECK(layout->contiguous());
  CHECK(layout->layer(0).down.type != layout->layer(1).down.type);  // Q8_0 vs Q5_0
  for (int32_t l = 0; l < layout->n_layer(); ++l) CHECK(layout->layer(l).blob_stride % 4096 == 0);
  // The same as les repack of the per-tensor file, byte for byte in the tensor data.
  const std::string repacked = dir + "/q4km-repacked.gguf";
  REQUIRE(repack_experts(per_tensor, repacked).ok());
  const auto rep = open_meta(repacked);
  REQUIRE(rep->tensors().size() == meta->tensors().size());
  for (size_t i = 0; i < rep->tensors().size(); ++i) {
    CHECK(rep->tensors()[i].name == meta->tensors()[i].name);
    CHECK(rep->tensors()[i].n_bytes == meta->tensors()[i].n_bytes);
  }
  CHECK(*verify_repacked(per_tensor, repacked) == *n);

  SECTION("an input already in the contiguous layout is refused") {
    auto again = quantize_model(packed, dir + "/again.gguf", params(Preset::q8_0));
    REQUIRE_FALSE(again.ok());
    CHECK(again.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(again.status().message(), Catch::Contains("contiguous expert layout"));
    CHECK_FALSE(exists(dir + "/again.gguf"));
  }
}

TEST_CASE("quantize --layout contiguous: a model without routed experts is refused", "[quant]") {
  gguf::GgufWriter g;
  REQUIRE(g.set_string("general.architecture", "llama").ok());
  REQUIRE(g.set_u32("llama.block_count", 1).ok());
  const std::vector<float> w(256 * 4, 0.5f);
  const int64_t ne[2] = {256, 4};
  REQUIRE(g.add_tensor("blk.0.attn_q.weight", GgmlType::F32, ne, w.data(), w.size() * sizeof(float)).ok());
  const std::string in = test::temp_dir() + "/dense.gguf", out = test::temp_dir() + "/dense-q8.gguf";
  REQUIRE(g.write_to_file(in).ok());
  QuantizeParams p = params(Preset::q8_0);
  REQUIRE(quantize_model(in, out, p).ok());  // per-tensor: fine
  p.layout = OutputLayout::contiguous;
  auto r = quantize_model(in, out + "2", p);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::invalid_argument);
  CHECK_THAT(r.status().message(), Catch::Contains("no routed expert tensors"));
  CHECK_FALSE(exists(out + "2"));
  CHECK_FALSE(exists(out + "2.tmp"));
}

TEST_CASE("quantize: les-mixed-iq2 gives IQ2_XS to the experts the imatrix ranks highest", "[quant][iquants]") {
  LES_REQUIRE_FIXTURE(f16, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(imat_path, "trained/imatrix-train.gguf");
  auto im = read_imatrix(imat_path);
  REQUIRE(im.ok());
  const std::string out = test::temp_dir() + "/les-mixed-iq2.gguf";
  QuantizeParams p = params(Preset::les_mixed_iq2);
  // Refused without an imatrix, nothing written.
  auto refused = quantize_model(f16, out, p);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::invalid_argument);
  CHECK_THAT(refused.status().message(), Catch::Contains("les-mixed-iq2 needs an importance matrix"));
  CHECK_FALSE(exists(out));
  // Layers 1-7 as Q8_0 keep the test short: the picks still rank all 16 IQ2-able expert tensors.
  p.imatrix = &*im;
  p.plan.overrides.push_back(*parse_type_override("blk\\.[1-7]\\.=q8_0"));
  auto r = quantize_model(f16, out, p);
  REQUIRE(r.ok());
  gguf::ReadOptions ro;
  ro.use_mmap = false;
  auto in = gguf::GgufFile::open(f16, ro);
  REQUIRE(in.ok());
  auto scores = score_routed_experts(**in, f16, *im);
  REQUIRE(scores.ok());
  const auto picks = pick_iq2_xs_experts(*scores, 0.5);
  REQUIRE(picks.size() == 8);
  const auto ours = open_meta(out);
  for (const char* name : {"blk.0.ffn_gate_exps.weight", "blk.0.ffn_up_exps.weight"}) {
    const bool xs = std::find(picks.begin(), picks.end(), name) != picks.end();
    INFO(name);
    CHECK(ours->find_tensor(name)->type == (xs ? GgmlType::IQ2_XS : GgmlType::IQ2_XXS));
  }
  CHECK(ours->find_tensor("blk.0.ffn_down_exps.weight")->type == GgmlType::IQ4_NL);  // 64 columns
  CHECK(ours->find_tensor("blk.0.attn_q.weight")->type == GgmlType::Q4_K);
  CHECK(ours->find_tensor("blk.1.ffn_up_exps.weight")->type == GgmlType::Q8_0);
  CHECK(*ours->get_uint("general.file_type") == 14);
  // The file runs: one prompt through the forward pass gives finite logits.
  auto model = test::load_model(out);
  auto ctx = test::make_context(*model);
  REQUIRE(ctx->decode(std::vector<int32_t>{1, 450, 2030}).ok());
  for (float v : ctx->logits()) REQUIRE(std::isfinite(v));
}
