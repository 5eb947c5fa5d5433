// Internal to bindings/c: the helpers of capi_internal.h (status mapping,
// failure recording, the struct_size rule of versioned structs).
#include "capi_internal.h"

#include <string>

namespace les::capi {

les_status to_c_status(StatusCode code) noexcept {
  switch (code) {
    case StatusCode::ok: return LES_OK;
    case StatusCode::invalid_argument: return LES_ERR_INVALID_ARGUMENT;
    case StatusCode::io: return LES_ERR_IO;
    case StatusCode::format: return LES_ERR_FORMAT;
    case StatusCode::unsupported: return LES_ERR_UNSUPPORTED;
    case StatusCode::out_of_memory: return LES_ERR_OUT_OF_MEMORY;
    case StatusCode::context_full: return LES_ERR_CONTEXT_FULL;
    case StatusCode::cancelled: return LES_ERR_CANCELLED;
    case StatusCode::internal: return LES_ERR_INTERNAL;
  }
  return LES_ERR_INTERNAL;
}

les_status fail(const Status& s, HandleError* handle_error) {
  const std::string msg = s.message();
  set_last_error(msg);
  if (handle_error != nullptr) handle_error->set(msg);
  return to_c_status(s.code());
}

Status check_struct_size(uint32_t size, size_t first_version_size, size_t our_size, const char* type_name) {
  if (size >= first_version_size && size <= our_size) return Status();
  const std::string accepted = first_version_size == our_size
                                   ? std::to_string(our_size)
                                   : std::to_string(first_version_size) + ".." + std::to_string(our_size);
  return invalid_argument_error(std::string(type_name) + ".struct_size is " + std::to_string(size) +
                                "; this library (LES " + les_version() + ") accepts " + accepted + " (sizeof(" +
                                type_name + ") as compiled against its les.h)");
}

}  // namespace les::capi
