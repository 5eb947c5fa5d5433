// `les serve`: what a request body's JSON may cost before it is parsed.
//
// nlohmann::json builds one heap node per value: 20 MB of unclosed `[`
// became 20 million nested arrays, 2.14 GB at the peak and 1.9 GB still held
// after the 400 reply, and three such bodies at once had the server
// OOM-killed (issue 36, defect 1). Three guards make the parse's memory a
// function of the body's size:
//  - check_json_shape(): one pass over the bytes (strings and their escapes
//    skipped, nothing allocated) refuses nesting deeper than max_depth and
//    more than max_nodes values before the parser sees the body; a body that
//    passes parses into at most max_nodes nodes plus its strings' bytes;
//  - ParseGate: at most `slots` bodies parse at once (the HTTP threads wait
//    their turn), so the peak is bounded by slots parses, not one per thread;
//  - return_freed_memory(): after a large request, freed heap goes back to
//    the system (glibc keeps small-block arenas otherwise).
//
// With these, a body within the limit costs the server at most
// kConcurrentParses x (its bytes + max_nodes nodes of nlohmann::json) while it
// parses; test: tools_test_cli_serve_limits ("nested JSON bodies").
//
// Thread-safety: check_json_shape and return_freed_memory are thread-safe;
// ParseGate is shared by the HTTP threads (a mutex and a condition variable).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace les::tool {

// Bodies parsed at once (the HTTP threads beyond it wait their turn): the
// machines les serve targets have few cores, and a parse within the limits
// takes milliseconds.
inline constexpr int kConcurrentParses = 2;

// Rejected before parsing: deeper nesting or more values than this.
struct JsonShapeLimits {
  int max_depth = 64;             // arrays and objects inside one another
  uint64_t max_nodes = 1u << 16;  // values (array elements, object members, scalars)
};

// The nodes a completion request of a context of n_ctx tokens may need: a
// prompt of token ids (one value each) or a long conversation, with room to
// spare: max(65536, 4 x n_ctx).
JsonShapeLimits request_json_limits(int32_t n_ctx);

// "" when `text`'s structure stays within `limits`; else the message for the
// client ("the request body nests JSON arrays and objects more than 64 levels
// deep (at byte 64); at most 64 are accepted", "... holds more than N JSON
// values ..."). One pass, nothing allocated; brackets, commas and colons
// inside strings (escapes included) do not count. Malformed JSON that stays
// within the limits passes: the parser names its error.
std::string check_json_shape(std::string_view text, const JsonShapeLimits& limits);

// At most `slots` parses at once. Usage: { ParseGate::Ticket t(gate); parse(); }
class ParseGate {
 public:
  explicit ParseGate(int slots) : free_(slots > 0 ? slots : 1) {}
  ParseGate(const ParseGate&) = delete;
  ParseGate& operator=(const ParseGate&) = delete;

  class Ticket {
   public:
    explicit Ticket(ParseGate& g) : g_(g) {
      std::unique_lock<std::mutex> lk(g_.mu_);
      g_.cv_.wait(lk, [&] { return g_.free_ > 0; });
      --g_.free_;
    }
    ~Ticket() {
      {
        std::lock_guard<std::mutex> lk(g_.mu_);
        ++g_.free_;
      }
      g_.cv_.notify_one();
    }
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

   private:
    ParseGate& g_;
  };

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
};

// Returns the heap's free memory to the system (glibc's malloc_trim; nothing
// elsewhere). Costs a pass over the heap: call it after large requests only.
void return_freed_memory();

}  // namespace les::tool
