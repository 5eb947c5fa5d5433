#include "io/file_table.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/aligned_bytes.h"

namespace les::io {

namespace {

std::string errno_text(int err) { return std::to_string(err) + " (" + std::strerror(err) + ")"; }

// True when an O_DIRECT read of one aligned block at offset 0 works on fd.
bool direct_probe_passes(int fd, uint32_t alignment) {
  auto buf = AlignedBytes::allocate(alignment, alignment);
  if (!buf.ok()) return false;
  for (;;) {
    const ssize_t n = ::pread(fd, buf->data(), alignment, 0);
    if (n >= 0) return true;
    if (errno != EINTR && errno != EAGAIN) return false;
  }
}

}  // namespace

FileTable::~FileTable() {
  for (auto& [id, f] : files_) {
    if (f.direct_fd >= 0) ::close(f.direct_fd);
    if (f.buffered_fd >= 0) ::close(f.buffered_fd);
  }
}

Result<FileId> FileTable::open(const std::string& path) {
  OpenFile f;
  f.path = path;
  f.buffered_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.buffered_fd < 0) {
    return io_error("open '" + path + "' for reading: errno " + errno_text(errno));
  }
  struct stat st {};
  if (::fstat(f.buffered_fd, &st) != 0) {
    const int err = errno;
    ::close(f.buffered_fd);
    return io_error("fstat '" + path + "': errno " + errno_text(err));
  }
  f.size_bytes = static_cast<uint64_t>(st.st_size);
#ifdef O_DIRECT
  if (use_direct_io_) {
    const int dfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
    if (dfd >= 0) {
      if (direct_probe_passes(dfd, direct_alignment_)) {
        f.direct_fd = dfd;
      } else {
        ::close(dfd);
      }
    }
  }
#endif
  const FileId id = next_id_++;
  files_.emplace(id, std::move(f));
  return id;
}

Status FileTable::close(FileId id) {
  auto it = files_.find(id);
  if (it == files_.end()) return invalid_argument_error("close_file: unknown file id " + std::to_string(id));
  if (it->second.outstanding != 0) {
    return invalid_argument_error("close_file: file id " + std::to_string(id) + " ('" + it->second.path +
                                  "') still has " + std::to_string(it->second.outstanding) +
                                  " outstanding requests");
  }
  if (it->second.direct_fd >= 0) ::close(it->second.direct_fd);
  if (it->second.buffered_fd >= 0) ::close(it->second.buffered_fd);
  files_.erase(it);
  return Status();
}

Result<FileInfo> FileTable::info(FileId id) const {
  auto it = files_.find(id);
  if (it == files_.end()) return invalid_argument_error("file_info: unknown file id " + std::to_string(id));
  FileInfo fi;
  fi.size_bytes = it->second.size_bytes;
  fi.direct_io = it->second.direct_fd >= 0;
  return fi;
}

OpenFile* FileTable::find(FileId id) {
  auto it = files_.find(id);
  return it == files_.end() ? nullptr : &it->second;
}

}  // namespace les::io
