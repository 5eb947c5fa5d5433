// See jinja_case.h.
#include "support/jinja_case.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "core/chat/jinja/format.h"

namespace les::test {

std::tm parse_now(const std::string& iso) {
  std::tm tm{};
  int y = 2025, mo = 6, d = 15, h = 10, mi = 30, s = 0;
  std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%d", &y, &mo, &d, &h, &mi, &s);
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  const std::time_t t = timegm(&tm);  // normalises and fills tm_wday / tm_yday
  gmtime_r(&t, &tm);
  tm.tm_isdst = -1;  // as Python's datetime.timetuple() for a naive datetime
  return tm;
}

nlohmann::ordered_json result_json(const Status& status) {
  nlohmann::ordered_json r;
  const std::string& m = status.message();
  if (status.code() == StatusCode::unsupported) {
    r["error"] = "unsupported";
    r["message"] = m;
  } else if (status.code() == StatusCode::out_of_memory) {
    r["error"] = "limit";
    r["message"] = m;
  } else {
    const size_t colon = m.find(": ");
    r["error"] = colon == std::string::npos ? std::string("error") : m.substr(0, colon);
    std::string msg = colon == std::string::npos ? m : m.substr(colon + 2);
    const size_t line = msg.rfind(" (template line ");
    if (line != std::string::npos) msg.resize(line);
    const size_t parse_line = msg.rfind(" (line ");
    if (parse_line != std::string::npos && status.code() == StatusCode::format) msg.resize(parse_line);
    r["message"] = msg;
  }
  return r;
}

nlohmann::ordered_json render_case(const jinja::Template& tmpl, const nlohmann::ordered_json& c, const std::tm& now,
                                   bool as_chat) {
  jinja::RenderOptions options;
  options.now = now;
  if (!as_chat) {  // plain variables
    jinja::Variables vars;
    for (const auto& [key, value] : c.items()) {
      if (key == "name") continue;
      auto v = jinja::from_json(value);
      if (!v.ok()) return result_json(v.status());
      vars.emplace_back(key, std::move(*v));
    }
    const auto text = tmpl.render(vars, options);
    if (!text.ok()) return result_json(text.status());
    nlohmann::ordered_json r;
    r["output"] = *text;
    return r;
  }
  chat::JinjaChat chat;
  chat.bos_token.reset();
  chat.eos_token.reset();
  for (const auto& [key, value] : c.items()) {
    if (key == "name") continue;
    if (key == "messages") chat.messages = value;
    else if (key == "tools") chat.tools = value;
    else if (key == "documents") chat.documents = value;
    else if (key == "add_generation_prompt") chat.add_generation_prompt = value.get<bool>();
    else if (key == "bos_token" && value.is_string()) chat.bos_token = value.get<std::string>();
    else if (key == "eos_token" && value.is_string()) chat.eos_token = value.get<std::string>();
    else chat.extra[key] = value;
  }
  const auto text = chat::render_jinja_chat(tmpl, chat, options);
  if (!text.ok()) return result_json(text.status());
  nlohmann::ordered_json r;
  r["output"] = *text;
  return r;
}

bool matches_reference(const nlohmann::ordered_json& reference, const nlohmann::ordered_json& les) {
  if (reference.contains("output")) return les.contains("output") && les["output"] == reference["output"];
  if (!les.contains("error")) return false;
  if (reference["error"] == "TemplateError" || les["error"] == "TemplateError")
    return les["error"] == reference["error"] && les["message"] == reference["message"];
  return true;
}

nlohmann::ordered_json load_test_json(const std::string& relative) {
  const std::string path = std::string(LES_TESTS_SOURCE_DIR) + "/" + relative;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return nlohmann::ordered_json::parse(in);
}

}  // namespace les::test
