// End-to-end trace replay (trace_routing.h, e2e_replay.h): the forward pass
// computes exactly the trace's experts; the simulated predictor's measured
// recall follows r; shapes are checked; and the bench-only overrides cannot
// be reached from the public API (les.h, the C bindings, the les tool, the
// symbols libles.so exports).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <sstream>
#include <string>
#include <vector>

#include "io/io_factory.h"
#include "sched/context_factory.h"
#include "sched/slot_layout.h"
#include "support/fixtures.h"
#include "trace/e2e_replay.h"
#include "trace/simulated_lookahead.h"
#include "trace/trace_routing.h"
#include "trace_test_util.h"

using namespace les;
using namespace les::trace;

namespace {

// synthetic/qwen3moe-F16: 4 layers, 16 experts, top-4. The trace: top-2.
RouteTrace small_trace(int n_decode) {
  auto t = parse_route_trace(les::test::uniform_route_trace(4, 16, 2, n_decode, 1000, 5), "uniform");
  REQUIRE(t.ok());
  return *t;
}

std::unique_ptr<Model> load(const std::string& path) {
  ModelParams mp;
  mp.n_threads = 1;
  auto m = Model::load(path, mp);
  REQUIRE(m.ok());
  return std::move(m).value();
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A backend that records the (layer, expert) of every read submitted, tagged
// with the token being decoded (`token`, set by the test), then forwards.
class RecordingBackend final : public io::IoBackend {
 public:
  RecordingBackend(std::unique_ptr<io::IoBackend> inner, std::map<uint64_t, std::pair<int32_t, int32_t>> by_offset)
      : inner_(std::move(inner)), by_offset_(std::move(by_offset)) {}
  int32_t token = -1;
  std::map<std::tuple<int32_t, int32_t, int32_t>, int> reads;  // (token, layer, expert) -> submits
  int unknown = 0;
  std::string name() const override { return inner_->name(); }
  Result<io::FileId> open_file(const std::string& path) override { return inner_->open_file(path); }
  Result<io::FileInfo> file_info(io::FileId f) const override { return inner_->file_info(f); }
  Status close_file(io::FileId f) override { return inner_->close_file(f); }
  Status register_buffers(std::span<const std::span<std::byte>> r) override { return inner_->register_buffers(r); }
  Status submit(std::span<const io::ReadRequest> requests) override {
    for (const io::ReadRequest& q : requests) {
      auto it = by_offset_.find(q.offset);
      if (it == by_offset_.end()) ++unknown;
      else if (it->second.second >= 0) ++reads[{token, it->second.first, it->second.second}];
    }
    return inner_->submit(requests);
  }
  Status reap(size_t n, std::chrono::nanoseconds t, std::vector<io::ReadCompletion>& out) override {
    return inner_->reap(n, t, out);
  }
  void cancel_all() override { inner_->cancel_all(); }
  size_t outstanding() const override { return inner_->outstanding(); }
  uint32_t queue_depth() const override { return inner_->queue_depth(); }

 private:
  std::unique_ptr<io::IoBackend> inner_;
  std::map<uint64_t, std::pair<int32_t, int32_t>> by_offset_;  // a read's offset -> (layer, expert); part > 0: -1
};

}  // namespace

TEST_CASE("Trace routing: the forward pass computes exactly the trace's experts", "[trace]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-F16.gguf");
  auto model = load(path);
  const RouteTrace t = small_trace(6);

  auto bad_shape = TraceRouting::create(t, 5, 16, 4, -1, 1, 1);
  REQUIRE_FALSE(bad_shape.ok());
  CHECK_THAT(bad_shape.status().message(), Catch::Contains("4 layers x 16 experts, the model 5 x 16"));
  auto bad_k = TraceRouting::create(t, 4, 16, 1, -1, 1, 1);
  REQUIRE_FALSE(bad_k.ok());
  CHECK_THAT(bad_k.status().message(), Catch::Contains("top-2 exceeds the model's top-1"));

  // bench_trace --model with a trace of another shape: the error names both.
  auto five = parse_route_trace(les::test::uniform_route_trace(5, 16, 2, 4, 1000, 5), "five layers");
  REQUIRE(five.ok());
  auto mismatch = replay_end_to_end(*model, *five, E2eOptions{});
  REQUIRE_FALSE(mismatch.ok());
  CHECK_THAT(mismatch.status().message(), Catch::Contains("5 layers x 16 experts, the model 4 x 16"));
  CHECK_THAT(check_trace_shape(*model, *five).message(), Catch::Contains("5 layers x 16 experts, the model 4 x 16"));
  CHECK(check_trace_shape(*model, t).ok());

