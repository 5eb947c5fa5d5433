// FaultInjectingBackend: a real backend (io_uring or pread) with faults
// injected by rule or seeded probability, for the io tests and the
// scheduler's tests.
//
// Read faults are injected *inside* the wrapped backend, at the level of one
// read attempt (one pread call / one SQE), through IoOptions::attempt_hook, so
// the backend's own recovery code is what gets exercised:
//   short_read  the attempt asks the OS for fewer bytes; the backend must
//               advance and resubmit to finish the request,
//   eagain      the attempt "returns" -EAGAIN without being issued; the
//               backend must requeue it,
//   eio         the attempt "returns" -EIO; the request must complete with an
//               io Status naming it, and the backend must stay usable,
//   eof         the attempt "returns" 0 (end of file before the requested
//               length, as when the file was truncated under us).
// Delays are applied by the wrapper to completions: a delayed completion is
// held back from reap for the rule's duration.
//
// Rules are checked in order for every attempt (delay rules: every
// completion); the first eligible rule whose coin flip succeeds fires. A rule
// with probability 1 and no max_hits that forbids progress (eagain, eio on a
// retried tag) makes that request fail or spin: bound such rules with max_hits.
//
// Thread-safety: as io_backend.h; the injector itself is mutex-protected
// because pread workers consult it. Counters may be read from the submitter thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "io/io_backend.h"
#include "io/io_factory.h"

namespace les::io {

enum class FaultKind { short_read, eagain, eio, eof, delay };

struct FaultRule {
  FaultKind kind = FaultKind::eio;
  std::optional<uint64_t> tag;          // only requests with this tag; nullopt = any request
  double probability = 1.0;             // chance per eligible attempt (delay: per completion), [0, 1]
  uint64_t max_hits = UINT64_MAX;       // the rule stops firing after this many injections
  size_t short_bytes = 0;               // short_read: bytes the attempt may return; 0 = half of what is missing
  std::chrono::microseconds delay{0};   // delay: extra latency of the completion

  // Builders: FaultRule::of(FaultKind::eio, 0.05).for_tag(5).at_most(1).
  static FaultRule of(FaultKind k, double p = 1.0) {
    FaultRule r;
    r.kind = k;
    r.probability = p;
    return r;
  }
  FaultRule& for_tag(uint64_t t) { tag = t; return *this; }
  FaultRule& at_most(uint64_t hits) { max_hits = hits; return *this; }
  FaultRule& returning(size_t bytes) { short_bytes = bytes; return *this; }
  FaultRule& lasting(std::chrono::microseconds d) { delay = d; return *this; }
};

struct FaultPlan {
  uint64_t seed = 1;  // the one source of randomness (std::mt19937_64)
  std::vector<FaultRule> rules;
};

// Injections so far, per kind, and attempts seen.
struct FaultCounts {
  uint64_t attempts = 0;
  uint64_t short_reads = 0;
  uint64_t eagains = 0;
  uint64_t eios = 0;
  uint64_t eofs = 0;
  uint64_t delays = 0;
};

class FaultInjector;

class FaultInjectingBackend final : public IoBackend {
 public:
  // Builds the inner backend (`inner` as in create_io_backend, with `options`
  // plus this wrapper's attempt hook; options.attempt_hook must be null).
  // Errors: those of create_io_backend; invalid_argument for a bad plan
  // (probability outside [0, 1], a delay rule without delay).
  static Result<std::unique_ptr<FaultInjectingBackend>> create(IoBackendKind inner, const IoOptions& options,
                                                               FaultPlan plan);
  ~FaultInjectingBackend() override;

  // Replaces the rules (and reseeds); hit counts restart, counters do not.
  // Errors: invalid_argument as in create.
  Status set_plan(FaultPlan plan);
  FaultCounts counts() const;

  std::string name() const override;
  Result<FileId> open_file(const std::string& path) override { return inner_->open_file(path); }
  Result<FileInfo> file_info(FileId file) const override { return inner_->file_info(file); }
  Status close_file(FileId file) override;
  Status register_buffers(std::span<const std::span<std::byte>> regions) override;
  Status submit(std::span<const ReadRequest> requests) override { return inner_->submit(requests); }
  Status reap(size_t min_complete, std::chrono::nanoseconds timeout, std::vector<ReadCompletion>& out) override;
  void cancel_all() override;
  size_t outstanding() const override { return inner_->outstanding() + held_.size(); }
  uint32_t queue_depth() const override { return inner_->queue_depth(); }

 private:
  struct Held {
    std::chrono::steady_clock::time_point release;
    ReadCompletion completion;
  };
  FaultInjectingBackend() = default;
  size_t release_due(std::vector<ReadCompletion>& out);

  std::unique_ptr<FaultInjector> injector_;  // declared first: outlives inner_, which calls it
  std::unique_ptr<IoBackend> inner_;
  std::vector<Held> held_;                   // delayed completions
  std::vector<ReadCompletion> scratch_;
};

}  // namespace les::io
