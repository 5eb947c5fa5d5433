// C ABI: a context's tokens and saved state (les_session.h).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "capi_internal.h"

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

les::Result<std::vector<uint8_t>> read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return les::io_error("cannot open '" + path + "': " + std::strerror(errno));
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return les::io_error("cannot read '" + path + "'");
  return out;
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
        auto bytes = read_file(path);
        if (!bytes.ok()) return fail(bytes.status(), &ctx->last_error);
        les::Status s = ctx->ctx->load_state(*bytes);
        if (!s.ok()) return fail(s.with_context(path), &ctx->last_error);
        return LES_OK;
      },
      &ctx->last_error);
}

}  // extern "C"
