#include "io/read_flow.h"

#include <algorithm>
#include <utility>

#include "io/io_options_check.h"

namespace les::io {

std::optional<FinishedRead> route_attempt(ReadJob& job, int64_t result, size_t asked, bool cancelling,
                                          bool* issue_next) {
  FinishedRead fin;
  fin.file = job.request.file;
  switch (apply_attempt_result(job, result, asked, &fin.completion)) {
    case AttemptOutcome::finished: return fin;
    case AttemptOutcome::advance:
      if (cancelling) break;
      *issue_next = true;
      return std::nullopt;
    case AttemptOutcome::retry:
      if (cancelling) break;
      *issue_next = false;
      return std::nullopt;
  }
  return FinishedRead{cancelled_completion(job), job.request.file};
}

size_t hand_out_finished(std::vector<FinishedRead>& finished, FileTable& files, size_t* outstanding,
                         std::vector<ReadCompletion>& out) {
  const size_t n = finished.size();
  for (FinishedRead& f : finished) {
    if (OpenFile* of = files.find(f.file)) --of->outstanding;
    out.push_back(std::move(f.completion));
  }
  finished.clear();
  *outstanding -= n;
  return n;
}

void reap_finished(std::unique_lock<std::mutex>& lock, std::condition_variable& done_cv,
                   std::vector<FinishedRead>& finished, FileTable& files, size_t* outstanding,
                   size_t min_complete, std::chrono::nanoseconds timeout, std::vector<ReadCompletion>& out) {
  min_complete = std::min(min_complete, *outstanding);
  const auto deadline = deadline_after(timeout);
  const auto has_finished = [&] { return !finished.empty(); };
  size_t got = 0;
  for (;;) {
    got += hand_out_finished(finished, files, outstanding, out);
    if (got >= min_complete) return;
    if (deadline == std::chrono::steady_clock::time_point::max()) {
      done_cv.wait(lock, has_finished);
    } else if (!done_cv.wait_until(lock, deadline, has_finished)) {
      return;
    }
  }
}

}  // namespace les::io
