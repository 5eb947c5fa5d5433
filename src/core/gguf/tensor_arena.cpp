#include "core/gguf/tensor_arena.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace les::gguf {
namespace {

constexpr size_t kAlign = 64;

size_t align_up(size_t x) { return (x + kAlign - 1) & ~(kAlign - 1); }

// Reads n bytes at `offset` into dst; continues after short reads, retries EINTR.
Status read_fully(int fd, uint8_t* dst, uint64_t n, uint64_t offset, const std::string& what) {
  uint64_t done = 0;
  while (done < n) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n - done, uint64_t{1} << 30));
    const ssize_t r = ::pread(fd, dst + done, chunk, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return io_error(fmt::format("{}: read of {} bytes at offset {} failed: {}", what, chunk, offset + done,
                                  std::strerror(errno)));
    }
    if (r == 0)
      return io_error(fmt::format("{}: end of file at offset {} ({} of {} bytes read; the file is shorter than "
                                  "when it was opened)",
                                  what, offset + done, done, n));
    done += static_cast<uint64_t>(r);
  }
  return Status();
}

// ", tensor 'x' [offset, +n) is past the end" for the first selected tensor a
// file of `size` bytes no longer holds, or "".
std::string first_lost_tensor(const GgufFile& file, const std::unordered_map<const TensorInfo*, size_t>& selected,
                              uint64_t size) {
  for (const TensorInfo& t : file.tensors())
    if (selected.count(&t) != 0 && t.file_offset + t.n_bytes > size)
      return fmt::format(" (tensor '{}' [{}, +{}) is past the end)", t.name, t.file_offset, t.n_bytes);
  return "";
}

}  // namespace

void TensorArena::Free::operator()(uint8_t* p) const noexcept { std::free(p); }

TensorArena::~TensorArena() {
  if (locked_ && data_) ::munlock(data_.get(), size_);
}

Result<TensorArena> TensorArena::read(const GgufFile& file, const std::function<bool(const TensorInfo&)>& select) {
  if (file.path().empty()) return invalid_argument_error("TensorArena::read: the GGUF file has no path");
  TensorArena a;
  size_t total = 0;
  for (const TensorInfo& t : file.tensors()) {
    if (!select(t)) continue;
    a.offsets_.emplace(&t, total);
    total = align_up(total + static_cast<size_t>(t.n_bytes));
  }
  if (total == 0) return a;
  a.data_.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlign, total)));
  if (!a.data_) return out_of_memory_error(fmt::format("cannot allocate {} bytes for the weights", total));
  a.size_ = total;

  const std::string& path = file.path();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  struct stat st {};
  Status s;
  if (::fstat(fd, &st) != 0) {
    s = io_error(fmt::format("cannot stat '{}': {}", path, std::strerror(errno)));
  } else if (const uint64_t now = static_cast<uint64_t>(st.st_size); now != file.file_size()) {
    s = io_error(fmt::format("'{}' changed while loading: {} bytes, {} when opened{}", path, now, file.file_size(),
                             first_lost_tensor(file, a.offsets_, now)));
  } else {
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    for (const TensorInfo& t : file.tensors()) {
      const auto it = a.offsets_.find(&t);
      if (it == a.offsets_.end()) continue;
      s = read_fully(fd, a.data_.get() + it->second, t.n_bytes, t.file_offset,
                     fmt::format("'{}', tensor '{}'", path, t.name));
      if (!s.ok()) break;
    }
  }
  ::close(fd);
  if (!s.ok()) return s;
  return a;
}

std::span<const uint8_t> TensorArena::find(const TensorInfo& t) const noexcept {
  const auto it = offsets_.find(&t);
  if (it == offsets_.end()) return {};
  return {data_.get() + it->second, static_cast<size_t>(t.n_bytes)};
}

Status TensorArena::lock() {
  if (locked_ || size_ == 0) return Status();
  if (::mlock(data_.get(), size_) != 0) {
    const int e = errno;
    struct rlimit rl {};
    std::string limit = "unknown";
    if (::getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
      limit = rl.rlim_cur == RLIM_INFINITY ? "unlimited" : fmt::format("{} bytes", rl.rlim_cur);
    return io_error(fmt::format("cannot lock {} bytes of weights in RAM: {} (RLIMIT_MEMLOCK {}; raise it with "
                                "ulimit -l)",
                                size_, std::strerror(e), limit));
  }
  locked_ = true;
  return Status();
}

}  // namespace les::gguf