  auto tr = TraceRouting::create(t, 4, 16, 4, -1, 1, 1);
  REQUIRE(tr.ok());
  REQUIRE((*tr)->n_prompt_tokens() == 1);
  REQUIRE((*tr)->n_decode_tokens() == 6);
  ContextParams cp;
  cp.n_threads = 1;
  cp.n_ctx = 16;
  auto ctx = sched::create_context(*model, cp);
  REQUIRE(ctx.ok());
  TraceRouting* r = tr->get();
  (*ctx)->set_routing_override([r](const RoutingOverrideRequest& q) { return r->apply(q); });
  std::vector<std::vector<int32_t>> seen;  // per (token, layer): the experts computed
  (*ctx)->set_router_observer([&](const RouterObservation& o) {
    REQUIRE(o.n_tokens == 1);
    REQUIRE(o.n_expert_used == 2);
    seen.emplace_back(o.selected, o.selected + 2);
  });
  r->begin_prefill();
  const int32_t prompt[1] = {5};
  REQUIRE((*ctx)->decode(prompt).ok());
  for (int32_t i = 0; i < 6; ++i) {
    r->begin_decode(i);
    const int32_t one[1] = {7 + i};
    REQUIRE((*ctx)->decode(one).ok());
  }
  REQUIRE(seen.size() == t.groups.size());
  for (size_t g = 0; g < seen.size(); ++g) {
    INFO("group " << g);
    CHECK(seen[g] == t.groups[g].experts);
  }
  // Past the trace, the override fails the pass rather than invent routing.
  r->begin_decode(6);
  const int32_t past[1] = {3};
  CHECK_FALSE((*ctx)->decode(past).ok());
}

TEST_CASE("End-to-end replay streams the trace's experts; the simulated predictor has recall r", "[trace]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-F16.gguf");
  auto model = load(path);
  const RouteTrace t = small_trace(96);
  auto min = sched::min_expert_budget_bytes(*model, ContextParams{});
  REQUIRE(min.ok());
  for (double recall : {1.0, 0.5}) {
    INFO("recall " << recall);
    E2eOptions o;
    o.budget_bytes = *min * 4;
    o.recall = recall;
    o.n_threads = 1;
    auto res = replay_end_to_end(*model, t, o);
    REQUIRE(res.ok());
    CHECK(res->decode_tokens == 96);
    CHECK(res->prefetch_c == 4);  // the trace's top-2 + 2
    CHECK(res->bytes_read > 0);
    CHECK(res->hit_rate >= 0.0);
    CHECK(res->hit_rate <= 1.0);
    // 96 tokens x 3 predicted layers x 2 experts = 576 draws: sd <= 0.021.
    CHECK(std::abs(res->mean_recall - recall) <= 0.1);
  }
  E2eOptions on_demand;
  on_demand.budget_bytes = *min * 4;
  on_demand.prefetch_c = 0;
  on_demand.policy = sched::EvictionPolicy::lru;
  auto od = replay_end_to_end(*model, t, on_demand);
  REQUIRE(od.ok());
  CHECK(od->prefetch_experts == 0);
  CHECK(od->demand_experts > 0);
  // Contention measures: non-negative, and a thread waits for a core at most
  // the whole decode (generous bound: every thread of the process).
  CHECK(od->run_queue_wait_seconds >= 0.0);
  CHECK(od->run_queue_wait_seconds <= 64.0 * od->decode_seconds + 1.0);
  CHECK(od->other_cpu_seconds >= 0.0);
}

