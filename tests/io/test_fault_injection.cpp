// Fault-injection matrix over every backend this machine runs: injected short
// reads are finished by resubmission, EAGAIN is requeued, EIO and early EOF
// surface as io errors naming the request, delays hold completions back, and
// the backend stays usable after each fault. Content is verified byte-exact.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>

#include "support/aligned_buffer_pool.h"
#include "io/fault_injecting_backend.h"
#include "io_backend_list.h"
#include "io_test_util.h"

using namespace les::io;
using les::StatusCode;
using les::test::first_mismatch;
using les::test::write_pattern_file;

namespace {

constexpr uint64_t kFileSize = 4 * 1024 * 1024 + 777;

const std::string& pattern_path() {
  static const std::string path = write_pattern_file("fault-pattern.bin", kFileSize);
  return path;
}

// nullptr (after mark_skipped) when the inner backend is unavailable here.
std::unique_ptr<FaultInjectingBackend> make(const std::string& kind, FaultPlan plan, uint32_t qd = 8) {
  auto k = parse_io_backend_kind(kind);
  REQUIRE(k.ok());
  IoOptions o;
  o.queue_depth = qd;
  auto r = FaultInjectingBackend::create(*k, o, std::move(plan));
  if (!r.ok() && r.status().code() == StatusCode::unsupported) {
    les::test::mark_skipped(kind + " backend: " + r.status().to_string());
    return nullptr;
  }
  REQUIRE(r.ok());
  return std::move(r).value();
}

// Mixed aligned/unaligned random requests into one arena; tag = index.
struct Batch {
  les::io::AlignedBytes arena;
  std::vector<ReadRequest> reqs;
};

Batch random_batch(FileId file, size_t n, uint64_t seed) {
  constexpr size_t kMaxLen = 200 * 1024;
  Batch b;
  auto arena = AlignedBytes::allocate(n * (kMaxLen + 8192), 4096);
  REQUIRE(arena.ok());
  b.arena = std::move(arena).value();
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; ++i) {
    ReadRequest r;
    r.tag = i;
    r.file = file;
    std::byte* slot = b.arena.data() + i * (kMaxLen + 8192);
    if (i % 2 == 0) {
      r.length = 4096 * (1 + rng() % (kMaxLen / 4096));
      r.offset = 4096 * (rng() % ((kFileSize - r.length) / 4096));
      r.dst = slot;
    } else {
      r.length = 1 + rng() % kMaxLen;
      r.offset = rng() % (kFileSize - r.length + 1);
      r.dst = slot + 1 + rng() % 4000;
    }
    b.reqs.push_back(r);
  }
  return b;
}

std::vector<ReadCompletion> reap_all(IoBackend& b) {
  std::vector<ReadCompletion> out;
  while (b.outstanding() > 0) REQUIRE(b.reap(b.outstanding(), std::chrono::seconds(30), out).ok());
  return out;
}

void require_all_exact(const Batch& b, const std::vector<ReadCompletion>& done) {
  REQUIRE(done.size() == b.reqs.size());
  std::set<uint64_t> tags;
  for (const auto& c : done) {
    INFO("tag " << c.tag << ": " << c.status.to_string());
    REQUIRE(c.status.ok());
    const ReadRequest& r = b.reqs[c.tag];
    CHECK(c.bytes == r.length);
    CHECK(first_mismatch(r.dst, r.offset, r.length) == r.length);
    tags.insert(c.tag);
  }
  CHECK(tags.size() == b.reqs.size());
}

}  // namespace

TEST_CASE("injected short reads are completed by resubmission", "[io][fault]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    for (size_t short_bytes : {size_t{0}, size_t{1000}, size_t{12288}}) {
      DYNAMIC_SECTION(kind << " short_bytes " << short_bytes) {
        FaultPlan plan;
        plan.rules.push_back(FaultRule::of(FaultKind::short_read, 0.7).returning(short_bytes));
        auto b = make(kind, plan);
        if (!b) continue;
        auto file = b->open_file(pattern_path());
        REQUIRE(file.ok());
        Batch batch = random_batch(*file, 120, 3 + short_bytes);
        REQUIRE(b->submit(batch.reqs).ok());
        require_all_exact(batch, reap_all(*b));
        CHECK(b->counts().short_reads > 50);
        CHECK(b->counts().attempts > batch.reqs.size());
      }
    }
  }
}

