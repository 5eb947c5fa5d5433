// StopStringFilter: held-back prefixes, stops inside and across pieces, flush.
#include <catch2/catch.hpp>

#include "core/stop_strings.h"

using les::StopStringFilter;

TEST_CASE("without stop strings everything passes through", "[stop_strings]") {
  StopStringFilter f({});
  CHECK(f.push("Hello") == "Hello");
  CHECK(f.push(", world") == ", world");
  CHECK(f.flush().empty());
  CHECK_FALSE(f.stopped());
}

TEST_CASE("a stop string inside one piece cuts the text before it", "[stop_strings]") {
  StopStringFilter f({"STOP"});
  CHECK(f.push("abc STOP def") == "abc ");
  CHECK(f.stopped());
  CHECK(f.push("more").empty());
  CHECK(f.flush().empty());
}

TEST_CASE("a stop string split across pieces is held back, then dropped", "[stop_strings]") {
  StopStringFilter f({"\n\nUser:"});
  CHECK(f.push("answer.\n") == "answer.");
  CHECK(f.push("\nUs") == "");
  CHECK_FALSE(f.stopped());
  CHECK(f.push("er: hi") == "");
  CHECK(f.stopped());
}

TEST_CASE("a held-back prefix that does not complete is released", "[stop_strings]") {
  StopStringFilter f({"END"});
  CHECK(f.push("the E") == "the ");
  CHECK(f.push("N") == "");
  CHECK(f.push("D") == "");  // completes: stop
  CHECK(f.stopped());

  StopStringFilter g({"END"});
  CHECK(g.push("the E") == "the ");
  CHECK(g.push("ND?").empty());
  CHECK(g.stopped());

  StopStringFilter h({"END"});
  CHECK(h.push("the E") == "the ");
  CHECK(h.push("x") == "Ex");
  CHECK(h.push("EN") == "");
  CHECK(h.flush() == "EN");  // end of generation releases the held tail
}

TEST_CASE("the earliest of several stop strings wins; empty ones are ignored", "[stop_strings]") {
  StopStringFilter f({"", "zz", "b"});
  CHECK(f.push("aazzab") == "aa");
  CHECK(f.stopped());
  StopStringFilter g({"bc", "abcd"});
  // "ab" is held (prefix of "abcd"); "abc" contains "bc" -> stop before "bc".
  CHECK(g.push("xab") == "x");
  CHECK(g.push("c") == "a");
  CHECK(g.stopped());
}
