// jinja_render: a test helper that renders templates with LES's Jinja engine
// for render_reference.py --les (the live comparison with Jinja2).
//
// stdin:  {"now": "YYYY-MM-DDTHH:MM:SS",
//          "jobs": [{"id": ID, "template": SOURCE, "chat": BOOL, "cases": [CASE, ...]}, ...]}
//   CASE of a chat job: {"name", "messages", "tools", "documents", "add_generation_prompt",
//          "bos_token", "eos_token", <extra variables>...} (rendered as
//          apply_chat_template does); of another job: {"name", <variables>...}
//          (rendered with exactly those variables)
// stdout: {ID: {NAME: {"output": TEXT} | {"error": KIND, "message": TEXT}, ...}, ...}
// KIND is the Jinja2 exception name LES reports ("TemplateError", "TypeError", ...),
// "unsupported" for a construct LES refuses, "limit" for a render limit.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>

#include "support/jinja_case.h"

int main() {
  const std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  const auto job = nlohmann::ordered_json::parse(input, nullptr, false);
  if (job.is_discarded() || !job.contains("jobs") || !job["jobs"].is_array()) {
    std::fprintf(stderr, "jinja_render: stdin is not a job list\n");
    return 2;
  }
  const std::tm now = les::test::parse_now(job.value("now", std::string("2025-06-15T10:30:00")));
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& j : job["jobs"]) {
    const auto tmpl = les::jinja::Template::parse(j.value("template", std::string()));
    nlohmann::ordered_json results = nlohmann::ordered_json::object();
    for (const auto& c : j["cases"]) {
      const std::string name = c.value("name", std::string());
      results[name] = tmpl.ok() ? les::test::render_case(*tmpl, c, now, j.value("chat", false))
                                : les::test::result_json(tmpl.status());
    }
    out[j.value("id", std::string())] = std::move(results);
  }
  std::cout << out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  return 0;
}
