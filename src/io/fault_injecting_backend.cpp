#include "io/fault_injecting_backend.h"

#include <algorithm>
#include <mutex>
#include <random>
#include <thread>

#include "io/io_options_check.h"

namespace les::io {

namespace {

Status check_plan(const FaultPlan& plan) {
  for (size_t i = 0; i < plan.rules.size(); ++i) {
    const FaultRule& r = plan.rules[i];
    if (!(r.probability >= 0.0 && r.probability <= 1.0)) {
      return invalid_argument_error("fault plan rule " + std::to_string(i) + ": probability " +
                                    std::to_string(r.probability) + " outside [0, 1]");
    }
    if (r.kind == FaultKind::delay && r.delay.count() <= 0) {
      return invalid_argument_error("fault plan rule " + std::to_string(i) + ": delay rule needs delay > 0");
    }
  }
  return Status();
}

}  // namespace

// The rule engine: ReadAttemptHook for the inner backend, delay decisions for
// the wrapper. All state behind one mutex (pread workers call it concurrently).
class FaultInjector final : public ReadAttemptHook {
 public:
  void set_plan(FaultPlan plan) {
    std::lock_guard<std::mutex> lock(mu_);
    hits_.assign(plan.rules.size(), 0);
    rng_.seed(plan.seed);
    plan_ = std::move(plan);
  }

  AttemptFault before_attempt(const ReadRequest& request, uint64_t, size_t remaining) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.attempts;
    const FaultRule* r = fire(request.tag, /*delay_rules=*/false);
    AttemptFault f;
    if (r == nullptr) return f;
    switch (r->kind) {
      case FaultKind::short_read:
        f.kind = AttemptFault::Kind::short_read;
        f.max_bytes = r->short_bytes != 0 ? r->short_bytes : std::max<size_t>(1, remaining / 2);
        ++counts_.short_reads;
        break;
      case FaultKind::eagain: f.kind = AttemptFault::Kind::eagain; ++counts_.eagains; break;
      case FaultKind::eio: f.kind = AttemptFault::Kind::eio; ++counts_.eios; break;
      case FaultKind::eof: f.kind = AttemptFault::Kind::eof; ++counts_.eofs; break;
      case FaultKind::delay: break;  // not an attempt rule
    }
    return f;
  }

  // Extra latency for a completion (0 = none).
  std::chrono::microseconds delay_for(uint64_t tag) {
    std::lock_guard<std::mutex> lock(mu_);
    const FaultRule* r = fire(tag, /*delay_rules=*/true);
    if (r == nullptr) return std::chrono::microseconds(0);
    ++counts_.delays;
    return r->delay;
  }

  FaultCounts counts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_;
  }

 private:
  // First eligible rule of the wanted family whose coin flip succeeds; counts its hit. Caller holds mu_.
  const FaultRule* fire(uint64_t tag, bool delay_rules) {
    for (size_t i = 0; i < plan_.rules.size(); ++i) {
      const FaultRule& r = plan_.rules[i];
      if ((r.kind == FaultKind::delay) != delay_rules) continue;
      if (r.tag.has_value() && *r.tag != tag) continue;
      if (hits_[i] >= r.max_hits) continue;
      if (r.probability < 1.0 && !(std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < r.probability)) {
        continue;
      }
      ++hits_[i];
      return &r;
    }
    return nullptr;
  }

  mutable std::mutex mu_;
  FaultPlan plan_;
  std::vector<uint64_t> hits_;
  std::mt19937_64 rng_;
  FaultCounts counts_;
};

Result<std::unique_ptr<FaultInjectingBackend>> FaultInjectingBackend::create(IoBackendKind inner,
                                                                             const IoOptions& options,
                                                                             FaultPlan plan) {
  if (options.attempt_hook != nullptr) {
    return invalid_argument_error("fault injecting backend: options.attempt_hook is already set");
  }
  LES_RETURN_IF_ERROR(check_plan(plan));
  std::unique_ptr<FaultInjectingBackend> b(new FaultInjectingBackend());
  b->injector_ = std::make_unique<FaultInjector>();
  b->injector_->set_plan(std::move(plan));
  IoOptions o = options;
  o.attempt_hook = b->injector_.get();
  LES_ASSIGN_OR_RETURN(b->inner_, create_io_backend(inner, o));
  return b;
}

FaultInjectingBackend::~FaultInjectingBackend() = default;

Status FaultInjectingBackend::set_plan(FaultPlan plan) {
  LES_RETURN_IF_ERROR(check_plan(plan));
  injector_->set_plan(std::move(plan));
  return Status();
}

FaultCounts FaultInjectingBackend::counts() const { return injector_->counts(); }

std::string FaultInjectingBackend::name() const { return "fault_injecting(" + inner_->name() + ")"; }

Status FaultInjectingBackend::close_file(FileId file) {
  // The inner backend counts a request as outstanding until it reaps it; a
  // held (delayed) completion was reaped already, so refuse here too.
  if (!held_.empty()) {
    return invalid_argument_error("close_file: " + std::to_string(held_.size()) +
                                  " delayed completions not yet reaped");
  }
  return inner_->close_file(file);
}

Status FaultInjectingBackend::register_buffers(std::span<const std::span<std::byte>> regions) {
  if (!held_.empty()) return invalid_argument_error("register_buffers: requests outstanding");
  return inner_->register_buffers(regions);
}

size_t FaultInjectingBackend::release_due(std::vector<ReadCompletion>& out) {
  const auto now = std::chrono::steady_clock::now();
  size_t n = 0;
  auto it = std::stable_partition(held_.begin(), held_.end(), [&](const Held& h) { return h.release > now; });
  for (auto j = it; j != held_.end(); ++j, ++n) out.push_back(std::move(j->completion));
  held_.erase(it, held_.end());
  return n;
}

Status FaultInjectingBackend::reap(size_t min_complete, std::chrono::nanoseconds timeout,
                                   std::vector<ReadCompletion>& out) {
  min_complete = std::min(min_complete, outstanding());
  const auto deadline = deadline_after(timeout);
  size_t got = 0;
  for (;;) {
    got += release_due(out);
    if (got >= min_complete || outstanding() == 0) return Status();
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return Status();
    auto until = deadline;
    for (const Held& h : held_) until = std::min(until, h.release);
    if (inner_->outstanding() == 0) {
      std::this_thread::sleep_until(until);
      continue;
    }
    scratch_.clear();
    const auto wait = until == std::chrono::steady_clock::time_point::max()
                          ? kWaitForever
                          : std::chrono::duration_cast<std::chrono::nanoseconds>(until - now);
    LES_RETURN_IF_ERROR(inner_->reap(1, wait, scratch_));
    const auto arrived = std::chrono::steady_clock::now();
    for (ReadCompletion& c : scratch_) {
      const auto d = injector_->delay_for(c.tag);
      if (d.count() > 0) {
        held_.push_back({arrived + d, std::move(c)});
      } else {
        out.push_back(std::move(c));
        ++got;
      }
    }
  }
}

void FaultInjectingBackend::cancel_all() {
  inner_->cancel_all();
  // Everything the inner backend finished (or cancelled), and every delayed
  // completion, is due now: the next reap must not wait.
  scratch_.clear();
  (void)inner_->reap(0, std::chrono::nanoseconds(0), scratch_);
  for (Held& h : held_) h.release = std::chrono::steady_clock::time_point::min();
  for (ReadCompletion& c : scratch_) held_.push_back({std::chrono::steady_clock::time_point::min(), std::move(c)});
}

}  // namespace les::io
