// Internal: an spdlog sink that forwards formatted lines to a les_log_callback,
// and the factory for a model's logger (callback sink, or stderr when none).
#pragma once

#include <memory>

#include <spdlog/logger.h>

#include "les/les.h"

namespace les::capi {

// A logger named "les" whose lines go to `cb(level, msg, user_data)` (or to
// stderr when cb is null), filtered at `min_level`. Thread-safe (spdlog's _mt sinks).
std::shared_ptr<spdlog::logger> make_logger(les_log_callback cb, void* user_data, les_log_level min_level);

}  // namespace les::capi
