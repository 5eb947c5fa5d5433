// Every real chat template of templates/ (copied from llama.cpp's
// models/templates; see README.md) rendered by LES on every conversation of
// conversations.json, compared with what Jinja2 renders in transformers'
// environment (expected/<template>.json, written by render_reference.py
// --write): byte-identical text, or an error where Jinja2 raised one (with the
// same message for the template's own raise_exception). LES refusing a
// construct (unsupported) is a failure here: every template of the set is
// expected to render. test_jinja_snippets does the same for one construct at a time.
#include <catch2/catch.hpp>

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/jinja_case.h"

namespace {

std::vector<std::string> template_names() {
  std::vector<std::string> names;
  const std::string dir = std::string(LES_TESTS_SOURCE_DIR) + "/core/chat/jinja/templates";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 6 && n.compare(n.size() - 6, 6, ".jinja") == 0) names.push_back(n.substr(0, n.size() - 6));
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("every real chat template renders as Jinja2 renders it", "[jinja][templates]") {
  const auto conv = les::test::load_test_json("core/chat/jinja/conversations.json");
  const std::tm now = les::test::parse_now(conv["now"].get<std::string>());
  const std::vector<std::string> names = template_names();
  REQUIRE(names.size() >= 56);
  size_t renders = 0, errors = 0;
  for (const std::string& name : names) {
    INFO("template " << name);
    const std::string source =
        read_file(std::string(LES_TESTS_SOURCE_DIR) + "/core/chat/jinja/templates/" + name + ".jinja");
    REQUIRE_FALSE(source.empty());
    const auto expected = les::test::load_test_json("core/chat/jinja/expected/" + name + ".json")["cases"];
    const auto tmpl = les::jinja::Template::parse(source);
    REQUIRE(tmpl.ok());
    for (const auto& c : conv["cases"]) {
      const std::string case_name = c["name"].get<std::string>();
      INFO("case " << case_name);
      nlohmann::ordered_json input = c;
      input["bos_token"] = conv["bos_token"];
      input["eos_token"] = conv["eos_token"];
      const auto got = les::test::render_case(*tmpl, input, now, true);
      const auto& ref = expected.at(case_name);
      INFO("Jinja2: " << ref.dump() << "\nLES:    " << got.dump());
      CHECK(got.value("error", std::string()) != "unsupported");
      CHECK(les::test::matches_reference(ref, got));
      ++renders;
      errors += ref.contains("error") ? 1 : 0;
    }
  }
  // Most renders produce text; errors are the templates' own refusals and Python errors they raise.
  CHECK(renders == names.size() * conv["cases"].size());
  CHECK(errors * 4 < renders);
}
