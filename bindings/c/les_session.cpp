// C ABI: a context's tokens and saved state (les_session.h).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "capi_internal.h"
#include "core/model/session_state.h"
#include "util/bounded_read.h"

using les::capi::Access;
using les::capi::ContextUse;
using les::capi::fail;
using les::capi::guarded;

namespace {

les::Status write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return les::io_error("cannot create '" + tmp + "': " + std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    return les::io_error("cannot write '" + tmp + "': " + std::strerror(ok ? errno : err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    return les::io_error("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(e));
  }
  return les::Status();
}

// A saved state file, read with a bound (util/bounded_read.h): a regular file
// of at most the largest state `c` can hold, its magic checked before the rest
// is read (/dev/zero, a FIFO, a model file or a huge sparse file are refused
// before they take memory).
les::Result<std::string> read_state_file(const std::string& path, const les::Context& c) {
  les::BoundedRead r;
  r.what = "session state";
  r.max_bytes = c.max_state_bytes();
  r.max_reason = "the largest state a context of n_ctx " + std::to_string(c.n_ctx()) + " holds";
  r.regular_only = true;
  r.head_bytes = les::kSessionStateMagicBytes;
  r.check_head = [](std::span<const uint8_t> head) { return les::check_state_magic(head); };
  return les::read_bounded(path, r);
}

}  // namespace

extern "C" {

les_status les_context_tokens(const les_context* ctx, les_token* tokens, int32_t n_max, int32_t* n_out) {
  return guarded("les_context_tokens", [&]() -> les_status {
    if (ctx == nullptr || n_out == nullptr)
      return fail(les::invalid_argument_error("les_context_tokens: ctx or n_out is NULL"));
    ContextUse use(ctx->in_use, "les_context_tokens", Access::read);
    if (!use.ok()) return fail(use.status());
    const auto ids = ctx->ctx->tokens();
    const int32_t pending = ctx->ctx->pending();
    const int32_t n = static_cast<int32_t>(ids.size()) + (pending >= 0 ? 1 : 0);
    *n_out = n;
    if (n_max < n || (tokens == nullptr && n > 0))
      return fail(les::invalid_argument_error("les_context_tokens: the context holds " + std::to_string(n) +
                                              " tokens; n_max is " + std::to_string(n_max)));
    std::copy(ids.begin(), ids.end(), tokens);
    if (pending >= 0) tokens[ids.size()] = pending;
    return LES_OK;
  });
}

les_status les_context_state_size(const les_context* ctx, size_t* n_bytes) {
  return guarded("les_context_state_size", [&]() -> les_status {
    if (ctx == nullptr || n_bytes == nullptr)
      return fail(les::invalid_argument_error("les_context_state_size: ctx or n_bytes is NULL"));
    ContextUse use(ctx->in_use, "les_context_state_size", Access::read);
    if (!use.ok()) return fail(use.status());
    auto state = ctx->ctx->save_state();
    if (!state.ok()) return fail(state.status());
    *n_bytes = state->size();
    return LES_OK;
  });
}

les_status les_context_state_save(const les_context* ctx, void* buf, size_t buf_size, size_t* n_written) {
  if (ctx == nullptr)
    return guarded("les_context_state_save",
                   [] { return fail(les::invalid_argument_error("les_context_state_save: ctx is NULL")); });
  return guarded(
      "les_context_state_save",
      [&]() -> les_status {
        ContextUse use(ctx->in_use, "les_context_state_save", Access::read);
        if (!use.ok()) return fail(use.status());
        ctx->last_error.clear();
        if (n_written == nullptr)
          return fail(les::invalid_argument_error("les_context_state_save: n_written is NULL"), &ctx->last_error);
        auto state = ctx->ctx->save_state();
        if (!state.ok()) return fail(state.status(), &ctx->last_error);
        *n_written = state->size();
        if (buf == nullptr || buf_size < state->size())
          return fail(les::invalid_argument_error("les_context_state_save: the state needs " +
                                                  std::to_string(state->size()) + " bytes; buf_size is " +
                                                  std::to_string(buf_size)),
                      &ctx->last_error);
        std::memcpy(buf, state->data(), state->size());
        return LES_OK;
      },
      &ctx->last_error);
}

les_status les_context_state_load(les_context* ctx, const void* buf, size_t size) {
  if (ctx == nullptr)
    return guarded("les_context_state_load",
                   [] { return fail(les::invalid_argument_error("les_context_state_load: ctx is NULL")); });
  return guarded(
      "les_context_state_load",
      [&]() -> les_status {
        ContextUse use(ctx->in_use, "les_context_state_load", Access::write);
        if (!use.ok()) return fail(use.status());
        ctx->last_error.clear();
        if (buf == nullptr)
          return fail(les::invalid_argument_error("les_context_state_load: buf is NULL"), &ctx->last_error);
        les::Status s = ctx->ctx->load_state(std::span<const uint8_t>(static_cast<const uint8_t*>(buf), size));
        if (!s.ok()) return fail(s, &ctx->last_error);
        return LES_OK;
      },
      &ctx->last_error);
}

les_status les_context_state_save_file(const les_context* ctx, const char* path) {
  if (ctx == nullptr)
    return guarded("les_context_state_save_file",
                   [] { return fail(les::invalid_argument_error("les_context_state_save_file: ctx is NULL")); });
  return guarded(
      "les_context_state_save_file",
      [&]() -> les_status {
        ContextUse use(ctx->in_use, "les_context_state_save_file", Access::read);
        if (!use.ok()) return fail(use.status());
        ctx->last_error.clear();
        if (path == nullptr)
          return fail(les::invalid_argument_error("les_context_state_save_file: path is NULL"), &ctx->last_error);
        auto state = ctx->ctx->save_state();
        if (!state.ok()) return fail(state.status(), &ctx->last_error);
        les::Status s = write_file(path, *state);
        return s.ok() ? LES_OK : fail(s, &ctx->last_error);
      },
      &ctx->last_error);
}

les_status les_context_state_load_file(les_context* ctx, const char* path) {
  if (ctx == nullptr)
    return guarded("les_context_state_load_file",
                   [] { return fail(les::invalid_argument_error("les_context_state_load_file: ctx is NULL")); });
  return guarded(
      "les_context_state_load_file",
      [&]() -> les_status {
        ContextUse use(ctx->in_use, "les_context_state_load_file", Access::write);
        if (!use.ok()) return fail(use.status());
        ctx->last_error.clear();
        if (path == nullptr)
          return fail(les::invalid_argument_error("les_context_state_load_file: path is NULL"), &ctx->last_error);
        auto bytes = read_state_file(path, *ctx->ctx);
        if (!bytes.ok()) return fail(bytes.status(), &ctx->last_error);
        les::Status s = ctx->ctx->load_state(
            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()));
        if (!s.ok()) return fail(s.with_context(path), &ctx->last_error);
        return LES_OK;
      },
      &ctx->last_error);
}

}  // extern "C"
