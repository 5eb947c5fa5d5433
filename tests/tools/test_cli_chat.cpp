// `les chat` and `les run --chat/--parse-special/--print-prompt` end to end on
// the synthetic qwen3moe fixture (ChatML control tokens, no template in the
// file: the chatml fallback) and on copies that carry a template (Qwen3's
// own, rendered by LES's Jinja engine; one LES refuses).
#include <signal.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/child_process.h"
#include "support/cli_tool.h"
#include "support/fixtures.h"
#include "support/gguf_copy.h"

using les::test::RunResult;
using les::test::run_les;
using les::test::sh_quote;

namespace {

constexpr const char* kModel = "synthetic/qwen3moe-F16.gguf";

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = les::test::temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace

TEST_CASE("les run --chat templates the prompt; prompt tokens counts the templated prompt", "[cli][chat]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const std::string base = "run -m " + sh_quote(model) + " --temp 0 -n 4 ";
  const RunResult plain = run_les(base + "-p Hello");
  REQUIRE(plain.exit_code == 0);
  CHECK_THAT(plain.err, Catch::Contains("prompt tokens 3,"));  // no BOS: the qwen vocabulary adds none
  const RunResult chat = run_les(base + "--chat -p Hello");
  REQUIRE(chat.exit_code == 0);
  // <|im_start|> us er \n H ello <|im_end|> \n <|im_start|> ass ist ant \n: 14 tokens in this vocabulary.
  CHECK_THAT(chat.err, Catch::Contains("chat template chatml (fallback: the model has none)"));
  CHECK_THAT(chat.err, Catch::Contains("prompt tokens 14,"));
  CHECK(count(chat.err, "has no chat template") == 1);  // warned once
  // Before the model line, as les chat prints it.
  CHECK(chat.err.find("has no chat template") < chat.err.find("les run: qwen3moe"));
  const RunResult sys = run_les(base + "--chat --system 'Be brief.' -p Hello");
  CHECK(sys.exit_code == 0);
  CHECK_THAT(sys.err, !Catch::Contains("prompt tokens 14,"));
  // --parse-special on the raw ChatML text gives the same prompt.
  const RunResult raw = run_les(base + "--parse-special -p " +
                                sh_quote("<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"));
  CHECK_THAT(raw.err, Catch::Contains("prompt tokens 14,"));
  CHECK(raw.out == chat.out);
  // Template by name, errors.
  CHECK(run_les(base + "--chat --chat-template llama3 -p Hello").exit_code == 0);
  const RunResult bad = run_les(base + "--chat --chat-template nosuch -p Hello");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("nosuch") && Catch::Contains("chatml"));
  CHECK(run_les(base + "--system x -p Hello").exit_code == 2);  // --system needs --chat

  // A model template using a construct LES's Jinja engine does not implement: the error names it
  // and --chat-template; a name still works.
  const std::string odd = les::test::temp_dir() + "/chat-odd.gguf";
  les::test::copy_gguf_with_strings(model, odd, {{"tokenizer.chat_template", "{{ messages | xmlattr }}"}});
  const RunResult unknown = run_les("run -m " + sh_quote(odd) + " --chat -n 2 -p Hello");
  CHECK(unknown.exit_code == 1);
  CHECK_THAT(unknown.err, Catch::Contains("filter 'xmlattr'") && Catch::Contains("--chat-template NAME"));
  CHECK(run_les("run -m " + sh_quote(odd) + " --chat --chat-template chatml -n 2 -p Hello").exit_code == 0);
}

