// C ABI: version queries, status names and the thread-local last error.
#include "les/les.h"

#include <string>

#include "last_error.h"

namespace les::capi {
namespace {
thread_local std::string t_last_error;  // per-thread, documented in les.h
}
void set_last_error(const std::string& message) { t_last_error = message; }
void clear_last_error() { t_last_error.clear(); }
}  // namespace les::capi

extern "C" {

const char* les_version(void) {
#define LES_STR2(x) #x
#define LES_STR(x) LES_STR2(x)
  return LES_STR(LES_VERSION_MAJOR) "." LES_STR(LES_VERSION_MINOR) "." LES_STR(LES_VERSION_PATCH);
}

bool les_version_at_least(int major, int minor) {
  if (LES_VERSION_MAJOR != major) return LES_VERSION_MAJOR > major;
  return LES_VERSION_MINOR >= minor;
}

const char* les_status_name(les_status status) {
  switch (status) {
    case LES_OK: return "ok";
    case LES_ERR_INVALID_ARGUMENT: return "invalid argument";
    case LES_ERR_IO: return "I/O error";
    case LES_ERR_FORMAT: return "format error";
    case LES_ERR_UNSUPPORTED: return "unsupported";
    case LES_ERR_OUT_OF_MEMORY: return "out of memory";
    case LES_ERR_CONTEXT_FULL: return "context full";
    case LES_ERR_CANCELLED: return "cancelled";
    case LES_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

const char* les_last_error(void) { return les::capi::t_last_error.c_str(); }

}  // extern "C"
