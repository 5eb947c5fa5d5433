// `les serve` under load and at its limits, against a real server process
// on a loopback port and real HTTP clients: a full queue (more busy
// connections than httplib's default pool of 8 threads) leaves /health and
// /v1/models answering within a second and refuses one more request with 503
// and Retry-After; a shutdown answers the running whole reply and every
// queued request with 503; request bodies are JSON whatever the
// Content-Type (curl -d's form encoding), bounded by the context, and 413
// names the bound (for a chunked body too); the non-loopback --host
// warning.
#include <httplib.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/fixtures.h"
#include "tools/serve_client.h"

using namespace les::test::serve;

namespace {

using Clock = std::chrono::steady_clock;

// A request's outcome, recorded on its own thread without Catch (whose
// assertions are not thread-safe) and checked on the test's thread.
struct Outcome {
  int status = -1;
  std::string body;
};

Outcome raw_post(int port, const std::string& body) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(300, 0);
  Outcome o;
  if (auto r = c.Post("/v1/completions", body, "application/json")) o = {r->status, r->body};
  return o;
}

// GET `path` on a new connection (it needs a free HTTP thread of its own)
// and how long the reply took, in seconds.
std::pair<Reply, double> timed_get(const Server& server, const std::string& path) {
  const auto t0 = Clock::now();
  httplib::Client c = server.client();
  Reply r = get(c, path);
  return {r, std::chrono::duration<double>(Clock::now() - t0).count()};
}

// Polls /health until its request counts are (running, waiting); false
// after `timeout_s`.
bool wait_for_counts(const Server& server, int running, int waiting, double timeout_s) {
  const auto end = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < end) {
    const Reply h = timed_get(server, "/health").first;
    if (h.status == 200 && h.body["requests"]["running"] == running && h.body["requests"]["waiting"] == waiting)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// A /proc/PID/status field in KiB ("VmHWM", "VmRSS"); -1 if absent.
long status_kib(int pid, const std::string& field) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return -1;
}

}  // namespace

TEST_CASE("les serve: a full queue leaves /health and /v1/models answering, refuses one more with 503; a "
          "shutdown answers every request with 503",
          "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  // 8000 tokens take seconds even unloaded; a shutdown ends them.
  Server server(model, {"-c", "8192"});
  const json slow = {{"prompt", "CHAPTER XII."}, {"temperature", 0}, {"max_tokens", 8000}, {"ignore_eos", true}};
  constexpr int kPlaces = 17;  // the running request and --max-queue's default 16 behind it
  std::vector<Outcome> outcomes(kPlaces);
  std::vector<std::thread> clients;
  clients.emplace_back([&] { outcomes[0] = raw_post(server.port, slow.dump()); });
  REQUIRE(wait_for_counts(server, 1, 0, 120));
  for (int i = 1; i < kPlaces; ++i) {
    json body = slow;
    body["stream"] = i % 2 == 0;
    clients.emplace_back([&outcomes, &server, i, text = body.dump()] { outcomes[i] = raw_post(server.port, text); });
  }
  REQUIRE(wait_for_counts(server, 1, kPlaces - 1, 120));

  // 17 connections wait or generate: /health and /v1/models still answer at once.
  for (int i = 0; i < 3; ++i) {
    const auto [health, health_s] = timed_get(server, "/health");
    CHECK(health.status == 200);
    CHECK(health_s < 1.0);
    const auto [models, models_s] = timed_get(server, "/v1/models");
    CHECK(models.status == 200);
    CHECK(models_s < 1.0);
  }
  // One more is refused at once (whole or streamed), with Retry-After.
  httplib::Client c = server.client();
  const Reply full = post(c, "/v1/completions", slow.dump());
  CHECK(full.status == 503);
  CHECK(full.body["error"]["type"] == "unavailable_error");
  CHECK(full.body["error"]["code"] == "queue_full");
  const auto retry = full.headers.find("Retry-After");
  REQUIRE(retry != full.headers.end());
  CHECK(retry->second == "1");
  json streamed = slow;
  streamed["stream"] = true;
  const Stream full_stream = post_stream(c, "/v1/completions", streamed.dump());
  CHECK(full_stream.status == 503);
  CHECK(full_stream.error_body["error"]["code"] == "queue_full");
  CHECK(wait_for_counts(server, 1, kPlaces - 1, 0.5));  // the first still generates: nothing moved

  // A shutdown: the running whole reply and every queued request get 503.
  CHECK(server.stop() == 0);
  for (std::thread& t : clients) t.join();
  for (int i = 0; i < kPlaces; ++i) {
    INFO("request " << i << ": " << outcomes[i].status << " " << outcomes[i].body);
    CHECK(outcomes[i].status == 503);
    const json body = json::parse(outcomes[i].body, nullptr, false);
    REQUIRE_FALSE(body.is_discarded());
    CHECK(body["error"]["type"] == "unavailable_error");
    CHECK(body["error"]["message"].get<std::string>().find("shutting down") != std::string::npos);
  }
  CHECK(server.child->err().find("(stop: cancelled: the server is stopping)") != std::string::npos);
}

