// Status and Result<T>: the error type used everywhere inside LES.
//
// Every fallible internal function returns `Status` or `Result<T>`; nothing in
// the engine throws across module boundaries and nothing aborts on input that
// came from a file or a caller. The C ABI (include/les/les.h) maps
// `StatusCode` one-to-one onto `les_status`.
//
// Thread-safety: values; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace les {

// Error classes. Values match `les_status` in include/les/les.h (negated).
enum class StatusCode : int32_t {
  ok = 0,
  invalid_argument = 1,  // a caller passed something wrong (null, out of range id, bad size)
  io = 2,                // open/read/write failed, short read, EIO
  format = 3,            // a file is malformed (GGUF structure, bounds, types)
  unsupported = 4,       // valid input this build does not handle (arch, tensor type)
  out_of_memory = 5,     // allocation or memory budget exhausted
  context_full = 6,      // the KV cache / context has no room for more tokens
  cancelled = 7,         // a callback or another thread asked to stop
  internal = 8,          // a bug in LES
};

// Human-readable name of a code ("format", "io", ...). Never null.
const char* status_code_name(StatusCode code) noexcept;

// An error code with a message that names what was wrong (field, byte offset,
// tensor name...). A default-constructed Status is OK.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }

  bool ok() const noexcept { return code_ == StatusCode::ok; }
  StatusCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  // "format: tensor 'blk.0.attn_q.weight': offset 123 past end of file (size 100)"
  std::string to_string() const;

  // Prefixes context to the message: "while loading X: <old message>".
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::ok;
  std::string message_;
};

// Convenience constructors.
inline Status invalid_argument_error(std::string m) { return {StatusCode::invalid_argument, std::move(m)}; }
inline Status io_error(std::string m) { return {StatusCode::io, std::move(m)}; }
inline Status format_error(std::string m) { return {StatusCode::format, std::move(m)}; }
inline Status unsupported_error(std::string m) { return {StatusCode::unsupported, std::move(m)}; }
inline Status out_of_memory_error(std::string m) { return {StatusCode::out_of_memory, std::move(m)}; }
inline Status context_full_error(std::string m) { return {StatusCode::context_full, std::move(m)}; }
inline Status cancelled_error(std::string m) { return {StatusCode::cancelled, std::move(m)}; }
inline Status internal_error(std::string m) { return {StatusCode::internal, std::move(m)}; }

// A value or an error. `Result<T> r = f(); if (!r.ok()) return r.status();`
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<T, Status>, "Result<Status> makes no sense");

 public:
  Result(T value) : v_(std::move(value)) {}                 // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {           // NOLINT: implicit by design
    if (std::get<Status>(v_).ok()) v_ = Status(StatusCode::internal, "Result constructed from OK status");
  }

  bool ok() const noexcept { return std::holds_alternative<T>(v_); }
  // The error; an OK status when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  // Precondition: ok(). Calling these on an error is a programming bug.
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &std::get<T>(v_); }
  const T* operator->() const { return &std::get<T>(v_); }
  T& operator*() & { return std::get<T>(v_); }
  const T& operator*() const& { return std::get<T>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace les

#define LES_CONCAT_INNER_(a, b) a##b
#define LES_CONCAT_(a, b) LES_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function if `expr` (a Status) is not OK.
#define LES_RETURN_IF_ERROR(expr)                 \
  do {                                            \
    ::les::Status les_status_tmp_ = (expr);       \
    if (!les_status_tmp_.ok()) return les_status_tmp_; \
  } while (0)

// `LES_ASSIGN_OR_RETURN(auto x, f());` declares x from a Result or returns its error.
#define LES_ASSIGN_OR_RETURN(lhs, expr) \
  LES_ASSIGN_OR_RETURN_IMPL_(LES_CONCAT_(les_result_tmp_, __LINE__), lhs, expr)
#define LES_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
