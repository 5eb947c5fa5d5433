// One Jinja construct at a time (snippets.json: whitespace control, scoping,
// loops, macros, call blocks, filters, tests, methods, the sandbox, errors),
// rendered by LES and compared with Jinja2's results in
// expected/snippets.json (written by render_reference.py --write). A construct
// LES refuses must be refused with the unsupported status, never rendered
// differently.
#include <catch2/catch.hpp>

#include <string>

#include "support/jinja_case.h"

TEST_CASE("each construct renders as in Jinja2, or is refused by name", "[jinja][snippets]") {
  const auto snippets = les::test::load_test_json("core/chat/jinja/snippets.json")["snippets"];
  const auto expected = les::test::load_test_json("core/chat/jinja/expected/snippets.json")["results"];
  const std::tm now = les::test::parse_now("2025-06-15T10:30:00");
  REQUIRE(snippets.size() >= 100);
  size_t refused = 0;
  for (const auto& s : snippets) {
    const std::string name = s["name"].get<std::string>();
    INFO("snippet " << name << ": " << s["template"].get<std::string>());
    const auto& ref = expected.at(name);
    nlohmann::ordered_json got;
    const auto tmpl = les::jinja::Template::parse(s["template"].get<std::string>());
    if (!tmpl.ok()) {
      got = les::test::result_json(tmpl.status());
    } else {
      nlohmann::ordered_json vars = s.value("vars", nlohmann::ordered_json::object());
      vars["name"] = name;
      got = les::test::render_case(*tmpl, vars, now, false);
    }
    INFO("Jinja2: " << ref.dump() << "\nLES:    " << got.dump());
    if (got.value("error", std::string()) == "unsupported") {
      ++refused;
      CHECK(got["message"].get<std::string>().find("not supported by LES") != std::string::npos);
      continue;
    }
    CHECK(les::test::matches_reference(ref, got));
  }
  // Only printing a generator (whose Python text holds a memory address) is refused.
  CHECK(refused == 1);
}
