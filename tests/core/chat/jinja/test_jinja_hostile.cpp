// Hostile and malformed templates: LES's Jinja engine answers each with a
// status, never a crash, a hang or unbounded memory (deep nesting, runaway
// loops, recursion, exploding strings and lists, self-referencing
// namespaces, random token soup, mutated and truncated real templates), and
// the things the C++ API promises beyond Jinja2's semantics: invalid UTF-8
// passes through unchanged, one Template renders on many threads at once.
#include <catch2/catch.hpp>

#include <dirent.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/chat/jinja/format.h"
#include "core/chat/jinja/template.h"

using les::StatusCode;
using les::jinja::RenderOptions;
using les::jinja::Template;
using les::jinja::Value;
using les::jinja::Variables;

namespace {

RenderOptions small_limits() {
  RenderOptions o;
  o.limits.max_steps = 100000;
  o.limits.max_output_bytes = 1 << 20;
  o.limits.max_call_depth = 50;
  return o;
}

// Parses and renders; the status (OK included).
les::Status run(const std::string& source, const RenderOptions& options = small_limits(), const Variables& vars = {},
                std::string* out = nullptr) {
  auto t = Template::parse(source);
  if (!t.ok()) return t.status();
  auto r = t->render(vars, options);
  if (!r.ok()) return r.status();
  if (out != nullptr) *out = *r;
  return les::Status();
}

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

Variables sample_vars() {
  auto messages = les::jinja::from_json(nlohmann::ordered_json::parse(
      R"([{"role": "system", "content": "s"}, {"role": "user", "content": "hi"},
          {"role": "assistant", "content": "yo", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}])"));
  REQUIRE(messages.ok());
  return {{"messages", *messages},
          {"x", Value::list({Value(int64_t{1}), Value(int64_t{2})})},
          {"add_generation_prompt", Value(true)},
          {"bos_token", Value("<s>")}};
}

std::vector<std::string> real_templates() {
  std::vector<std::string> out;
  const std::string dir = std::string(LES_TESTS_SOURCE_DIR) + "/core/chat/jinja/templates";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() <= 6 || n.compare(n.size() - 6, 6, ".jinja") != 0) continue;
      std::ifstream in(dir + "/" + n, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      out.push_back(ss.str());
    }
    closedir(d);
  }
  return out;
}

}  // namespace

TEST_CASE("deep nesting is an error, not a deep recursion", "[jinja][hostile]") {
  for (const std::string& src : {"{{ " + repeat("(", 5000) + "1" + repeat(")", 5000) + " }}",
                                 "{{ " + repeat("[", 5000) + repeat("]", 5000) + " }}",
                                 "{{ " + repeat("not ", 5000) + "x }}", "{{ " + repeat("- ", 5000) + "1 }}",
                                 "{{ " + repeat("x|", 3000) + "x }}", repeat("{% if true %}", 5000),
                                 "{{ a" + repeat(".b", 20000) + " }}", "{{ " + repeat("f(", 3000) + " }}",
                                 "{{ a" + repeat("[0]", 20000) + " }}", "{{ 1" + repeat(" + 1", 3000) + " }}",
                                 "{{ 2" + repeat(" ** 2", 3000) + " }}", "{{ x" + repeat(" is defined", 3000) + " }}",
                                 "{% filter " + repeat("trim|", 3000) + "trim %}{% endfilter %}"}) {
    const les::Status st = run(src);
    CHECK_FALSE(st.ok());
    CHECK(st.code() != StatusCode::internal);
  }
  // Long but flat expressions are fine: a list literal, a ~ chain, chained comparisons.
  std::string out;
  REQUIRE(run("{{ [" + repeat("1, ", 5000) + "1] | length }}", small_limits(), {}, &out).ok());
  CHECK(out == "5001");
  REQUIRE(run("{{ ('a'" + repeat(" ~ 'b'", 3000) + ") | length }}", small_limits(), {}, &out).ok());
  CHECK(out == "3001");
  REQUIRE(run("{{ 1" + repeat(" < 2", 3000) + " }}", small_limits(), {}, &out).ok());
  CHECK(out == "False");
}