TEST_CASE("les run --chat --print-prompt shows the model's template rendered as Jinja2 renders it", "[cli][chat]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  // Qwen3's own template (tests/core/chat/jinja) in the fixture; Jinja2's renderings are committed there.
  std::ifstream in(std::string(LES_TESTS_SOURCE_DIR) + "/core/chat/jinja/templates/Qwen-Qwen3-0.6B.jinja");
  std::stringstream src;
  src << in.rdbuf();
  REQUIRE_FALSE(src.str().empty());
  const std::string qwen3 = les::test::temp_dir() + "/chat-qwen3.gguf";
  les::test::copy_gguf_with_strings(model, qwen3, {{"tokenizer.chat_template", src.str()}});
  std::ifstream ein(std::string(LES_TESTS_SOURCE_DIR) + "/core/chat/jinja/expected/Qwen-Qwen3-0.6B.json");
  const auto expected = nlohmann::json::parse(ein)["cases"];
  const std::string base = "run -m " + sh_quote(qwen3) + " --chat --print-prompt ";
  const RunResult user = run_les(base + "-p " + sh_quote("Hello! What can you do?"));
  REQUIRE(user.exit_code == 0);
  CHECK(user.out == expected["user_only"]["output"].get<std::string>());
  CHECK_THAT(user.err, Catch::Contains("chat template jinja (the model's tokenizer.chat_template)"));
  // Extra template variables.
  const RunResult off = run_les(base + "--chat-template-kwargs '{\"enable_thinking\": false}' -p 'Hi there'");
  REQUIRE(off.exit_code == 0);
  CHECK(off.out == expected["thinking_off"]["output"].get<std::string>());
  CHECK(run_les(base + "--chat-template-kwargs '[1]' -p Hi").exit_code == 2);
  CHECK(run_les(base + "--chat-template-kwargs '{\"messages\": []}' -p Hi").exit_code == 2);
  CHECK(run_les("run -m " + sh_quote(qwen3) + " --chat-template-kwargs '{}' -p Hi").exit_code == 2);  // needs --chat
  // The model generates from that text: its prompt token count is the rendered text's.
  const RunResult gen = run_les("run -m " + sh_quote(qwen3) + " --chat --temp 0 -n 2 -p " +
                                sh_quote("Hello! What can you do?"));
  REQUIRE(gen.exit_code == 0);
  const RunResult raw = run_les("run -m " + sh_quote(model) + " --parse-special --temp 0 -n 2 -p " +
                                sh_quote(expected["user_only"]["output"].get<std::string>()));
  REQUIRE(raw.exit_code == 0);
  CHECK(gen.out == raw.out);
  // Without --chat, --print-prompt shows the raw prompt.
  CHECK(run_les("run -m " + sh_quote(qwen3) + " --print-prompt -p 'as is'").out == "as is");
}

TEST_CASE("les chat: turns, /reset, /stats, end of input; the context is reused across turns", "[cli][chat]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const std::string input = write_temp("chat-in.txt", "Hello\nHow are you?\n/stats\n/reset\nHello\n");
  const RunResult r = run_les("chat -m " + sh_quote(model) + " --temp 0 -n 5 --ignore-eos < " + sh_quote(input));
  REQUIRE(r.exit_code == 0);
  CHECK(count(r.out, "\n") == 3);  // three answers, one line each
  CHECK_THAT(r.err, Catch::Contains("chat template chatml"));
  CHECK_THAT(r.err, Catch::Contains("conversation reset"));
  // /stats after the second turn: its prompt reused the first turn's tokens.
  CHECK_THAT(r.err, Catch::Contains("les chat: prompt tokens"));
  const size_t at = r.err.find("reused by the last turn");
  REQUIRE(at != std::string::npos);
  CHECK(r.err.compare(at - 3, 3, "(0 ") != 0);
  // Greedy: the answer after /reset equals the first answer.
  const size_t nl = r.out.find('\n');
  const std::string first = r.out.substr(0, nl);
  const size_t last_start = r.out.rfind('\n', r.out.size() - 2) + 1;
  CHECK(r.out.substr(last_start, r.out.size() - 1 - last_start) == first);
  // Bad arguments.
  CHECK(run_les("chat -m " + sh_quote(model) + " --chat-template nosuch < /dev/null").exit_code == 2);
  CHECK(run_les("chat -m /nonexistent.gguf < /dev/null").exit_code == 1);
}

TEST_CASE("les chat: an unknown /command is an error listing the commands; // sends a leading /", "[cli][chat]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const std::string input = write_temp("chat-slash.txt", "/stat\n/\n//etc\n");
  const RunResult r = run_les("chat -m " + sh_quote(model) + " --temp 0 -n 3 --ignore-eos < " + sh_quote(input));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("unknown command '/stat'; commands: /reset, /stats, /exit"));
  CHECK_THAT(r.err, Catch::Contains("unknown command '/'"));
  CHECK_THAT(r.err, Catch::Contains("//"));
  CHECK(count(r.out, "\n") == 1);  // only "//etc" reached the model
  // It was sent as "/etc": the answer equals one templated user turn "/etc" through les run.
  const RunResult one = run_les("run -m " + sh_quote(model) + " --chat --temp 0 -n 3 --ignore-eos -p /etc");
  REQUIRE(one.exit_code == 0);
  CHECK(r.out.substr(0, r.out.size() - 1) == one.out.substr(0, one.out.find_last_not_of('\n') + 1));
}

