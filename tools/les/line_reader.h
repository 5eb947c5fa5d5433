// Reading `les chat`'s messages from stdin, one line at a time, whole at any
// length.
//
// A terminal in canonical mode (the default) keeps at most 4,095 bytes of a
// line and drops the rest silently, so a long typed or pasted message would
// arrive cut. When stdin is a terminal, LineReader therefore switches it to
// non-canonical mode (no echo, no signal keys) while it waits for a line and
// does the editing itself:
//   Enter ends the line; Backspace erases the last character (UTF-8 aware);
//   Ctrl-U erases the line, Ctrl-W the last word; Up/Down walk the lines
//   read before (the history, this session's only); a bracketed paste
//   (terminals wrap a paste in ESC[200~ ... ESC[201~ once asked to) keeps
//   its newlines in the line, so a multi-line paste is one message;
//   Ctrl-D on an empty line is end of input; Ctrl-C and Ctrl-Z act as they do
//   in canonical mode (SIGINT / SIGTSTP to this process, the terminal's mode
//   restored first).
// The echo and the prompt go to stderr. The terminal's mode is restored
// before read_line() returns, and by a handler of SIGTERM, SIGHUP and SIGQUIT
// (which then re-raises the signal) while it waits. Bytes that arrive after
// a line's end in the same read (typed ahead, a paste the terminal did not
// bracket) are kept for the next read_line(), never dropped. Erasing across a wrapped
// screen row moves the cursor only within the row (the line itself is right).
// When stdin is not a terminal, lines are read as they are (std::getline;
// no length limit there).
//
// Thread-safety: one LineReader per process, used from one thread.
#pragma once

#include <string>
#include <vector>

namespace les::tool {

class LineReader {
 public:
  // For stdin (fd 0).
  LineReader();

  // Prints `prompt` to stderr and reads the next line into `line` (without
  // its end of line). False at end of input (Ctrl-D, a closed stdin or
  // terminal, a read error). A non-blank line read from a terminal joins the
  // history.
  bool read_line(const char* prompt, std::string& line);

  // Whether stdin is a terminal (the editing above is in effect).
  bool interactive() const noexcept { return tty_; }

 private:
  bool read_terminal(const char* prompt, std::string& line);

  bool tty_ = false;
  std::vector<std::string> history_;
  std::string pending_;  // bytes read after the end of the last line (typed ahead, an unbracketed paste)
};

}  // namespace les::tool