TEST_CASE("limits end runaway renders with out_of_memory", "[jinja][hostile]") {
  const char* runaway[] = {
      "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
      "{{ 'x' * 100000000 }}",
      "{{ ('x' * 1000) * 100000 }}",
      "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
      "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
      "{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
      "{{ [1] * 100000000 }}",
      "{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}",
      "{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}",
      "{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}",
      "{% set ns = namespace(l=[]) %}{% for i in range(5000) %}{% set ns.l = [ns.l] %}{% endfor %}",
      "{% set ns = namespace(d={}) %}{% for i in range(5000) %}{% set ns.d = {'k': ns.d} %}{% endfor %}",
      "{% set ns = namespace(n=none) %}{% for i in range(5000) %}{% set ns.n = namespace(x=ns.n) %}{% endfor %}",
      "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",
      "{{ 'x' | indent(100000000) }}",
      "{{ 'ab' | replace('', 'x' * 900000) }}",
  };
  for (const char* src : runaway) {
    INFO(src);
    const les::Status st = run(src);
    CHECK(st.code() == StatusCode::out_of_memory);
  }
  // The default limits bound the output too.
  const les::Status st =
      run("{% for i in range(100000) %}{% for j in range(100000) %}{{ 'y' * 4096 }}{% endfor %}{% endfor %}",
          RenderOptions{});
  CHECK(st.code() == StatusCode::out_of_memory);
  // range() keeps Jinja2's sandbox bound (an OverflowError in Python).
  CHECK(run("{{ range(1000000000) | length }}").code() == StatusCode::invalid_argument);
}

TEST_CASE("recursion as deep as the limits allow fits a thread's stack", "[jinja][hostile]") {
  // The deepest legal template: macros calling themselves max_call_depth times, each
  // nesting statements and expressions; it ends with the limit's error, not a crash.
  std::string body = "{% macro r(n) %}" + repeat("{% if true %}", 150) + "{{ r(n + 1) }}" +
                     repeat("{% endif %}", 150) + "{% endmacro %}{{ r(0) }}";
  RenderOptions o;  // default limits
  les::Status st;
  std::thread th([&] { st = run(body, o); });
  th.join();
  CHECK(st.code() == StatusCode::out_of_memory);
  std::string expr = "{% macro r(n) %}{{ " + repeat("(", 90) + "r(n + 1)" + repeat(")", 90) + " }}{% endmacro %}{{ r(0) }}";
  std::thread th2([&] { st = run(expr, o); });
  th2.join();
  CHECK(st.code() == StatusCode::out_of_memory);
}

TEST_CASE("a namespace that holds itself is freed and never printed endlessly", "[jinja][hostile]") {
  std::string out;
  REQUIRE(run("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns.me.me.me is defined }}", small_limits(), {}, &out)
              .ok());
  CHECK(out == "True");
  const les::Status st = run("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}");
  CHECK(st.code() == StatusCode::unsupported);
  CHECK(run("{% set ns = namespace() %}{% set ns.l = [ns] %}{{ ns.l }}").code() == StatusCode::unsupported);
  // A macro kept past its scope is refused when called, not a dangling reference.
  const les::Status late = run(
      "{% set ns = namespace() %}{% for i in [1] %}{% macro m() %}{{ i }}{% endmacro %}{% set ns.m = m %}"
      "{% endfor %}{{ ns.m() }}");
  CHECK(late.code() == StatusCode::unsupported);
}

