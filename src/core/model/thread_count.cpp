#include "core/model/thread_count.h"

#include <string>
#include <thread>

#include "kernels/thread_pool.h"

namespace les {

Status check_thread_count(int64_t n_threads, std::string_view field, std::string_view zero_means) {
  const std::string name(field);
  if (n_threads < 0)
    return invalid_argument_error(name + " " + std::to_string(n_threads) + " is negative (0 = " +
                                  std::string(zero_means) + ")");
  const int max = kernels::ThreadPool::max_threads();
  if (n_threads <= max) return Status();
  const unsigned hw = std::thread::hardware_concurrency();
  const std::string why = hw ? "4 x the " + std::to_string(hw) + " hardware threads of this machine"
                             : "the hardware thread count is unknown";
  return invalid_argument_error(name + " " + std::to_string(n_threads) + " is above the maximum " +
                                std::to_string(max) + " (" + why + ")");
}

}  // namespace les
