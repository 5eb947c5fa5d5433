// See cors.h.
#include "serve/cors.h"

#include <cctype>

namespace les::tool {
namespace {

// An origin as browsers send it: scheme "://" host [":" port], host letters,
// digits, '-', '.', or an IPv6 literal in brackets.
bool valid_origin(const std::string& o) {
  size_t at = 0;
  if (o.rfind("http://", 0) == 0) at = 7;
  else if (o.rfind("https://", 0) == 0) at = 8;
  else return false;
  if (at >= o.size()) return false;
  for (size_t i = at; i < o.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(o[i]);
    if (!(std::isalnum(c) || c == '-' || c == '.' || c == ':' || c == '[' || c == ']')) return false;
  }
  return true;
}

// A header list as a preflight may ask for it: tokens (RFC 9110), commas and blanks.
bool valid_header_list(const std::string& s) {
  if (s.empty() || s.size() > 1024) return false;
  for (unsigned char c : s)
    if (!(std::isalnum(c) || c == '-' || c == '_' || c == ',' || c == ' ' || c == '.')) return false;
  return true;
}

}  // namespace

bool parse_cors_origins(const std::string& value, std::vector<std::string>* origins, std::string* error) {
  origins->clear();
  if (value == "*") {
    origins->push_back("*");
    return true;
  }
  size_t start = 0;
  for (;;) {
    const size_t comma = value.find(',', start);
    std::string o = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!o.empty() && o.back() == '/') o.pop_back();  // "https://a.example/" names the origin too
    if (!valid_origin(o)) {
      *error = "'" + o + "' is not an origin (\"*\", or http[s]://host[:port], several separated by commas)";
      return false;
    }
    origins->push_back(o);
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

bool is_cors_preflight(const httplib::Request& req) {
  return req.method == "OPTIONS" && req.has_header("Origin") && req.has_header("Access-Control-Request-Method");
}

void answer_cors_preflight(const httplib::Request& req, httplib::Response& res) {
  res.status = 204;
  res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  const std::string asked = req.get_header_value("Access-Control-Request-Headers");
  res.set_header("Access-Control-Allow-Headers", valid_header_list(asked) ? asked : "Authorization, Content-Type");
  res.set_header("Access-Control-Max-Age", "600");
}

void add_cors_headers(const std::vector<std::string>& origins, const httplib::Request& req, httplib::Response& res) {
  if (origins.empty() || !req.has_header("Origin")) return;
  if (origins.front() == "*") {
    res.set_header("Access-Control-Allow-Origin", "*");
    return;
  }
  const std::string origin = req.get_header_value("Origin");
  res.set_header("Vary", "Origin");
  for (const std::string& o : origins)
    if (o == origin) {
      res.set_header("Access-Control-Allow-Origin", origin);
      return;
    }
}

}  // namespace les::tool
