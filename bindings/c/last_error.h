// Internal: the thread-local last-error string behind les_last_error().
#pragma once

#include <string>

namespace les::capi {
void set_last_error(const std::string& message);
void clear_last_error();
}  // namespace les::capi
