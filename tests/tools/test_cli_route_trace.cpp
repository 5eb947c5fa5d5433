// `les run --route-trace FILE`: the file is route_trace v1 that the trace
// reader accepts, with the model's shape and expert sizes, and replaying it
// through the cache (src/trace/cache_replay.h) at the run's own slot count
// and policy (next_use) reproduces the run's own cache hits and lookups
// exactly; bad uses exit with a message.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "sched/eviction_policy.h"
#include "support/cli_tool.h"
#include "support/fixtures.h"
#include "trace/cache_replay.h"
#include "trace/route_trace.h"

using les::test::RunResult;
using les::test::run_les;
using les::test::sh_quote;

TEST_CASE("les run --route-trace: the file replays to the run's own hit rate", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-F16.gguf");
  const std::string path = les::test::temp_dir() + "/run.route.csv";
  // Demand reads only (no lookahead): the replay's accounting. next_use, whose
  // ranking does not depend on the order a prefill looks up one layer's
  // distinct experts in (the engine: once each, in one batch; the trace: token
  // by token); lru's recency ranks among them do, so it can differ by a few hits.
  for (const char* policy : {"next_use"}) {
    INFO(policy);
    const RunResult r = run_les("run -m " + sh_quote(model) +
                                " -p 'It is a truth universally acknowledged' -n 48 --temp 0 --ignore-eos"
                                " --budget-mb 8 --prefetch-c 0 --eviction " + policy +
                                " --json --route-trace " + sh_quote(path));
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("route trace " + path) != std::string::npos);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    auto t = les::trace::read_route_trace(path);
    REQUIRE(t.ok());
    CHECK(t->arch == "qwen3moe");
    CHECK(t->n_layer == 8);
    CHECK(t->n_expert == 32);
    CHECK(t->n_expert_used == 4);
    for (size_t b : t->expert_bytes) CHECK(b == 3 * 32768);  // F16 gate + up + down slabs (fixture README)
    // Every generated token but the last (left pending) was decoded, one position each.
    CHECK(t->n_decode_tokens() == j["generated"].get<int>() - 1);
    CHECK(t->n_decode_lookups() == static_cast<size_t>(t->n_decode_tokens()) * 8 * 4);

    // The run's prefill is one batch: one lookup per distinct expert of each layer, all misses (cold cache).
    std::vector<std::set<int32_t>> prefill(8);
    for (const auto& g : t->groups)
      if (g.phase == 0) prefill[static_cast<size_t>(g.layer)].insert(g.experts.begin(), g.experts.end());
    uint64_t prefill_lookups = 0;
    for (const auto& s : prefill) prefill_lookups += s.size();
    const nlohmann::json& st = j["stream"];
    const uint64_t hits = st["cache_hits"], misses = st["cache_misses"];
    CHECK(hits + misses == t->n_decode_lookups() + prefill_lookups);

    les::trace::ReplayOptions o;
    o.budget_bytes = st["n_slots"].get<size_t>() * 3 * 32768;  // the run's slots (4096-aligned already)
    o.policy = *les::sched::parse_eviction_policy(policy);
    auto rep = les::trace::replay_cache(*t, o);
    REQUIRE(rep.ok());
    CHECK(rep->lookups == t->n_decode_lookups());
    CHECK(rep->hits == hits);  // prefill hits nothing, so every hit of the run is a decode hit
    CHECK(hits > 0);
    CHECK(misses > prefill_lookups);  // the budget is small enough to evict during decode
  }
}

TEST_CASE("les run --route-trace: bad uses exit with a message", "[cli]") {
  LES_REQUIRE_FIXTURE(model, "trained/tiny-qwen3moe-F16.gguf");
  LES_REQUIRE_FIXTURE(dense, "synthetic/llama-dense-Q4_K_M.gguf");
  const std::string base = "run -p 'Hello' -n 4 --temp 0 --route-trace ";
  const RunResult unwritable = run_les(base + "/nonexistent/dir/x.csv -m " + sh_quote(model));
  CHECK(unwritable.exit_code == 1);
  CHECK(unwritable.err.find("/nonexistent/dir/x.csv") != std::string::npos);
  const RunResult spec = run_les(base + sh_quote(les::test::temp_dir() + "/s.csv") + " -m " + sh_quote(model) + " --lookup 2");
  CHECK(spec.exit_code == 2);
  CHECK(spec.err.find("--route-trace cannot be combined") != std::string::npos);
  const RunResult d = run_les(base + sh_quote(les::test::temp_dir() + "/d.csv") + " -m " + sh_quote(dense));
  CHECK(d.exit_code == 1);
  CHECK(d.err.find("no routed experts") != std::string::npos);
}