TEST_CASE("random token soup never crashes", "[jinja][hostile]") {
  static const char* kTokens[] = {
      "{{", "}}", "{%", "%}", "{#", "#}", "{%-", "-%}", "{{-", "-}}", " if ", " for ", " in ", " endif ", " endfor ",
      " else ", " elif ", " set ", " macro ", " endmacro ", " call ", " endcall ", " filter ", " endfilter ",
      " raw ", " endraw ", " with ", " endwith ", " break ", " continue ", " recursive ", "(", ")", "[", "]", "{",
      "}", "|", "~", "+", "-", "*", "**", "/", "//", "%", "=", "==", "!=", "<", ">=", ",", ":", ".", " is ",
      " not ", " and ", " or ", "x", "y", "ns", "loop", "caller", "messages", "'s'", "\"t\"", "'\\u00e9\\x41'",
      "1", "2.5", "0x1f", "-1", " true ", " none ", "namespace(", "range(", "dict(", "raise_exception(",
      "tojson", "trim", "items()", "length", "map(attribute='a')", "selectattr('role')", "join(',')", "string",
      "default", ".strip()", ".split()", "[::-1]", "[1:]", "\n", " ", "\t", "\xc3\xa9", "\xff", "\xe2\x80",
      "{% set ns = namespace(a=1) %}", "{% for m in messages %}", "{{ m.content }}", "{{ loop.index }}"};
  std::mt19937 rng(1234);
  std::uniform_int_distribution<size_t> pick(0, std::size(kTokens) - 1), len(1, 40);
  const Variables vars = sample_vars();
  size_t rendered = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string src;
    for (size_t n = len(rng); n > 0; --n) src += kTokens[pick(rng)];
    INFO(src);
    std::string out;
    const les::Status st = run(src, small_limits(), vars, &out);
    CHECK(st.code() != StatusCode::internal);
    rendered += st.ok();
  }
  CHECK(rendered > 100);  // the soup is not all syntax errors
}

TEST_CASE("mutated and truncated real templates never crash", "[jinja][hostile]") {
  const std::vector<std::string> sources = real_templates();
  REQUIRE(sources.size() >= 56);
  const Variables vars = sample_vars();
  std::mt19937 rng(99);
  size_t ok = 0, total = 0;
  for (const std::string& src : sources) {
    for (int m = 0; m < 12; ++m) {
      std::string s = src;
      std::uniform_int_distribution<size_t> at(0, s.size() - 1);
      const size_t a = at(rng), b = std::min(s.size(), a + 1 + at(rng) % 64);
      switch (m % 4) {
        case 0: s.erase(a, b - a); break;                          // delete a span
        case 1: s.insert(at(rng), s.substr(a, b - a)); break;      // duplicate one
        case 2: s.resize(a); break;                                 // truncate
        default: s[a] = static_cast<char>(rng() & 0xFF); break;     // flip a byte
      }
      const les::Status st = run(s, small_limits(), vars);
      CHECK(st.code() != StatusCode::internal);
      ok += st.ok();
      ++total;
    }
  }
  CHECK(total == sources.size() * 12);
  CHECK(ok > 0);
}

TEST_CASE("invalid UTF-8 passes through unchanged", "[jinja]") {
  std::string out;
  const Variables vars = {{"x", Value(std::string("a\xff" "b"))}};
  REQUIRE(run("{{ x }}|{{ x | length }}|{{ x | upper }}|{{ x[::-1] }}|{{ x | tojson }}", small_limits(), vars, &out)
              .ok());
  CHECK(out == "a\xff" "b|3|A\xff" "B|b\xff" "a|\"a\xff" "b\"");
}

TEST_CASE("one template renders on several threads at once", "[jinja]") {
  const Variables vars = sample_vars();
  les::Result<Template> t = les::internal_error("no template renders the sample");
  les::Result<std::string> first = les::internal_error("none");
  for (const std::string& src : real_templates()) {  // the first real template that renders the sample
    t = Template::parse(src);
    if (!t.ok()) continue;
    first = t->render(vars);
    if (first.ok() && first->size() > 100) break;
  }
  REQUIRE(first.ok());
  std::vector<int> same(4, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      for (int i = 0; i < 50; ++i) {
        auto r = t->render(vars);
        same[static_cast<size_t>(k)] += r.ok() && *r == *first;
      }
    });
  for (auto& th : threads) th.join();
  for (int s : same) CHECK(s == 50);
}