TEST_CASE("injected EAGAIN is requeued", "[io][fault]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    DYNAMIC_SECTION(kind) {
      FaultPlan plan;
      plan.seed = 99;
      plan.rules.push_back(FaultRule::of(FaultKind::eagain, 0.5));
      auto b = make(kind, plan, 4);
      if (!b) continue;
      auto file = b->open_file(pattern_path());
      REQUIRE(file.ok());
      Batch batch = random_batch(*file, 100, 5);
      REQUIRE(b->submit(batch.reqs).ok());
      require_all_exact(batch, reap_all(*b));
      CHECK(b->counts().eagains > 20);
    }
  }
}

TEST_CASE("a lone request answered EAGAIN many times in a row still completes", "[io][fault]") {
  // Nothing else in flight: the backend itself must issue the requeued attempt again
  // (dispatch_io once stalled here: the retry waited for a completion that never came).
  for (const auto& kind : les::test::io_backend_kinds()) {
    DYNAMIC_SECTION(kind) {
      FaultPlan plan;
      plan.rules.push_back(FaultRule::of(FaultKind::eagain, 1.0).at_most(40));
      auto b = make(kind, plan, 1);
      if (!b) continue;
      auto file = b->open_file(pattern_path());
      REQUIRE(file.ok());
      auto buf = AlignedBytes::allocate(8192, 4096);
      REQUIRE(buf.ok());
      const ReadRequest r{7, *file, 4096, 8192, buf->data()};
      REQUIRE(b->submit({&r, 1}).ok());
      std::vector<ReadCompletion> done;
      REQUIRE(b->reap(1, std::chrono::seconds(30), done).ok());
      REQUIRE(done.size() == 1);
      CHECK(done[0].status.ok());
      CHECK(first_mismatch(r.dst, r.offset, r.length) == r.length);
      CHECK(b->counts().eagains == 40);
    }
  }
}

TEST_CASE("injected EIO fails only that request, names it, and the backend stays usable", "[io][fault]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    DYNAMIC_SECTION(kind) {
      FaultPlan plan;
      // Tag 5: one short read first (so part of it has arrived), then EIO once.
      plan.rules.push_back(FaultRule::of(FaultKind::short_read).for_tag(5).at_most(1).returning(4096));
      plan.rules.push_back(FaultRule::of(FaultKind::eio).for_tag(5).at_most(1));
      auto b = make(kind, plan);
      if (!b) continue;
      auto file = b->open_file(pattern_path());
      REQUIRE(file.ok());
      Batch batch = random_batch(*file, 20, 11);
      REQUIRE(b->submit(batch.reqs).ok());
      auto done = reap_all(*b);
      REQUIRE(done.size() == 20);
      for (const auto& c : done) {
        const ReadRequest& r = batch.reqs[c.tag];
        if (c.tag != 5) {
          CHECK(c.status.ok());
          CHECK(first_mismatch(r.dst, r.offset, r.length) == r.length);
          continue;
        }
        CHECK(c.status.code() == StatusCode::io);
        CHECK(c.bytes == 4096);
        CHECK_THAT(c.status.message(), Catch::Contains("tag 5") &&
                                           Catch::Contains("offset " + std::to_string(r.offset)) &&
                                           Catch::Contains("length " + std::to_string(r.length)) &&
                                           Catch::Contains("errno 5"));
        CHECK(first_mismatch(r.dst, r.offset, c.bytes) == c.bytes);
      }
      // Both rules are spent: the same request now succeeds.
      REQUIRE(b->submit({&batch.reqs[5], 1}).ok());
      auto again = reap_all(*b);
      REQUIRE(again.size() == 1);
      CHECK(again[0].status.ok());
      CHECK(first_mismatch(batch.reqs[5].dst, batch.reqs[5].offset, batch.reqs[5].length) ==
            batch.reqs[5].length);
    }
  }
}

TEST_CASE("injected early end of file (truncation) is an io error with the bytes that arrived", "[io][fault]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    DYNAMIC_SECTION(kind) {
      FaultPlan plan;
      plan.rules.push_back(FaultRule::of(FaultKind::short_read).for_tag(7).at_most(1).returning(8192));
      plan.rules.push_back(FaultRule::of(FaultKind::eof).for_tag(7));
      auto b = make(kind, plan);
      if (!b) continue;
      auto file = b->open_file(pattern_path());
      REQUIRE(file.ok());
      Batch batch = random_batch(*file, 10, 13);
      batch.reqs[7].length = std::max<size_t>(batch.reqs[7].length, 20000);
      REQUIRE(b->submit(batch.reqs).ok());
      auto done = reap_all(*b);
      REQUIRE(done.size() == 10);
      for (const auto& c : done) {
        const ReadRequest& r = batch.reqs[c.tag];
        if (c.tag == 7) {
          CHECK(c.status.code() == StatusCode::io);
          CHECK(c.bytes == 8192);
          CHECK_THAT(c.status.message(), Catch::Contains("tag 7") && Catch::Contains("end of file"));
          CHECK(first_mismatch(r.dst, r.offset, 8192) == 8192);
        } else {
          CHECK(c.status.ok());
          CHECK(first_mismatch(r.dst, r.offset, r.length) == r.length);
        }
      }
      CHECK(b->counts().eofs == 1);
    }
  }
}

