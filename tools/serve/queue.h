// `les serve`: the queue in front of the one context. A request takes a
// place (a Turn) at the back, waits until it is at the front, generates, and
// gives the place up; places are served first come, first served. The queue
// is bounded: one place for the request that runs and `max_waiting` behind
// it; a request that finds every place taken is refused at once (the route
// answers 503 with Retry-After) instead of holding an HTTP worker thread
// for an unbounded time. This bound is what keeps HTTP threads free for
// /health and /v1/models (the server's pool has more threads than places).
//
// Thread-safety: every member is thread-safe. A Turn belongs to one request
// (one thread at a time).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace les::tool {

class RequestQueue;

// A place in the queue; destroying it gives the place up (from any state:
// waiting, at the front, running), so a request that ends in any way, an
// exception included, never blocks the ones behind it.
class Turn {
 public:
  ~Turn();
  Turn(const Turn&) = delete;
  Turn& operator=(const Turn&) = delete;

 private:
  friend class RequestQueue;
  Turn(RequestQueue* queue, uint64_t id) : queue_(queue), id_(id) {}
  RequestQueue* queue_;
  uint64_t id_;
};

class RequestQueue {
 public:
  // `max_waiting` >= 0: places behind the running request.
  explicit RequestQueue(int max_waiting) : max_waiting_(max_waiting) {}

  enum class Refusal { kNone, kFull, kStopping };

  // A place at the back, or nullptr with *why kFull (every place taken) or
  // kStopping (after stop()).
  std::shared_ptr<Turn> enter(Refusal* why);

  enum class Wait { kReady, kClientGone, kStopping };

  // Waits until `turn` is at the front (kReady: the caller runs now, and
  // counts as running until the turn is destroyed), polling `alive` every
  // 50 ms (false: kClientGone), or until stop() (kStopping). After kReady,
  // `running()` is true until the Turn goes.
  Wait wait(Turn& turn, const std::function<bool()>& alive);

  // Refuses every later enter() and wakes every waiting request (kStopping);
  // the running one is stopped by its owner (ServeEngine::shutdown).
  void stop();

  struct Counts {
    int running = 0;      // 0 or 1
    int waiting = 0;      // places taken behind it (or all of them, between two runs)
    int max_waiting = 0;
  };
  Counts counts() const;

 private:
  friend class Turn;
  void leave(uint64_t id);

  const int max_waiting_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<uint64_t> order_;  // ids of the places taken, front first
  bool front_running_ = false;  // the front's wait() returned kReady
  bool stopping_ = false;
  uint64_t next_id_ = 0;
};

}  // namespace les::tool
