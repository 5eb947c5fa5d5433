// LineReader (line_reader.h): whole lines from stdin, edited in
// non-canonical mode when stdin is a terminal.
#include "line_reader.h"

#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace les::tool {
namespace {

constexpr const char* kPasteOn = "\x1b[?2004h";   // ask the terminal to bracket pastes
constexpr const char* kPasteOff = "\x1b[?2004l";  // and stop

// The terminal's mode before read_line() changed it, for the handlers below.
termios g_saved{};
volatile sig_atomic_t g_raw = 0;  // 1 while the terminal is in our mode

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // the terminal is gone: nothing to show it
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void write_str(const std::string& s) { write_all(STDERR_FILENO, s.data(), s.size()); }

// Async-signal-safe: tcsetattr and write are.
void restore_terminal() {
  if (!g_raw) return;
  ::tcsetattr(STDIN_FILENO, TCSANOW, &g_saved);
  write_all(STDERR_FILENO, kPasteOff, std::strlen(kPasteOff));
  g_raw = 0;
}

// SIGTERM / SIGHUP / SIGQUIT while waiting for a line: the terminal gets its
// mode back, then the signal does what it would have (SA_RESETHAND made the
// disposition the default again; the raised signal is delivered on return).
extern "C" void on_fatal_signal(int sig) {
  const int saved_errno = errno;
  restore_terminal();
  ::raise(sig);
  errno = saved_errno;
}

bool enter_raw() {
  termios raw = g_saved;
  raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO | ISIG | IEXTEN));
  raw.c_iflag |= ICRNL;  // Enter (\r) arrives as \n
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  if (::tcsetattr(STDIN_FILENO, TCSANOW, &raw) != 0) return false;
  g_raw = 1;
  return true;
}

// Asks the terminal to bracket pastes (after the prompt: the prompt shows
// right after the last output, and only once the mode is ours).
void paste_on() { write_all(STDERR_FILENO, kPasteOn, std::strlen(kPasteOn)); }

// The byte length of the last UTF-8 character of `s` (s not empty).
size_t last_char_len(const std::string& s) {
  size_t n = 1;
  while (n < s.size() && n < 4 && (static_cast<unsigned char>(s[s.size() - n]) & 0xC0) == 0x80) ++n;
  return n;
}

// The decoding state of escape sequences, kept across reads.
enum class Esc { kNone, kEsc, kCsi, kSs3 };

}  // namespace

LineReader::LineReader() : tty_(::isatty(STDIN_FILENO) == 1) {}

bool LineReader::read_line(const char* prompt, std::string& line) {
  line.clear();
  if (tty_) {
    if (::tcgetattr(STDIN_FILENO, &g_saved) == 0) return read_terminal(prompt, line);
    tty_ = false;  // not usable as a terminal after all
  }
  std::fputs(prompt, stderr);
  std::fflush(stderr);
  return static_cast<bool>(std::getline(std::cin, line));
}

