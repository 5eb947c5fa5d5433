// Streaming GGUF writer; see gguf_stream_writer.h.
#include "core/gguf/gguf_stream_writer.h"

#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // sync_file_range
#endif
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace les::gguf {
namespace {

Status pwrite_all(int fd, const uint8_t* p, size_t n, uint64_t off, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, std::min<size_t>(n, size_t{1} << 30), static_cast<off_t>(off));
    if (w < 0) {
      if (errno == EINTR) continue;
      return io_error(fmt::format("cannot write '{}' at byte {}: {}", path, off, std::strerror(errno)));
    }
    if (w == 0) return io_error(fmt::format("cannot write '{}' at byte {}: no progress", path, off));
    p += w;
    off += static_cast<uint64_t>(w);
    n -= static_cast<size_t>(w);
  }
  return {};
}

}  // namespace

GgufStreamWriter::~GgufStreamWriter() { discard(); }

void GgufStreamWriter::discard() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(tmp_.c_str());
  }
}

Status GgufStreamWriter::declare_tensor(std::string_view name, GgmlType type, std::span<const int64_t> ne) {
  if (fd_ >= 0 || !path_.empty())
    return invalid_argument_error(fmt::format("tensor '{}': declared after begin()", name));
  LES_ASSIGN_OR_RETURN(const uint64_t n_bytes, checked_tensor_bytes(name, type, ne));
  if (index_.count(std::string(name)) != 0)
    return invalid_argument_error(fmt::format("tensor '{}': duplicate tensor name", name));
  Tensor t;
  t.header = {std::string(name), type, std::vector<int64_t>(ne.begin(), ne.end()), n_bytes};
  t.row_bytes = *ggml_row_bytes(type, ne[0]);
  index_.emplace(t.header.name, tensors_.size());
  tensors_.push_back(std::move(t));
  return {};
}

Status GgufStreamWriter::begin(const std::string& path) {
  if (!path_.empty()) return invalid_argument_error("GgufStreamWriter::begin called twice");
  std::vector<TensorHeader> h;
  h.reserve(tensors_.size());
  for (const Tensor& t : tensors_) h.push_back(t.header);
  const uint64_t align = meta_.alignment();
  uint64_t data_bytes = 0;
  const std::vector<uint64_t> off = layout_tensor_offsets(h, align, &data_bytes);
  const std::vector<uint8_t> header = encode_gguf_header(meta_.metadata(), h, off, align);
  for (size_t i = 0; i < tensors_.size(); ++i) tensors_[i].file_offset = header.size() + off[i];
  file_size_ = header.size() + data_bytes;

  path_ = path;
  tmp_ = path + ".tmp";
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return io_error(fmt::format("cannot create '{}': {}", tmp_, std::strerror(errno)));
  Status s = pwrite_all(fd_, header.data(), header.size(), 0, tmp_);
  if (s.ok() && ::ftruncate(fd_, static_cast<off_t>(file_size_)) != 0)
    s = io_error(fmt::format("cannot size '{}' to {} bytes: {}", tmp_, file_size_, std::strerror(errno)));
  if (!s.ok()) discard();
  return s;
}

Result<GgufStreamWriter::Tensor*> GgufStreamWriter::find(std::string_view name) {
  const auto it = index_.find(std::string(name));
  if (it == index_.end()) return invalid_argument_error(fmt::format("tensor '{}' was not declared", name));
  return &tensors_[it->second];
}

Result<uint64_t> GgufStreamWriter::tensor_file_offset(std::string_view name) const {
  const auto it = index_.find(std::string(name));
  if (it == index_.end()) return invalid_argument_error(fmt::format("tensor '{}' was not declared", name));
  return tensors_[it->second].file_offset;
}

