// Reference log-probabilities file; see logits_file.h.
#include "quant/logits_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "quant/perplexity_stats.h"

namespace les::quant {
namespace {

constexpr char kMagic[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};

Status io_fail(const std::string& what, const std::string& path) {
  return io_error(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

size_t LogitsFileHeader::chunk_words() const {
  return static_cast<size_t>(n_scored()) * CompactLogProbs::n_words(n_vocab);
}

LogitsFileWriter::~LogitsFileWriter() {
  if (f_ != nullptr) std::fclose(f_);
}

Status LogitsFileWriter::open(const std::string& path, const LogitsFileHeader& h, const std::vector<int32_t>& tokens) {
  path_ = path;
  f_ = std::fopen(path.c_str(), "wb");
  if (f_ == nullptr) return io_fail("cannot create", path);
  bool ok = std::fwrite(kMagic, 1, 8, f_) == 8;
  ok = ok && std::fwrite(&h.n_ctx, 4, 1, f_) == 1 && std::fwrite(&h.n_vocab, 4, 1, f_) == 1 &&
       std::fwrite(&h.n_chunk, 4, 1, f_) == 1;
  ok = ok && std::fwrite(tokens.data(), 4, tokens.size(), f_) == tokens.size();
  return ok ? Status() : io_fail("cannot write", path);
}

Status LogitsFileWriter::write_chunk(const std::vector<uint16_t>& words) {
  if (f_ == nullptr) return invalid_argument_error("logits file not open");
  if (std::fwrite(words.data(), 2, words.size(), f_) != words.size()) return io_fail("cannot write", path_);
  return Status();
}

Status LogitsFileWriter::close() {
  if (f_ == nullptr) return Status();
  const int rc = std::fclose(f_);
  f_ = nullptr;
  return rc == 0 ? Status() : io_fail("cannot write", path_);
}

LogitsFileReader::~LogitsFileReader() {
  if (f_ != nullptr) std::fclose(f_);
}

Status LogitsFileReader::open(const std::string& path) {
  path_ = path;
  f_ = std::fopen(path.c_str(), "rb");
  if (f_ == nullptr) return io_fail("cannot open", path);
  struct stat st {};
  if (fstat(fileno(f_), &st) != 0) return io_fail("cannot stat", path);
  char magic[8];
  if (std::fread(magic, 1, 8, f_) != 8 || std::memcmp(magic, kMagic, 8) != 0)
    return format_error(path + " is not a log-probabilities file (no _logits_ magic)");
  if (std::fread(&h_.n_ctx, 4, 1, f_) != 1 || std::fread(&h_.n_vocab, 4, 1, f_) != 1 ||
      std::fread(&h_.n_chunk, 4, 1, f_) != 1)
    return format_error(path + ": truncated header");
  if (h_.n_ctx < 4 || h_.n_ctx > (1u << 24) || h_.n_vocab <= 0 || h_.n_vocab > (1 << 24) || h_.n_chunk <= 0)
    return format_error(path + ": absurd header (n_ctx " + std::to_string(h_.n_ctx) + ", n_vocab " +
                                    std::to_string(h_.n_vocab) + ", n_chunk " + std::to_string(h_.n_chunk) + ")");
  const double expect = 20.0 + 4.0 * h_.n_ctx * h_.n_chunk + 2.0 * static_cast<double>(h_.chunk_words()) * h_.n_chunk;
  if (static_cast<double>(st.st_size) != expect)
    return format_error(path + ": " + std::to_string(st.st_size) + " bytes, the header implies " +
                                    std::to_string(static_cast<uint64_t>(expect)) + " (truncated or not this format)");
  tokens_.resize(static_cast<size_t>(h_.n_ctx) * static_cast<size_t>(h_.n_chunk));
  if (std::fread(tokens_.data(), 4, tokens_.size(), f_) != tokens_.size())
    return io_error(path + ": short read of the tokens");
  for (const int32_t t : tokens_)
    if (t < 0 || t >= h_.n_vocab) return format_error(path + ": token id " + std::to_string(t) + " out of range");
  return Status();
}

Status LogitsFileReader::read_chunk(std::vector<uint16_t>& words) {
  if (f_ == nullptr) return invalid_argument_error("logits file not open");
  words.resize(h_.chunk_words());
  if (std::fread(words.data(), 2, words.size(), f_) != words.size())
    return io_error(path_ + ": short read of a chunk's log-probabilities");
  return Status();
}

}  // namespace les::quant