bool LineReader::read_terminal(const char* prompt, std::string& line) {
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  const int fatal[] = {SIGTERM, SIGHUP, SIGQUIT};
  struct sigaction old[3];
  for (int i = 0; i < 3; ++i) ::sigaction(fatal[i], &sa, &old[i]);
  std::fflush(stderr);
  std::fflush(stdout);
  const std::string shown_prompt = prompt;
  bool ok = enter_raw();
  if (!ok) {  // cannot change the mode: read as canonical mode gives it
    for (int i = 0; i < 3; ++i) ::sigaction(fatal[i], &old[i], nullptr);
    write_str(shown_prompt);
    return static_cast<bool>(std::getline(std::cin, line));
  }
  write_str(shown_prompt);
  paste_on();
  size_t hist = history_.size();  // history_.size(): the line being typed
  std::string typed;              // the line being typed, while Up/Down show the history
  bool paste = false, done = false, eof = false;
  Esc esc = Esc::kNone;
  std::string csi;  // an escape sequence's parameters
  char buf[4096];
  auto redraw = [&](std::string& echo) { echo += "\r\x1b[K" + shown_prompt + line; };
  while (!done) {
    ssize_t n = 0;
    if (!pending_.empty()) {  // what the last call read past its line's end
      n = static_cast<ssize_t>(std::min(pending_.size(), sizeof buf));
      std::memcpy(buf, pending_.data(), static_cast<size_t>(n));
      pending_.erase(0, static_cast<size_t>(n));
    } else {
      n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        eof = true;
        break;
      }
    }
    std::string echo;
    ssize_t i = 0;
    for (; i < n && !done; ++i) {
      const unsigned char c = static_cast<unsigned char>(buf[i]);
      if (esc == Esc::kEsc) {  // ESC [ ... (CSI), ESC O x (SS3: arrows in application mode), else ESC x
        esc = c == '[' ? Esc::kCsi : c == 'O' ? Esc::kSs3 : Esc::kNone;
        csi.clear();
        continue;
      }
      if (esc == Esc::kCsi || esc == Esc::kSs3) {
        if (c >= 0x40 && c <= 0x7E) {  // the final byte
          const bool csi_seq = esc == Esc::kCsi;
          esc = Esc::kNone;
          if (csi_seq && c == '~' && csi == "200") paste = true;
          else if (csi_seq && c == '~' && csi == "201") paste = false;
          else if ((c == 'A' || c == 'B') && csi.empty() && !history_.empty()) {
            if (hist == history_.size()) typed = line;
            if (c == 'A' && hist > 0) --hist;
            else if (c == 'B' && hist < history_.size()) ++hist;
            line = hist == history_.size() ? typed : history_[hist];
            redraw(echo);
          }
        } else if (csi.size() < 16) {
          csi.push_back(static_cast<char>(c));
        }
        continue;
      }
      if (c == '\n' || c == '\r') {
        if (paste) {
          line.push_back('\n');
          echo += "\n";
        } else {
          echo += "\n";
          done = true;
        }
      } else if (c == 0x7F || c == 0x08) {  // Backspace
        if (!line.empty()) {
          line.resize(line.size() - last_char_len(line));
          echo += "\b \b";
        }
      } else if (c == 0x15) {  // Ctrl-U
        line.clear();
        redraw(echo);
      } else if (c == 0x17) {  // Ctrl-W: blanks, then the word before them
        size_t end = line.size();
        while (end > 0 && (line[end - 1] == ' ' || line[end - 1] == '\t')) --end;
        while (end > 0 && line[end - 1] != ' ' && line[end - 1] != '\t') --end;
        line.resize(end);
        redraw(echo);
      } else if (c == 0x04) {  // Ctrl-D: end of input on an empty line
        if (line.empty()) {
          eof = true;
          done = true;
        }
      } else if (c == 0x03 || c == 0x1A) {  // Ctrl-C, Ctrl-Z: the signal, in the terminal's own mode
        write_str(echo + (c == 0x03 ? "^C\n" : "^Z\n"));
        echo.clear();
        restore_terminal();
        ::raise(c == 0x03 ? SIGINT : SIGTSTP);  // SIGINT's default ends les chat, as before
        // Still running (resumed, or SIGINT handled): the line starts over.
        if (c == 0x03) line.clear();
        if (!enter_raw()) {
          eof = done = true;
          continue;
        }
        paste_on();
        redraw(echo);
      } else if (c == 0x1B) {
        esc = Esc::kEsc;
      } else if (c >= 0x20 || c == '\t') {
        line.push_back(static_cast<char>(c));
        echo.push_back(static_cast<char>(c));
      }
    }
    // The line ended inside this read: the rest is the next line's (kept in
    // front of what is still pending).
    if (i < n) pending_.insert(0, buf + i, static_cast<size_t>(n - i));
    write_str(echo);
  }
  restore_terminal();
  for (int i = 0; i < 3; ++i) ::sigaction(fatal[i], &old[i], nullptr);
  if (eof) {
    line.clear();
    return false;
  }
  if (line.find_first_not_of(" \t\n") != std::string::npos &&
      (history_.empty() || history_.back() != line))
    history_.push_back(line);
  return true;
}

}  // namespace les::tool