TEST_CASE("Simulated predictor: weighted fillers come from the weighted experts, uniform otherwise", "[trace]") {
  // 16 experts; truth {0, 1}; weight only on 10 and 11, so with c = 4 and
  // recall 1 the fillers are exactly those two.
  std::vector<double> w(16, 0.0);
  w[10] = 3.0;
  w[11] = 1.0;
  const std::vector<int32_t> truth = {0, 1};
  SimulatedLookahead sim(1.0, 4, 16, 7);
  std::vector<int32_t> out;
  for (int i = 0; i < 50; ++i) {
    sim.predict(truth, out, w);
    REQUIRE(out.size() == 4);
    CHECK(out[0] == 0);
    CHECK(out[1] == 1);
    CHECK(std::set<int32_t>(out.begin() + 2, out.end()) == std::set<int32_t>{10, 11});
  }
  // Recall 0, c = 1: one filler, 10 three times as often as 11, never another.
  SimulatedLookahead one(0.0, 1, 16, 9);
  std::map<int32_t, int> count;
  for (int i = 0; i < 4000; ++i) {
    one.predict(truth, out, w);
    REQUIRE(out.size() == 1);
    ++count[out[0]];
  }
  CHECK(count.size() == 2);
  // Binomial(4000, 3/4): sd = 27.4; 5 sd.
  CHECK(std::abs(count[10] - 3000) <= 137);
  // More fillers than positive weights: the rest uniform among the others, still distinct.
  SimulatedLookahead many(1.0, 6, 16, 11);
  many.predict(truth, out, w);
  REQUIRE(out.size() == 6);
  CHECK(std::set<int32_t>(out.begin(), out.end()).size() == 6);
  CHECK(std::set<int32_t>(out.begin(), out.end()).count(10) == 1);
  // Weights of the wrong length: uniform fillers.
  many.predict(truth, out, std::vector<double>(3, 1.0));
  CHECK(std::set<int32_t>(out.begin(), out.end()).size() == 6);
}

TEST_CASE("End-to-end replay: the prefetch gate stops reading candidates that are never used", "[trace]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-F16.gguf");
  auto model = load(path);
  const RouteTrace t = small_trace(96);
  auto min = sched::min_expert_budget_bytes(*model, ContextParams{});
  auto layout = sched::SlotLayout::from_model(*model, 4096);
  REQUIRE(min.ok());
  REQUIRE(layout.ok());
  // Recall 1 and c = 4 for the trace's top-2: ranks 0-1 are always the true
  // experts, ranks 2-3 fillers that are never used. Room for 24 of the 64
  // experts: fillers cost reads and evictions.
  auto run = [&](double gate) {
    E2eOptions o;
    o.budget_bytes = *min + 24 * layout->slot_bytes();
    o.recall = 1.0;
    o.fillers = FillerDraw::uniform;
    o.prefetch_gate = gate;
    o.n_threads = 1;
    o.direct_io = false;
    auto r = replay_end_to_end(*model, t, o);
    REQUIRE(r.ok());
    return *r;
  };
  const E2eResult open = run(0.0), gated = run(sched::kDefaultPrefetchGate);
  CHECK(open.prefetch_gated == 0);
  CHECK(gated.prefetch_gated > 0);
  CHECK(gated.prefetch_experts < open.prefetch_experts);
  CHECK(gated.bytes_read < open.bytes_read);
  // The true experts are still read ahead: as many uses are hits.
  CHECK(gated.hit_rate >= open.hit_rate);
  CHECK(gated.prefetch_experts > 0);
}

