// What speculative decoding asks of an expert source (expert_source.h
// inherits this): the bytes a batch would read before it runs, what the last
// batch read and waited, and the verify pass's bookkeeping. The defaults are
// a resident source's answers: nothing to read, nothing to wait for.
//
// Thread-safety: as the expert source (one Context at a time).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

namespace les {

class ExpertCost {
 public:
  virtual ~ExpertCost() = default;

  // Predicted bytes a batch of `tokens` (run at the sequence's next
  // positions) would read from the file: out[j] for the batch of the first
  // j + 1 tokens (out.size() == tokens.size()): the predicted union of their
  // experts in every layer minus what the cache holds or is reading.
  virtual void predict_batch_bytes(std::span<const int32_t> tokens, std::span<uint64_t> out) {
    (void)tokens;
    std::fill(out.begin(), out.end(), uint64_t{0});
  }

  struct BatchIo {
    uint64_t bytes_read = 0;  // bytes read from the file during the batch
    double io_wait_s = 0;     // compute blocked waiting for them (seconds)
  };
  // The last finished batch's reads.
  virtual BatchIo last_batch_io() const { return {}; }

  // The next batch is a speculative verify pass: row 0 is the pending token,
  // rows 1.. are drafts. It counts as one step in the cache's recency /
  // frequency bookkeeping, and experts that only drafts selected earn their
  // use only if on_verified() keeps a row that selected them.
  virtual void begin_verify() {}
  // After that pass: its first n_rows_kept rows were kept (1 + accepted drafts).
  virtual void on_verified(int32_t n_rows_kept) { (void)n_rows_kept; }
};

}  // namespace les