TEST_CASE("les serve: a request body is JSON whatever its Content-Type, up to a bound from the context",
          "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  Server server(model);  // n_ctx 256
  const long limit = server.ready_number("request bodies up to ");
  CHECK(limit == 64 * 1024 + 64 * 256);
  httplib::Client c = server.client();
  const std::string head = R"({"prompt": "CHAPTER XII.", "temperature": 0, "max_tokens": 4,)";
  const std::string tail = R"("stream": false})";
  const auto padded = [&](size_t size) { return head + std::string(size - head.size() - tail.size(), ' ') + tail; };

  // `curl -d` sends application/x-www-form-urlencoded: a 64 KiB body is still read as the JSON.
  const Reply as_json = post(c, "/v1/completions", padded(64 * 1024));
  REQUIRE(as_json.status == 200);
  const Reply as_form = post(c, "/v1/completions", padded(64 * 1024), {}, "application/x-www-form-urlencoded");
  REQUIRE(as_form.status == 200);
  CHECK(as_form.body["choices"][0]["text"] == as_json.body["choices"][0]["text"]);
  CHECK(post(c, "/v1/completions", padded(1000), {}, "text/plain").status == 200);

  // Exactly the bound is taken; one byte more is 413, naming the bound.
  CHECK(post(c, "/v1/completions", padded(static_cast<size_t>(limit))).status == 200);
  const Reply over = post(c, "/v1/completions", padded(static_cast<size_t>(limit) + 1));
  CHECK(over.status == 413);
  CHECK(over.body["error"]["type"] == "invalid_request_error");
  CHECK(over.body["error"]["message"].get<std::string>().find(std::to_string(limit) + " bytes") != std::string::npos);
  // A 7 MB prompt is refused before it is parsed.
  const Reply huge = post(c, "/v1/completions", json({{"prompt", std::string(7000000, 'a')}}).dump());
  CHECK(huge.status == 413);

  // A chunked body (no Content-Length, which httplib alone does not bound) too.
  size_t sent = 0;
  auto chunked = c.Post(
      "/v1/completions",
      [&](size_t, httplib::DataSink& sink) {
        const std::string piece = sent == 0 ? head : std::string(16 * 1024, ' ');
        sink.write(piece.data(), piece.size());
        sent += piece.size();
        if (sent > 4 * static_cast<size_t>(limit)) {
          sink.write(tail.data(), tail.size());
          sink.done();
        }
        return true;
      },
      "application/json");
  REQUIRE(chunked);
  CHECK(chunked->status == 413);
  CHECK(chunked->body.find(std::to_string(limit) + " bytes") != std::string::npos);
  // The same body, chunked but within the bound, is served.
  sent = 0;
  auto small = c.Post(
      "/v1/completions",
      [&](size_t, httplib::DataSink& sink) {
        const std::string piece = sent == 0 ? head : tail;
        sink.write(piece.data(), piece.size());
        if (sent++ > 0) sink.done();
        return true;
      },
      "application/json");
  REQUIRE(small);
  CHECK(small->status == 200);
  // A multipart form is not JSON.
  httplib::MultipartFormDataItems form = {{"prompt", "hi", "", ""}};
  auto multipart = c.Post("/v1/completions", form);
  REQUIRE(multipart);
  CHECK(multipart->status == 415);
  CHECK(post(c, "/v1/completions", padded(1000)).status == 200);  // still serving
  CHECK(server.stop() == 0);
}

TEST_CASE("les serve: --host warns only for an address beyond loopback", "[cli][serve]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  {
    Server server(model, {"--host", "127.0.0.2"});  // loopback, though not 127.0.0.1
    CHECK(server.child->err().find("warning: --host") == std::string::npos);
    httplib::Client c = server.client();
    CHECK(get(c, "/health").status == 200);
    CHECK(server.stop() == 0);
  }
  // 192.0.2.1 (TEST-NET-1, never assigned): the warning, then the bind fails.
  const les::test::RunResult r =
      les::test::run_les("serve -m " + les::test::sh_quote(model) + " --host 192.0.2.1 --port 0");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("warning: --host 192.0.2.1 without --api-key") != std::string::npos);
  CHECK(r.err.find("cannot listen on 192.0.2.1") != std::string::npos);
  const les::test::RunResult keyed =
      les::test::run_les("serve -m " + les::test::sh_quote(model) + " --host 192.0.2.1 --port 0 --api-key k");
  CHECK(keyed.err.find("warning: --host") == std::string::npos);
  // --max-queue out of range is a usage error.
  CHECK(les::test::run_les("serve -m " + les::test::sh_quote(model) + " --max-queue -1").exit_code == 2);
  CHECK(les::test::run_les("serve -m " + les::test::sh_quote(model) + " --max-queue 100000").exit_code == 2);
  // The image limits without --mmproj would do nothing: a usage error naming --mmproj.
  for (const char* flag : {" --max-images 2", " --max-image-mb 1"}) {
    const les::test::RunResult img = les::test::run_les("serve -m " + les::test::sh_quote(model) + flag);
    INFO(flag << ": " << img.err);
    CHECK(img.exit_code == 2);
    CHECK(img.err.find("--mmproj") != std::string::npos);
  }
}