TEST_CASE("Streamed on demand, the reads are exactly the trace's experts of each (token, layer)", "[trace]") {
  LES_REQUIRE_FIXTURE(path, "synthetic/qwen3moe-F16.gguf");
  auto model = load(path);
  const int32_t n_decode = 12;
  const RouteTrace t = small_trace(n_decode);
  // Every expert's first read (the slot's first range) by file offset.
  auto layout = sched::SlotLayout::from_model(*model, 4096);
  REQUIRE(layout.ok());
  std::map<uint64_t, std::pair<int32_t, int32_t>> by_offset;
  for (int32_t l = 0; l < 4; ++l)
    for (int32_t e = 0; e < 16; ++e) {
      auto r = layout->reads(l, e);
      REQUIRE(r.ok());
      for (size_t i = 0; i < r->n_reads; ++i)
        by_offset[r->reads[i].file_offset] = {l, i == 0 ? e : -1};
    }
  io::IoOptions io;
  io.use_direct_io = false;
  auto inner = io::create_io_backend(io::IoBackendKind::pread, io);
  REQUIRE(inner.ok());
  auto rec_owned = std::make_unique<RecordingBackend>(std::move(inner).value(), by_offset);
  RecordingBackend* rec = rec_owned.get();

  auto tr = TraceRouting::create(t, 4, 16, 4, -1, 1, 1);
  REQUIRE(tr.ok());
  TraceRouting* r = tr->get();
  auto min = sched::min_expert_budget_bytes(*model, ContextParams{});
  REQUIRE(min.ok());
  ContextParams cp;
  cp.n_threads = 1;
  cp.n_ctx = 32;
  sched::StreamingParams sp;
  sp.budget_bytes = *min;  // small: most experts are read again
  sp.prefetch_c = 0;       // on demand: every read is one the forward pass asked for
  sp.layer0 = sched::Layer0Lookahead::none;
  sp.policy = sched::EvictionPolicy::lru;
  sp.use_direct_io = false;
  auto ctx = sched::create_context(*model, cp, sp, std::move(rec_owned));
  REQUIRE(ctx.ok());
  (*ctx)->set_routing_override([r](const RoutingOverrideRequest& q) { return r->apply(q); });
  r->begin_prefill();
  rec->token = 0;
  const int32_t prompt[1] = {5};
  REQUIRE((*ctx)->decode(prompt).ok());
  for (int32_t i = 0; i < n_decode; ++i) {
    r->begin_decode(i);
    rec->token = i + 1;
    const int32_t one[1] = {7 + i};
    REQUIRE((*ctx)->decode(one).ok());
  }
  CHECK(rec->unknown == 0);
  // The trace's experts of (token, layer): token 0 = the prompt, i + 1 = decode i.
  std::map<std::pair<int32_t, int32_t>, std::set<int32_t>> want;
  for (const RouteGroup& g : t.groups)
    want[{g.phase == 0 ? 0 : g.step, g.layer}].insert(g.experts.begin(), g.experts.end());
  REQUIRE(want.size() == static_cast<size_t>((n_decode + 1) * 4));
  std::map<int32_t, std::set<int32_t>> seen;  // layer -> experts read or wanted before
  size_t total_reads = 0;
  for (const auto& [key, experts] : want) {
    const auto [token, layer] = key;
    std::set<int32_t> read;
    for (const auto& [k, n] : rec->reads)
      if (std::get<0>(k) == token && std::get<1>(k) == layer) {
        read.insert(std::get<2>(k));
        CHECK(n == 1);  // one read per expert and token
      }
    INFO("token " << token << " layer " << layer);
    // Nothing but the trace's experts is read ...
    for (int32_t e : read) CHECK(experts.count(e) == 1);
    // ... and every one the cache cannot hold yet (never needed before) is.
    for (int32_t e : experts)
      if (seen[layer].count(e) == 0) CHECK(read.count(e) == 1);
    seen[layer].insert(experts.begin(), experts.end());
    total_reads += read.size();
  }
  CHECK(total_reads == rec->reads.size());
  // At this budget the cache cannot keep every expert: some are read again.
  size_t distinct = 0;
  for (const auto& [l, e] : seen) distinct += e.size();
  CHECK(total_reads > distinct);
}

TEST_CASE("The routing and prediction overrides cannot be reached from the public API", "[trace]") {
  // Source: nothing the public API, its bindings or the les tool are built
  // from names them, so neither les.h nor `les run` can set them.
  const std::filesystem::path root = std::filesystem::path(LES_TESTS_SOURCE_DIR).parent_path();
  const char* names[] = {"routing_override", "prediction_override", "RoutingOverride", "TraceRouting"};
  int files = 0;
  for (const char* dir : {"include/les", "bindings", "tools"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root / dir)) {
      if (!e.is_regular_file()) continue;
      const std::string text = slurp(e.path());
      ++files;
      for (const char* n : names) {
        INFO(e.path().string() << " names " << n);
        CHECK(text.find(n) == std::string::npos);
      }
    }
  }
  CHECK(files > 10);
  // Binary: libles.so (built before this test, tests/CMakeLists.txt) exports
  // les_* C functions only; no symbol (demangled) names an override or the
  // Context that holds one.
  const std::string cmd = std::string("nm -D --defined-only -C '") + LES_SHARED_LIBRARY + "' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char line[4096];
  int exported = 0;
  while (std::fgets(line, sizeof line, p) != nullptr) {
    std::string s(line);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    const size_t sp = s.find(' ', s.find(' ') + 1);  // "<address> <type> <name>"
    REQUIRE(sp != std::string::npos);
    if (s[sp - 1] == 'A') continue;  // the version node (LES_0.2)
    const std::string name = s.substr(sp + 1);
    ++exported;
    INFO(name);
    CHECK(name.rfind("les_", 0) == 0);
    for (const char* n : names) CHECK(name.find(n) == std::string::npos);
    CHECK(name.find("Context") == std::string::npos);
  }
  CHECK(::pclose(p) == 0);
  CHECK(exported > 10);
}
