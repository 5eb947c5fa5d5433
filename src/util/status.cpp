#include "util/status.h"

namespace les {

const char* status_code_name(StatusCode code) noexcept {
  switch (code) {
    case StatusCode::ok: return "ok";
    case StatusCode::invalid_argument: return "invalid argument";
    case StatusCode::io: return "I/O error";
    case StatusCode::format: return "format error";
    case StatusCode::unsupported: return "unsupported";
    case StatusCode::out_of_memory: return "out of memory";
    case StatusCode::context_full: return "context full";
    case StatusCode::cancelled: return "cancelled";
    case StatusCode::internal: return "internal error";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace les