Status GgufStreamWriter::write_bytes(std::string_view name, uint64_t offset, std::span<const uint8_t> bytes) {
  if (fd_ < 0) return invalid_argument_error(fmt::format("tensor '{}': written before begin() or after finish()", name));
  LES_ASSIGN_OR_RETURN(Tensor * t, find(name));
  const uint64_t n = bytes.size();
  if (offset > t->header.n_bytes || n > t->header.n_bytes - offset)
    return invalid_argument_error(fmt::format("tensor '{}': bytes [{}, {}) lie outside its {} bytes", name, offset,
                                              offset + n, t->header.n_bytes));
  if (n == 0) return {};
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The first span starting after `offset`, and the one before it.
    auto next = t->spans.upper_bound(offset);
    if (next != t->spans.end() && next->first < offset + n)
      return invalid_argument_error(fmt::format("tensor '{}': bytes [{}, {}) overlap bytes written before", name,
                                                offset, offset + n));
    auto prev = next == t->spans.begin() ? t->spans.end() : std::prev(next);
    if (prev != t->spans.end() && prev->second > offset)
      return invalid_argument_error(fmt::format("tensor '{}': bytes [{}, {}) overlap bytes written before", name,
                                                offset, offset + n));
    // Insert and merge with neighbours that touch.
    uint64_t lo = offset, hi = offset + n;
    if (prev != t->spans.end() && prev->second == lo) {
      lo = prev->first;
      t->spans.erase(prev);
    }
    if (next != t->spans.end() && next->first == hi) {
      hi = next->second;
      t->spans.erase(next);
    }
    t->spans.emplace(lo, hi);
    t->written += n;
  }
  Status s = pwrite_all(fd_, bytes.data(), bytes.size(), t->file_offset + offset, tmp_);
#ifdef __linux__
  // Start writeback of large pieces now (asynchronous): keeps dirty pages few,
  // so a multi-GB file streams at disk speed instead of stalling in throttling.
  if (s.ok() && n >= (uint64_t{1} << 20))
    ::sync_file_range(fd_, static_cast<off_t>(t->file_offset + offset), static_cast<off_t>(n), SYNC_FILE_RANGE_WRITE);
#endif
  if (!s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.ok()) error_ = s;
  }
  return s;
}

Status GgufStreamWriter::write_tensor_data(std::string_view name, std::span<const uint8_t> bytes) {
  LES_ASSIGN_OR_RETURN(Tensor * t, find(name));
  if (bytes.size() != t->header.n_bytes)
    return invalid_argument_error(fmt::format("tensor '{}': {} data bytes given, {} {} needs {}", name, bytes.size(),
                                              ggml_type_name(t->header.type), fmt::join(t->header.ne, "x"),
                                              t->header.n_bytes));
  return write_bytes(name, 0, bytes);
}

Status GgufStreamWriter::write_rows(std::string_view name, int64_t first_row, std::span<const uint8_t> bytes) {
  LES_ASSIGN_OR_RETURN(Tensor * t, find(name));
  if (first_row < 0 || bytes.size() % t->row_bytes != 0)
    return invalid_argument_error(fmt::format("tensor '{}': {} bytes at row {} are not whole rows of {} bytes", name,
                                              bytes.size(), first_row, t->row_bytes));
  const uint64_t n_rows = t->header.n_bytes / t->row_bytes;
  const uint64_t r0 = static_cast<uint64_t>(first_row), nr = bytes.size() / t->row_bytes;
  if (r0 > n_rows || nr > n_rows - r0)
    return invalid_argument_error(
        fmt::format("tensor '{}': rows [{}, {}) past its {} rows", name, r0, r0 + nr, n_rows));
  return write_bytes(name, r0 * t->row_bytes, bytes);
}

Status GgufStreamWriter::finish(const std::function<Status(const std::string& tmp_path)>& check) {
  if (fd_ < 0) return invalid_argument_error("GgufStreamWriter::finish without a successful begin()");
  if (!error_.ok()) {
    Status s = error_;
    discard();
    return s;
  }
  for (const Tensor& t : tensors_) {
    if (t.written != t.header.n_bytes) {
      const std::string name = t.header.name;
      const uint64_t written = t.written, need = t.header.n_bytes;
      discard();
      return invalid_argument_error(
          fmt::format("tensor '{}': only {} of its {} bytes were written", name, written, need));
    }
  }
  Status s;
  if (::fsync(fd_) != 0) s = io_error(fmt::format("cannot fsync '{}': {}", tmp_, std::strerror(errno)));
  if (::close(fd_) != 0 && s.ok()) s = io_error(fmt::format("cannot close '{}': {}", tmp_, std::strerror(errno)));
  fd_ = -1;
  if (s.ok() && check) s = check(tmp_);
  if (s.ok() && std::rename(tmp_.c_str(), path_.c_str()) != 0)
    s = io_error(fmt::format("cannot rename '{}' to '{}': {}", tmp_, path_, std::strerror(errno)));
  if (!s.ok()) ::unlink(tmp_.c_str());
  return s;
}

}  // namespace les::gguf
