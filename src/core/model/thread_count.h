// The compute-thread count a caller asks for (ModelParams / ContextParams
// n_threads, les_model_params / les_context_params n_threads, `les -t`):
// 0 means "all hardware threads"; the accepted range is [0, max], max =
// kernels::ThreadPool::max_threads() (4 x the hardware threads).
//
// Thread-safety: pure.
#pragma once

#include <string_view>

#include "util/status.h"

namespace les {

// OK for 0 <= n_threads <= ThreadPool::max_threads(); else invalid_argument
// naming `field`, the value and the range, e.g. "ContextParams.n_threads 5000
// is above the maximum 8 (4 x the 2 hardware threads of this machine)".
// `zero_means` is what 0 selects for this field, named in the message for a
// negative value ("... is negative (0 = <zero_means>)").
Status check_thread_count(int64_t n_threads, std::string_view field,
                          std::string_view zero_means = "all hardware threads");

}  // namespace les
