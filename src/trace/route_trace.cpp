#include "trace/route_trace.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace les::trace {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

template <class T>
bool parse_number(std::string_view s, T& out) {
  s = trim(s);
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// The key=value fields of a metadata line.
std::map<std::string, std::string, std::less<>> fields(std::string_view line) {
  std::map<std::string, std::string, std::less<>> m;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '#' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    const std::string_view tok = line.substr(i, j - i);
    const size_t eq = tok.find('=');
    if (eq != std::string_view::npos) m.emplace(std::string(tok.substr(0, eq)), std::string(tok.substr(eq + 1)));
    i = j;
  }
  return m;
}

Status line_error(const std::string& name, size_t line, const std::string& what) {
  return format_error(name + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

size_t RouteTrace::n_decode_lookups() const noexcept {
  size_t n = 0;
  for (const RouteGroup& g : groups) n += g.phase == 1 ? g.experts.size() : 0;
  return n;
}

int32_t RouteTrace::n_decode_tokens() const noexcept {
  std::set<std::pair<int32_t, int32_t>> steps;
  for (const RouteGroup& g : groups)
    if (g.phase == 1) steps.insert({g.turn, g.step});
  return static_cast<int32_t>(steps.size());
}

size_t RouteTrace::one_token_bytes() const noexcept {
  size_t b = 0;
  for (size_t x : expert_bytes) b += x * static_cast<size_t>(n_expert_used);
  return b;
}

size_t RouteTrace::max_expert_bytes() const noexcept {
  return expert_bytes.empty() ? 0 : *std::max_element(expert_bytes.begin(), expert_bytes.end());
}

Result<RouteTrace> parse_route_trace(std::string_view text, const std::string& name) {
  RouteTrace t;
  bool magic = false, model = false, header = false;
  std::set<std::tuple<int32_t, int32_t, int32_t, int32_t>> seen;  // finished groups
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty()) continue;
    if (!magic) {
      if (line != "# route_trace v1") return line_error(name, line_no, "not a route trace (expected '# route_trace v1')");
      magic = true;
      continue;
    }
    if (line.front() == '#') {
      const auto f = fields(line);
      if (f.count("n_layer") != 0) {
        if (model) return line_error(name, line_no, "a second model line");
        if (!parse_number(f.at("n_layer"), t.n_layer) || f.count("n_expert") == 0 ||
            !parse_number(f.at("n_expert"), t.n_expert) || f.count("n_expert_used") == 0 ||
            !parse_number(f.at("n_expert_used"), t.n_expert_used))
          return line_error(name, line_no, "model line needs n_layer=, n_expert=, n_expert_used= as integers");
        if (t.n_layer <= 0 || t.n_layer > 4096 || t.n_expert <= 0 || t.n_expert > 65536 || t.n_expert_used <= 0 ||
            t.n_expert_used > t.n_expert)
          return line_error(name, line_no, "implausible shape n_layer " + std::to_string(t.n_layer) + ", n_expert " +
                                               std::to_string(t.n_expert) + ", n_expert_used " +
                                               std::to_string(t.n_expert_used));
        t.arch = f.count("arch") != 0 ? f.at("arch") : "";
        t.expert_bytes.assign(static_cast<size_t>(t.n_layer), 0);
        model = true;
      } else if (f.count("layer") != 0 && f.count("expert_bytes") != 0) {
        int32_t l = -1;
        uint64_t b = 0;
        if (!model) return line_error(name, line_no, "layer line before the model line");
        if (!parse_number(f.at("layer"), l) || !parse_number(f.at("expert_bytes"), b) || l < 0 || l >= t.n_layer ||
            b == 0 || b > (uint64_t{1} << 34))
          return line_error(name, line_no, "bad layer line (layer in [0, n_layer), expert_bytes positive)");
        t.expert_bytes[static_cast<size_t>(l)] = static_cast<size_t>(b);
      }
      continue;
    }
    if (!header) {
      if (!model) return line_error(name, line_no, "rows before the model line");
      if (line.substr(0, 36) != "turn,phase,step,layer,slot,expert,we")
        return line_error(name, line_no, "expected the header turn,phase,step,layer,slot,expert,weight,...");
      header = true;
      continue;
    }
    std::string_view col[9];
    size_t n = 0;
    std::string_view rest = line;
    while (n < 9) {
      const size_t c = rest.find(',');
      col[n++] = rest.substr(0, c);
      if (c == std::string_view::npos) break;
      rest = rest.substr(c + 1);
    }
    if (n < 7) return line_error(name, line_no, "expected at least 7 comma-separated fields");
    int32_t turn, phase, step, layer, slot, expert;
    float weight;
    if (!parse_number(col[0], turn) || !parse_number(col[1], phase) || !parse_number(col[2], step) ||
        !parse_number(col[3], layer) || !parse_number(col[4], slot) || !parse_number(col[5], expert) ||
        !parse_number(col[6], weight))
      return line_error(name, line_no, "a field is not a number");
    if (phase != 0 && phase != 1) return line_error(name, line_no, "phase " + std::to_string(phase) + " not 0 or 1");
    if (layer < 0 || layer >= t.n_layer)
      return line_error(name, line_no, "layer " + std::to_string(layer) + " outside [0, " + std::to_string(t.n_layer) + ")");
    if (expert < 0 || expert >= t.n_expert)
      return line_error(name, line_no, "expert " + std::to_string(expert) + " outside [0, " + std::to_string(t.n_expert) + ")");
    if (slot < 0 || slot >= t.n_expert_used)
      return line_error(name, line_no, "slot " + std::to_string(slot) + " outside [0, n_expert_used)");
    if (turn < 0 || step < 0) return line_error(name, line_no, "negative turn or step");
    if (t.expert_bytes[static_cast<size_t>(layer)] == 0)
      return line_error(name, line_no, "layer " + std::to_string(layer) + " has no '# layer=' line with expert_bytes");
    RouteGroup* g = t.groups.empty() ? nullptr : &t.groups.back();
    if (g == nullptr || g->turn != turn || g->phase != phase || g->step != step || g->layer != layer) {
      if (g != nullptr) seen.insert({g->turn, g->phase, g->step, g->layer});
      if (seen.count({turn, phase, step, layer}) != 0)
        return line_error(name, line_no, "rows of (turn " + std::to_string(turn) + ", step " + std::to_string(step) +
                                             ", layer " + std::to_string(layer) + ") are not contiguous");
      t.groups.push_back(RouteGroup{turn, phase, step, layer, {}, {}});
      g = &t.groups.back();
    }
    if (std::find(g->experts.begin(), g->experts.end(), expert) == g->experts.end()) {
      g->experts.push_back(expert);
      g->weights.push_back(weight);
    }
  }
  if (!magic) return format_error(name + ": empty (expected '# route_trace v1')");
  if (!header) return format_error(name + ": no CSV header and rows");
  if (t.n_decode_lookups() == 0) return format_error(name + ": no decode rows (phase 1)");
  return t;
}

Result<RouteTrace> read_route_trace(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return io_error("cannot open route trace '" + path + "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return io_error("cannot read route trace '" + path + "'");
  return parse_route_trace(ss.str(), path);
}

}  // namespace les::trace