TEST_CASE("les chat: commands' trailing blanks are ignored; blank lines are skipped", "[cli][chat]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const std::string input = write_temp("chat-blank.txt", "/stats \t\n   \n\t\n/reset   \r\n/quit  \nnever sent\n");
  const RunResult r = run_les("chat -m " + sh_quote(model) + " --temp 0 -n 3 --ignore-eos < " + sh_quote(input));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("les chat: no answer yet") && Catch::Contains("les chat: conversation reset"));
  CHECK_THAT(r.err, !Catch::Contains("unknown command"));
  CHECK(r.out.empty());  // nothing reached the model: blank lines skipped, /quit ended before the last line
}

TEST_CASE("les chat: a first message longer than n_ctx does not fit; a long conversation suggests /reset",
          "[cli][chat]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  std::string words;
  for (int i = 0; i < 100; ++i) words += "word ";
  const std::string alone = write_temp("chat-long.txt", words + "\n");
  const RunResult r = run_les("chat -m " + sh_quote(model) + " --ctx 40 -n 3 < " + sh_quote(alone));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("this message (") && Catch::Contains("does not fit n_ctx 40") &&
                        Catch::Contains("larger --ctx") && !Catch::Contains("/reset to start over"));
  // After one answer, a message that fits alone but not after the first turn: /reset helps.
  const std::string two = write_temp("chat-two.txt", "hi\n" + words.substr(0, 30 * 5) + "\n");
  const RunResult t = run_les("chat -m " + sh_quote(model) + " --ctx 48 -n 4 --temp 0 --ignore-eos < " +
                              sh_quote(two));
  REQUIRE(t.exit_code == 0);
  CHECK_THAT(t.err, Catch::Contains("no longer fits n_ctx 48; /reset to start over"));
}

TEST_CASE("les chat: Ctrl-C stops the answer, not the conversation", "[cli][chat]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  const std::string dir = les::test::temp_dir();
  // Feed one long answer, interrupt it once text has appeared, then end the input.
  const std::string script = "fifo=" + sh_quote(dir + "/chat-fifo") + "; rm -f \"$fifo\"; mkfifo \"$fifo\"; " +
                             sh_quote(les::test::les_binary()) + " chat -m " + sh_quote(model) +
                             " --temp 0 --ignore-eos -n 100000 < \"$fifo\" > " + sh_quote(dir + "/chat-sig.out") +
                             " 2> " + sh_quote(dir + "/chat-sig.err") +
                             " & pid=$!; exec 3>\"$fifo\"; echo Hello >&3; "
                             "for i in $(seq 1 600); do [ -s " + sh_quote(dir + "/chat-sig.out") +
                             " ] && break; sleep 0.1; done; kill -INT $pid; sleep 0.5; exec 3>&-; wait $pid";
  const int status = std::system(("sh -c " + sh_quote(script)).c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_THAT(les::test::read_file(dir + "/chat-sig.err"), Catch::Contains("answer stopped"));
}

TEST_CASE("les chat: a Ctrl-C arriving as an answer ends never stops the next answer", "[cli][chat][signal]") {
  LES_REQUIRE_FIXTURE(model, kModel);
  // One-token answers, and stdout starts full: the first answer's only token
  // blocks in its write, after the generation checked for a stop and before
  // it returns. A Ctrl-C then belongs to that answer (before: it became a
  // pending les_context_cancel() that stopped the next answer before its
  // first token, "stop: cancelled", generated 0).
  les::test::ChildOptions opts;
  opts.stdin_pipe = true;
  opts.stdout_full = true;
  les::test::ChildProcess child({les::test::les_binary(), "chat", "-m", model, "--temp", "0", "-n", "1",
                                 "--ignore-eos", "--stats"},
                                opts);
  child.write_stdin("Hello\n");
  REQUIRE(child.wait_blocked_writing_stdout(120));
  child.signal(SIGINT);  // pending at once: handled before the write can finish
  REQUIRE(child.wait_for_stdout(1, 120));  // reading releases the write
  REQUIRE(child.wait_for_stderr("generated 1 ", 120));
  child.write_stdin("How are you?\n");
  child.close_stdin();
  REQUIRE(child.wait(120));
  INFO("stderr: " << child.err());
  CHECK(child.term_signal() == 0);
  CHECK(child.exit_code() == 0);
  CHECK(count(child.err(), "prompt tokens") == 2);
  CHECK(count(child.err(), "generated 1 (stop: n_predict)") == 2);  // both answers whole
  CHECK(child.err().find("answer stopped") == std::string::npos);
  CHECK(count(child.out(), "\n") == 2);
}
