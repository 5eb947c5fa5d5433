// See queue.h.
#include "serve/queue.h"

#include <algorithm>
#include <chrono>

namespace les::tool {

Turn::~Turn() { queue_->leave(id_); }

std::shared_ptr<Turn> RequestQueue::enter(Refusal* why) {
  std::lock_guard<std::mutex> lock(mu_);
  *why = stopping_ ? Refusal::kStopping
         : order_.size() >= static_cast<size_t>(max_waiting_) + 1 ? Refusal::kFull
                                                                  : Refusal::kNone;
  if (*why != Refusal::kNone) return nullptr;
  const uint64_t id = next_id_++;
  order_.push_back(id);
  return std::shared_ptr<Turn>(new Turn(this, id));
}

RequestQueue::Wait RequestQueue::wait(Turn& turn, const std::function<bool()>& alive) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (stopping_) return Wait::kStopping;
    if (!order_.empty() && order_.front() == turn.id_ && !front_running_) {
      front_running_ = true;
      return Wait::kReady;
    }
    lock.unlock();
    const bool here = alive();  // outside the lock: it may do a system call
    lock.lock();
    if (!here) return Wait::kClientGone;
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

void RequestQueue::leave(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = std::find(order_.begin(), order_.end(), id);
    if (it == order_.end()) return;
    if (it == order_.begin()) front_running_ = false;
    order_.erase(it);
  }
  cv_.notify_all();
}

void RequestQueue::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
}

RequestQueue::Counts RequestQueue::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  const int running = front_running_ ? 1 : 0;
  return {running, static_cast<int>(order_.size()) - running, max_waiting_};
}

}  // namespace les::tool
