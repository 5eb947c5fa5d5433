// `les serve`'s guards on a request body before it is parsed, without a
// server (serve/json_limits.h): check_json_shape counts only the brackets,
// commas and colons outside strings (escapes included) and names the limit
// and the byte it was passed at; ParseGate lets at most its slots through at
// once. The server's side: tools_test_cli_serve_limits ("nested JSON bodies").
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "serve/json_limits.h"

using namespace les::tool;

TEST_CASE("check_json_shape: nesting and values are counted outside strings only", "[serve][hostile]") {
  JsonShapeLimits l;
  l.max_depth = 3;
  l.max_nodes = 8;
  CHECK(check_json_shape(R"({"a": [[1]]})", l).empty());  // depth 3
  const std::string deep = check_json_shape(R"({"a": [[[1]]]})", l);
  CHECK(deep.find("more than 3 levels deep (at byte 8)") != std::string::npos);
  // Brackets, commas and colons inside strings, escaped quotes included, are text.
  CHECK(check_json_shape(R"({"a": "[[[[,,,,:::: \" [[[[ \\"})", l).empty());
  CHECK(check_json_shape(R"(["\"[[[[", "]]]]\\", "[[[["])", l).empty());
  // Values: 8 pass, 9 are refused.
  CHECK(check_json_shape("[1,2,3,4,5,6,7]", l).empty());
  const std::string many = check_json_shape("[1,2,3,4,5,6,7,8]", l);
  CHECK(many.find("more than 8 JSON values") != std::string::npos);
  // Closing brackets do not go below zero: stray ones cannot buy depth.
  CHECK(!check_json_shape("]]]]]][[[[", l).empty());
  // Malformed but within the limits: left to the parser.
  CHECK(check_json_shape("[[[", l).empty());
  CHECK(check_json_shape("", l).empty());
}

TEST_CASE("request_json_limits: 64 levels, max(65536, 4 x n_ctx) values", "[serve][hostile]") {
  CHECK(request_json_limits(256).max_depth == 64);
  CHECK(request_json_limits(256).max_nodes == 65536);
  CHECK(request_json_limits(32768).max_nodes == 131072);
  CHECK(request_json_limits(-1).max_nodes == 65536);
}

TEST_CASE("ParseGate: at most its slots at once", "[serve][hostile]") {
  ParseGate gate(2);
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      ParseGate::Ticket t(gate);
      const int now = ++inside;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      --inside;
    });
  for (std::thread& t : threads) t.join();
  CHECK(most.load() >= 1);
  CHECK(most.load() <= 2);
}