TEST_CASE("delays hold completions back without losing or corrupting them", "[io][fault]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    DYNAMIC_SECTION(kind) {
      FaultPlan plan;
      plan.rules.push_back(FaultRule::of(FaultKind::delay).lasting(std::chrono::milliseconds(200)));
      auto b = make(kind, plan);
      if (!b) continue;
      auto file = b->open_file(pattern_path());
      REQUIRE(file.ok());
      Batch batch = random_batch(*file, 16, 17);
      REQUIRE(b->submit(batch.reqs).ok());
      std::vector<ReadCompletion> early;
      // Every completion is held >= 200 ms after it arrives; a 20 ms reap sees none.
      REQUIRE(b->reap(16, std::chrono::milliseconds(20), early).ok());
      CHECK(early.empty());
      CHECK(b->outstanding() == 16);
      CHECK(b->close_file(*file).code() == StatusCode::invalid_argument);
      require_all_exact(batch, reap_all(*b));
      CHECK(b->counts().delays == 16);
      // cancel_all makes held completions due at once.
      REQUIRE(b->submit(batch.reqs).ok());
      REQUIRE(b->reap(1, std::chrono::milliseconds(20), early).ok());
      b->cancel_all();
      std::vector<ReadCompletion> rest;
      REQUIRE(b->reap(0, std::chrono::nanoseconds(0), rest).ok());
      CHECK(early.size() + rest.size() == 16);
      CHECK(b->outstanding() == 0);
      CHECK(b->close_file(*file).ok());
    }
  }
}

TEST_CASE("seeded random fault mix: every request is exact or a named io error", "[io][fault]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    DYNAMIC_SECTION(kind) {
      FaultPlan plan;
      plan.seed = 2024;
      plan.rules.push_back(FaultRule::of(FaultKind::eio, 0.05));
      plan.rules.push_back(FaultRule::of(FaultKind::short_read, 0.3));
      plan.rules.push_back(FaultRule::of(FaultKind::eagain, 0.2));
      auto b = make(kind, plan, 16);
      if (!b) continue;
      auto file = b->open_file(pattern_path());
      REQUIRE(file.ok());
      Batch batch = random_batch(*file, 300, 19);
      REQUIRE(b->submit(batch.reqs).ok());
      auto done = reap_all(*b);
      REQUIRE(done.size() == 300);
      uint64_t errors = 0;
      std::set<uint64_t> tags;
      for (const auto& c : done) {
        tags.insert(c.tag);
        const ReadRequest& r = batch.reqs[c.tag];
        if (c.status.ok()) {
          CHECK(c.bytes == r.length);
          CHECK(first_mismatch(r.dst, r.offset, r.length) == r.length);
        } else {
          ++errors;
          CHECK(c.status.code() == StatusCode::io);
          CHECK_THAT(c.status.message(), Catch::Contains("tag " + std::to_string(c.tag) + " ") &&
                                             Catch::Contains("errno 5"));
          CHECK(first_mismatch(r.dst, r.offset, c.bytes) == c.bytes);
        }
      }
      CHECK(tags.size() == 300);
      const FaultCounts k = b->counts();
      CHECK(errors == k.eios);  // each injected EIO ends exactly one request
      CHECK(errors > 0);
      CHECK(k.short_reads > 0);
      CHECK(k.eagains > 0);
      // A clean plan afterwards: everything succeeds.
      REQUIRE(b->set_plan(FaultPlan{}).ok());
      REQUIRE(b->submit(batch.reqs).ok());
      require_all_exact(batch, reap_all(*b));
    }
  }
}

TEST_CASE("bad fault plans are rejected", "[io][fault]") {
  FaultPlan p1;
  p1.rules.push_back(FaultRule::of(FaultKind::eio, 1.5));
  CHECK(FaultInjectingBackend::create(IoBackendKind::pread, IoOptions{}, p1).status().code() ==
        StatusCode::invalid_argument);
  FaultPlan p2;
  p2.rules.push_back(FaultRule::of(FaultKind::delay));
  CHECK(FaultInjectingBackend::create(IoBackendKind::pread, IoOptions{}, p2).status().code() ==
        StatusCode::invalid_argument);
}
