// The reference log-probabilities file of `les perplexity
// --kl-divergence-base` in llama-perplexity's layout, so either tool reads
// the other's files: "_logits_", n_ctx (u32), n_vocab (i32), n_chunk (i32),
// the n_chunk x n_ctx evaluated token ids (i32, BOS not substituted), then per
// chunk the scored positions' CompactLogProbs (n_ctx - 1 - n_ctx/2 positions
// of CompactLogProbs::n_words(n_vocab) uint16 each). Little-endian.
//
// Thread-safety: one object per thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "util/status.h"

namespace les::quant {

struct LogitsFileHeader {
  uint32_t n_ctx = 0;
  int32_t n_vocab = 0;
  int32_t n_chunk = 0;
  // Positions scored per chunk: the second half minus the last (no next token).
  int32_t n_scored() const { return static_cast<int32_t>(n_ctx) - 1 - static_cast<int32_t>(n_ctx) / 2; }
  size_t chunk_words() const;
};

// Writes a file chunk by chunk. Errors: io_error naming the path.
class LogitsFileWriter {
 public:
  LogitsFileWriter() = default;
  ~LogitsFileWriter();
  LogitsFileWriter(const LogitsFileWriter&) = delete;
  LogitsFileWriter& operator=(const LogitsFileWriter&) = delete;
  // Creates `path` and writes the header and `tokens` (n_chunk x n_ctx ids).
  Status open(const std::string& path, const LogitsFileHeader& h, const std::vector<int32_t>& tokens);
  // Appends one chunk: h.chunk_words() uint16.
  Status write_chunk(const std::vector<uint16_t>& words);
  Status close();

 private:
  std::FILE* f_ = nullptr;
  std::string path_;
};

// Reads a file: header and tokens at open, then the chunks in order.
// Errors: io_error (unreadable), format (not such a file: bad magic,
// absurd sizes, a size that does not match the header: truncated or padded).
class LogitsFileReader {
 public:
  LogitsFileReader() = default;
  ~LogitsFileReader();
  LogitsFileReader(const LogitsFileReader&) = delete;
  LogitsFileReader& operator=(const LogitsFileReader&) = delete;
  Status open(const std::string& path);
  const LogitsFileHeader& header() const { return h_; }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  // Reads the next chunk into `words` (resized to chunk_words()).
  Status read_chunk(std::vector<uint16_t>& words);

 private:
  std::FILE* f_ = nullptr;
  std::string path_;
  LogitsFileHeader h_;
  std::vector<int32_t> tokens_;
};

}  // namespace les::quant