TEST_CASE("les serve: nested JSON bodies of every size up to the limit keep the server's peak memory bounded",
          "[cli][serve][hostile]") {
  // Issue 36, defect 1: nlohmann::json builds one heap node per value, so a
  // body of unclosed '[' cost ~77x its size (measured on the old main with
  // this server: a 1.1 MB body raised the peak RSS by 84 MiB and it still
  // held 70 MiB after the 400). The body's shape is now checked before the
  // parse, and parses take turns (serve/json_limits.h).
  LES_REQUIRE_FIXTURE(model, kModel);
  Server server(model, {"-c", "16384"});
  const long limit = server.ready_number("request bodies up to ");
  REQUIRE(limit == 64 * 1024 + 64 * 16384);
  const int pid = static_cast<int>(server.child->pid());
  const long base_kib = status_kib(pid, "VmHWM");
  REQUIRE(base_kib > 0);
  httplib::Client c = server.client();
  std::vector<size_t> sizes;
  for (size_t n = 64; n < static_cast<size_t>(limit); n *= 4) sizes.push_back(n);
  sizes.push_back(static_cast<size_t>(limit));
  for (const size_t n : sizes) {
    for (const std::string& unit : {std::string("["), std::string("{\"a\":")}) {
      std::string body;
      while (body.size() + unit.size() <= n) body += unit;
      INFO("a body of " << body.size() << " bytes of " << unit);
      const Reply r = post(c, "/v1/completions", body);
      CHECK(r.status == 400);  // too deep, or (64 levels and fewer) malformed
      if (body.size() > 64 * unit.size())
        CHECK(r.body["error"]["message"].get<std::string>().find("more than 64 levels deep") != std::string::npos);
    }
  }
  // A flat array of more values than a context of 16384 tokens needs (4 per token, at least 65536).
  std::string flat = "{\"prompt\": [";
  while (flat.size() + 4 < static_cast<size_t>(limit)) flat += "1,";
  flat += "1]}";
  const Reply many = post(c, "/v1/completions", flat);
  CHECK(many.status == 400);
  CHECK(many.body["error"]["message"].get<std::string>().find("more than 65536 JSON values") != std::string::npos);
  // Four bodies at the limit at once.
  std::vector<Outcome> at_once(4);
  {
    std::vector<std::thread> threads;
    for (Outcome& o : at_once)
      threads.emplace_back(
          [&o, port = server.port, limit] { o = raw_post(port, std::string(static_cast<size_t>(limit), '[')); });
    for (std::thread& t : threads) t.join();
  }
  for (const Outcome& o : at_once) CHECK(o.status == 400);

  // The bound: the four bodies held at once, each read into a string (twice
  // while httplib hands it over), plus 16 MiB for the HTTP threads' stacks and
  // buffers. The old main exceeded it with the first 1 MB body.
  const long peak_kib = status_kib(pid, "VmHWM");
  const long bound_kib = 4 * 2 * limit / 1024 + 16 * 1024;
  INFO("peak RSS " << base_kib << " KiB when ready, " << peak_kib << " KiB after; bound +" << bound_kib << " KiB");
#if defined(__SANITIZE_ADDRESS__)
  // ASan's quarantine keeps every freed body resident for a while: no bound
  // of a few bodies can hold there. The peak is checked in Release builds.
  WARN("the peak RSS bound is not checked under AddressSanitizer (its quarantine holds freed bodies)");
#else
  CHECK(peak_kib - base_kib < bound_kib);
#endif

  // A long prompt of token ids (one value each) still parses and is served. 1000
  // ids: an ASan build prefills this model at ~44 tok/s on one free core, so the
  // reply needs ~25 s there; the client waits up to 600 s for a busy machine.
  json ids = json::array();
  for (int i = 0; i < 1000; ++i) ids.push_back(100 + i % 1000);
  httplib::Client patient = server.client();
  patient.set_read_timeout(600, 0);
  const Reply fits = post(patient, "/v1/completions", json({{"prompt", ids}, {"max_tokens", 1}}).dump());
  CHECK(fits.status == 200);
  CHECK(server.stop() == 0);
}
