// `les serve` GET /metrics end to end: Prometheus text format (every family
// with HELP and TYPE, every sample `name{labels} number`), replies counted by
// route and status, prompt and generated tokens equal to the replies' usage,
// decode speed, the queue, the expert cache counters when experts are
// streamed (and none when not), and the API key.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "support/fixtures.h"
#include "tools/serve_client.h"

using namespace les::test::serve;

namespace {

// The samples of an exposition text by "name{labels}"; REQUIREs the format.
std::map<std::string, double> parse_metrics(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line, typed;
  const std::regex sample(R"(^([a-z_]+)(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? (-?[0-9.e+-]+|NaN)$)");
  while (std::getline(in, line)) {
    INFO(line);
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      typed = line.substr(7, line.find(' ', 7) - 7);
      continue;
    }
    std::smatch m;
    REQUIRE(std::regex_match(line, m, sample));
    CHECK(m[1].str() == typed);  // a sample follows its family's TYPE line
    out[m[1].str() + m[2].str()] = std::stod(m[4].str());
  }
  return out;
}

}  // namespace

TEST_CASE("les serve: /metrics in Prometheus text format", "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  Server server(model, {"--api-key", "k3y", "--budget-mb", "1"});
  httplib::Client c = server.client();
  const httplib::Headers key = {{"Authorization", "Bearer k3y"}};
  CHECK(get(c, "/health").status == 200);
  CHECK(get(c, "/health").status == 200);
  CHECK(get(c, "/v1/models/nosuch", key).status == 404);
  CHECK(get(c, "/nosuch").status == 404);
  const Reply a = post(c, "/v1/completions", json({{"prompt", kStory}, {"max_tokens", 5}, {"temperature", 0}}).dump(), key);
  REQUIRE(a.status == 200);
  const Reply b = post(c, "/v1/chat/completions", chat_body("Who is Emily?", 3, false), key);
  REQUIRE(b.status == 200);
  CHECK(post(c, "/v1/chat/completions", "{bad", key).status == 400);
  // The key is needed.
  auto refused = c.Get("/metrics");
  REQUIRE(refused);
  CHECK(refused->status == 401);
  auto r = c.Get("/metrics", key);
  REQUIRE(r);
  REQUIRE(r->status == 200);
  CHECK(r->get_header_value("Content-Type").rfind("text/plain; version=0.0.4", 0) == 0);
  INFO(r->body);
  const std::map<std::string, double> m = parse_metrics(r->body);
  auto at = [&](const std::string& k) {
    INFO(k);
    REQUIRE(m.count(k) == 1);
    return m.at(k);
  };
  CHECK(at(R"(les_http_requests_total{route="/health",status="200"})") == 2);
  CHECK(at(R"(les_http_requests_total{route="/v1/models/{id}",status="404"})") == 1);
  CHECK(at(R"(les_http_requests_total{route="other",status="404"})") == 1);
  CHECK(at(R"(les_http_requests_total{route="/v1/completions",status="200"})") == 1);
  CHECK(at(R"(les_http_requests_total{route="/v1/chat/completions",status="200"})") == 1);
  CHECK(at(R"(les_http_requests_total{route="/v1/chat/completions",status="400"})") == 1);
  CHECK(at(R"(les_http_requests_total{route="/metrics",status="401"})") == 1);
  const double prompt = a.body["usage"]["prompt_tokens"].get<double>() + b.body["usage"]["prompt_tokens"].get<double>();
  const double generated =
      a.body["usage"]["completion_tokens"].get<double>() + b.body["usage"]["completion_tokens"].get<double>();
  CHECK(at("les_prompt_tokens_total") == prompt);
  CHECK(at("les_generated_tokens_total") == generated);
  CHECK(at("les_decode_tokens_per_second") > 0);
  CHECK(at("les_decode_seconds_total") > 0);
  CHECK(at("les_requests_running") == 0);
  CHECK(at("les_requests_waiting") == 0);
  CHECK(at("les_requests_max_waiting") == 16);
  // Streamed with a budget of a few experts: lookups, some hits, bytes read.
  const double lookups = at("les_expert_cache_lookups_total");
  CHECK(lookups > 0);
  CHECK(at("les_expert_cache_hits_total") <= lookups);
  CHECK(at("les_expert_bytes_read_total") > 0);
  // The next scrape counts this one.
  auto again = c.Get("/metrics", key);
  REQUIRE(again);
  CHECK(parse_metrics(again->body).at(R"(les_http_requests_total{route="/metrics",status="200"})") == 1);
  CHECK(server.stop() == 0);
}

TEST_CASE("les serve: /metrics without streaming has no expert cache lines", "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  Server server(model);
  httplib::Client c = server.client();
  auto r = c.Get("/metrics");
  REQUIRE(r);
  REQUIRE(r->status == 200);
  const std::map<std::string, double> m = parse_metrics(r->body);
  CHECK(m.count("les_expert_cache_lookups_total") == 0);
  CHECK(m.at("les_generated_tokens_total") == 0);
  CHECK(m.count("les_decode_tokens_per_second") == 1);
  CHECK(server.stop() == 0);
}
