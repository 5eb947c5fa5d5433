// FileTable: the files an IoBackend has opened, each with a buffered
// descriptor and, when the file system allows it, an O_DIRECT descriptor.
//
// O_DIRECT probe (at open): open(O_DIRECT) must succeed and one aligned read
// of `direct_alignment` bytes at offset 0 into aligned memory must not fail
// (tmpfs and some FUSE/overlay file systems refuse one or the other). On any
// failure the file is used buffered only; that is a normal result, not an error.
//
// Thread-safety: thread-compatible; used by the backend's submitter thread.
// Backends copy the descriptors into each job, so worker threads never touch
// the table.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "io/io_backend.h"

namespace les::io {

struct OpenFile {
  std::string path;
  int buffered_fd = -1;
  int direct_fd = -1;         // -1 when O_DIRECT is not used for this file
  uint64_t size_bytes = 0;    // at open time
  size_t outstanding = 0;     // requests submitted and not yet reaped
};

class FileTable {
 public:
  FileTable(bool use_direct_io, uint32_t direct_alignment)
      : use_direct_io_(use_direct_io), direct_alignment_(direct_alignment) {}
  FileTable(const FileTable&) = delete;
  FileTable& operator=(const FileTable&) = delete;
  ~FileTable();  // closes every descriptor

  // Errors: io (open/fstat failed, naming path and errno).
  Result<FileId> open(const std::string& path);
  // Errors: invalid_argument (unknown id, or requests outstanding).
  Status close(FileId id);
  Result<FileInfo> info(FileId id) const;
  // nullptr for an unknown id.
  OpenFile* find(FileId id);
  uint32_t direct_alignment() const { return direct_alignment_; }

 private:
  bool use_direct_io_;
  uint32_t direct_alignment_;
  FileId next_id_ = 1;
  std::unordered_map<FileId, OpenFile> files_;
};

}  // namespace les::io
