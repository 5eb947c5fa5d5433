// route_trace v1 reader: the fixtures parse with the README's shapes; every
// malformed input is refused with the line and what was wrong.
#include <catch2/catch.hpp>

#include "support/fixtures.h"
#include "trace/route_trace.h"
#include "trace_test_util.h"

using namespace les;
using namespace les::trace;

namespace {

const char* kHead =
    "# route_trace v1\n"
    "# model=m.gguf arch=qwen3moe n_layer=2 n_expert=4 n_expert_used=2\n"
    "# layer=0 expert_bytes=100 dense_bytes=5\n"
    "# layer=1 expert_bytes=200 dense_bytes=5\n"
    "turn,phase,step,layer,slot,expert,weight,residency,expert_bytes\n";

std::string refusal(const std::string& text) {
  auto t = parse_route_trace(text, "t.csv");
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == StatusCode::format);
  return t.status().message();
}

}  // namespace

TEST_CASE("A small trace parses into groups with distinct experts in router order", "[trace]") {
  const std::string text = std::string(kHead) +
                           "0,0,0,0,0,3,0.6,0,0\n0,0,0,0,1,1,0.4,0,0\n"
                           "0,0,0,1,0,2,0.5,0,0\n0,0,0,1,1,2,0.5,0,0\n"  // a duplicate expert: one lookup
                           "# summary lines are ignored\n"
                           "0,1,1,0,0,0,0.7,1,0\n0,1,1,0,1,1,0.3,1,0\n"
                           "0,1,1,1,0,3,0.9,0,200\n0,1,1,1,1,0,0.1,0,200\n";
  auto t = parse_route_trace(text, "t.csv");
  REQUIRE(t.ok());
  CHECK(t->arch == "qwen3moe");
  CHECK(t->n_layer == 2);
  CHECK(t->n_expert_used == 2);
  CHECK(t->expert_bytes == std::vector<size_t>{100, 200});
  REQUIRE(t->groups.size() == 4);
  CHECK(t->groups[0].experts == std::vector<int32_t>{3, 1});
  CHECK(t->groups[1].experts == std::vector<int32_t>{2});
  CHECK(t->groups[3].experts == std::vector<int32_t>{3, 0});
  CHECK(t->n_decode_lookups() == 4);
  CHECK(t->n_decode_tokens() == 1);
  CHECK(t->one_token_bytes() == 2 * 100 + 2 * 200);
}

TEST_CASE("Malformed traces are refused naming the line and the fault", "[trace]") {
  CHECK_THAT(refusal(""), Catch::Contains("empty"));
  CHECK_THAT(refusal("turn,phase\n"), Catch::Contains("t.csv:1: not a route trace"));
  CHECK_THAT(refusal("# route_trace v1\n# model=x n_layer=2 n_expert=4\n"), Catch::Contains("n_expert_used"));
  CHECK_THAT(refusal("# route_trace v1\n# model=x n_layer=0 n_expert=4 n_expert_used=2\n"), Catch::Contains("implausible"));
  CHECK_THAT(refusal("# route_trace v1\n# model=x n_layer=2 n_expert=4 n_expert_used=9\n"), Catch::Contains("implausible"));
  CHECK_THAT(refusal("# route_trace v1\n# layer=0 expert_bytes=5\n"), Catch::Contains("before the model line"));
  CHECK_THAT(refusal(std::string(kHead) + "0,1,1,2,0,0,0.5,0,0\n"), Catch::Contains("t.csv:6: layer 2 outside"));
  CHECK_THAT(refusal(std::string(kHead) + "0,1,1,0,0,4,0.5,0,0\n"), Catch::Contains("expert 4 outside"));
  CHECK_THAT(refusal(std::string(kHead) + "0,1,1,0,2,1,0.5,0,0\n"), Catch::Contains("slot 2 outside"));
  CHECK_THAT(refusal(std::string(kHead) + "0,2,1,0,0,1,0.5,0,0\n"), Catch::Contains("phase 2"));
  CHECK_THAT(refusal(std::string(kHead) + "0,1,x,0,0,1,0.5,0,0\n"), Catch::Contains("not a number"));
  CHECK_THAT(refusal(std::string(kHead) + "0,1,1,0\n"), Catch::Contains("at least 7"));
  CHECK_THAT(refusal(std::string(kHead) + "0,0,0,0,0,1,0.5,0,0\n"), Catch::Contains("no decode rows"));
  CHECK_THAT(refusal(std::string(kHead) + "0,1,1,0,0,1,.5,0,0\n0,1,1,1,0,1,.5,0,0\n0,1,1,0,1,2,.5,0,0\n"),
             Catch::Contains("not contiguous"));
  CHECK_THAT(refusal("# route_trace v1\n# model=x n_layer=2 n_expert=4 n_expert_used=2\n# layer=0 expert_bytes=7\n"
                     "turn,phase,step,layer,slot,expert,weight,residency,expert_bytes\n0,1,1,1,0,1,.5,0,0\n"),
             Catch::Contains("layer 1 has no '# layer=' line"));
  CHECK_THAT(refusal("# route_trace v1\n# model=x n_layer=2 n_expert=4 n_expert_used=2\n1,2\n"),
             Catch::Contains("expected the header"));
  auto missing = read_route_trace("/nonexistent/trace.csv");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::io);
}

TEST_CASE("The fixture traces parse with the README's shapes", "[trace]") {
  LES_REQUIRE_FIXTURE(qwen, "traces/qwen3-30b-a3b-k6.route.csv");
  LES_REQUIRE_FIXTURE(gemma, "traces/gemma4-26b-a4b-k6.route.csv");
  auto q = read_route_trace(qwen);
  REQUIRE(q.ok());
  CHECK(q->n_layer == 48);
  CHECK(q->n_expert == 128);
  CHECK(q->n_expert_used == 6);
  CHECK(q->expert_bytes[0] == 3059712);
  CHECK(q->n_decode_tokens() == 128);
  CHECK(q->n_decode_lookups() == 128u * 48u * 6u);
  auto g = read_route_trace(gemma);
  REQUIRE(g.ok());
  CHECK(g->n_layer == 30);
  CHECK(g->arch == "gemma4");
  CHECK(g->n_decode_tokens() == 128);
}

TEST_CASE("A generated uniform trace round-trips", "[trace]") {
  auto t = parse_route_trace(les::test::uniform_route_trace(4, 8, 2, 16, 1000, 7), "gen");
  REQUIRE(t.ok());
  CHECK(t->n_decode_tokens() == 16);
  CHECK(t->one_token_bytes() == 4 * 2 * 1000);
}
