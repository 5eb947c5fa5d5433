// IoBackend contract tests, run against every backend this machine can run
// (pread always; io_uring when built and the kernel allows it, otherwise the
// executable reports skipped through mark_skipped).
//
// Checked: random aligned and unaligned reads with many in flight, byte-exact
// against a pattern file; zero-length and invalid requests; reads past end of
// file; truncation under in-flight reads; cancel_all; close_file rules;
// registered pool buffers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include <unistd.h>

#include "support/aligned_buffer_pool.h"
#include "io/aligned_range.h"
#include "io/io_backend.h"
#include "io_backend_list.h"
#include "io_test_util.h"

using namespace les::io;
using les::StatusCode;
using les::test::first_mismatch;
using les::test::pattern_byte;
using les::test::write_pattern_file;

namespace {

constexpr uint64_t kFileSize = 8 * 1024 * 1024 + 1234;  // not a multiple of 4096: unaligned tail

const std::string& pattern_path() {
  static const std::string path = write_pattern_file("pattern.bin", kFileSize);
  return path;
}

std::vector<ReadCompletion> reap_all(IoBackend& b) {
  std::vector<ReadCompletion> out;
  while (b.outstanding() > 0) {
    auto st = b.reap(b.outstanding(), std::chrono::seconds(30), out);
    REQUIRE(st.ok());
  }
  return out;
}

}  // namespace

TEST_CASE("random aligned and unaligned reads, many in flight, byte-exact", "[io]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    for (bool direct : {true, false}) {
      DYNAMIC_SECTION(kind << (direct ? " O_DIRECT allowed" : " buffered")) {
        IoOptions opts;
        opts.queue_depth = 8;
        opts.use_direct_io = direct;
        auto backend = les::test::make_io_backend(kind, opts);
        if (!backend) continue;
        auto file = backend->open_file(pattern_path());
        REQUIRE(file.ok());
        auto info = backend->file_info(*file);
        REQUIRE(info.ok());
        CHECK(info->size_bytes == kFileSize);
        if (!direct) CHECK_FALSE(info->direct_io);
        if (direct && !info->direct_io)
          les::test::mark_skipped("O_DIRECT refused by the file system under " + les::test::temp_dir());

        constexpr size_t kRequests = 600;
        constexpr size_t kMaxLen = 300 * 1024;
        auto arena = AlignedBytes::allocate(kRequests * (kMaxLen + 8192), 4096);
        REQUIRE(arena.ok());
        std::mt19937_64 rng(42);
        std::vector<ReadRequest> reqs;
        for (size_t i = 0; i < kRequests; ++i) {
          ReadRequest r;
          r.tag = 1000 + i;
          r.file = *file;
          std::byte* slot = arena->data() + i * (kMaxLen + 8192);
          if (i % 2 == 0) {  // aligned: O_DIRECT-eligible offset, length and destination
            r.length = 4096 * (1 + rng() % (kMaxLen / 4096));
            r.offset = 4096 * (rng() % ((kFileSize - r.length) / 4096));
            r.dst = slot;
          } else {  // unaligned everything
            r.length = 1 + rng() % kMaxLen;
            r.offset = rng() % (kFileSize - r.length + 1);
            r.dst = slot + 1 + rng() % 4000;
          }
          reqs.push_back(r);
        }
        // Several batches, each larger than the queue depth.
        for (size_t i = 0; i < reqs.size(); i += 100) {
          REQUIRE(backend->submit(std::span(reqs).subspan(i, 100)).ok());
        }
        CHECK(backend->outstanding() == kRequests);
        auto done = reap_all(*backend);
        REQUIRE(done.size() == kRequests);
        std::set<uint64_t> tags;
        for (const auto& c : done) {
          INFO("tag " << c.tag << ": " << c.status.to_string());
          REQUIRE(c.status.ok());
          tags.insert(c.tag);
          const ReadRequest& r = reqs[c.tag - 1000];
          CHECK(c.bytes == r.length);
          CHECK(first_mismatch(r.dst, r.offset, r.length) == r.length);
        }
        CHECK(tags.size() == kRequests);
        CHECK(backend->close_file(*file).ok());
      }
    }
  }
}

TEST_CASE("zero-length requests complete ok; invalid batches are rejected whole", "[io]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    DYNAMIC_SECTION(kind) {
      auto backend = les::test::make_io_backend(kind, IoOptions{});
      if (!backend) continue;
      auto file = backend->open_file(pattern_path());
      REQUIRE(file.ok());
      std::vector<std::byte> buf(100);

      ReadRequest zero{7, *file, 123, 0, nullptr};
      REQUIRE(backend->submit({&zero, 1}).ok());
      auto done = reap_all(*backend);
      REQUIRE(done.size() == 1);
      CHECK(done[0].tag == 7);
      CHECK(done[0].status.ok());
      CHECK(done[0].bytes == 0);

      ReadRequest good{1, *file, 0, buf.size(), buf.data()};
      ReadRequest null_dst{2, *file, 0, 10, nullptr};
      ReadRequest bad_file{3, *file + 100, 0, 10, buf.data()};
      ReadRequest overflow{4, *file, UINT64_MAX - 5, 10, buf.data()};
      for (const ReadRequest& bad : {null_dst, bad_file, overflow}) {
        std::vector<ReadRequest> batch{good, bad};
        auto st = backend->submit(batch);
        CHECK(st.code() == StatusCode::invalid_argument);
        CHECK_THAT(st.message(), Catch::Contains("request 1 (tag " + std::to_string(bad.tag) + ")"));
        CHECK(backend->outstanding() == 0);
      }
      auto missing = backend->open_file(les::test::temp_dir() + "/does-not-exist.bin");
      CHECK(missing.status().code() == StatusCode::io);
      CHECK_THAT(missing.status().message(), Catch::Contains("does-not-exist.bin"));
      CHECK(backend->close_file(*file + 100).code() == StatusCode::invalid_argument);
    }
  }
}

TEST_CASE("reads past end of file complete with an io error naming the request", "[io]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    DYNAMIC_SECTION(kind) {
      auto backend = les::test::make_io_backend(kind, IoOptions{});
      if (!backend) continue;
      auto file = backend->open_file(pattern_path());
      REQUIRE(file.ok());
      auto buf = AlignedBytes::allocate(3 * 65536, 4096);
      REQUIRE(buf.ok());
      // Aligned start inside the file, crossing EOF (O_DIRECT then buffered tail).
      const uint64_t crossing_offset = (kFileSize / 4096 - 2) * 4096;
      ReadRequest crossing{11, *file, crossing_offset, 65536, buf->data()};
      // Entirely beyond EOF.
      ReadRequest beyond{12, *file, kFileSize + 5000, 100, buf->data() + 65536};
      ReadRequest ok_read{13, *file, 4096, 65536, buf->data() + 2 * 65536};
      std::vector<ReadRequest> batch{crossing, beyond, ok_read};
      REQUIRE(backend->submit(batch).ok());
      auto done = reap_all(*backend);
      REQUIRE(done.size() == 3);
      std::map<uint64_t, ReadCompletion> by_tag;
      for (auto& c : done) by_tag[c.tag] = c;

      const auto& c11 = by_tag.at(11);
      CHECK(c11.status.code() == StatusCode::io);
      CHECK(c11.bytes == kFileSize - crossing_offset);
      CHECK_THAT(c11.status.message(), Catch::Contains("tag 11") &&
                                           Catch::Contains("offset " + std::to_string(crossing_offset)) &&
                                           Catch::Contains("length 65536") &&
                                           Catch::Contains("end of file"));
      CHECK(first_mismatch(crossing.dst, crossing_offset, c11.bytes) == c11.bytes);

      const auto& c12 = by_tag.at(12);
      CHECK(c12.status.code() == StatusCode::io);
      CHECK(c12.bytes == 0);
      CHECK_THAT(c12.status.message(), Catch::Contains("tag 12"));

      const auto& c13 = by_tag.at(13);
      CHECK(c13.status.ok());
      CHECK(first_mismatch(ok_read.dst, 4096, 65536) == 65536);

      // Still usable after errors.
      REQUIRE(backend->submit({&ok_read, 1}).ok());
      auto again = reap_all(*backend);
      REQUIRE(again.size() == 1);
      CHECK(again[0].status.ok());
    }
  }
}

TEST_CASE("file truncated while reads are in flight", "[io]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    DYNAMIC_SECTION(kind) {
      const uint64_t size = 16 * 1024 * 1024;
      const std::string path = write_pattern_file("truncate-" + kind + ".bin", size);
      IoOptions opts;
      opts.queue_depth = 4;
      auto backend = les::test::make_io_backend(kind, opts);
      if (!backend) continue;
      auto file = backend->open_file(path);
      REQUIRE(file.ok());
      constexpr size_t kLen = 256 * 1024;
      const size_t n = size / kLen;
      auto buf = AlignedBytes::allocate(n * kLen, 4096);
      REQUIRE(buf.ok());
      std::vector<ReadRequest> reqs;
      for (size_t i = 0; i < n; ++i) reqs.push_back({i, *file, i * kLen, kLen, buf->data() + i * kLen});
      // First half in flight, then truncate to a quarter, then the second half.
      REQUIRE(backend->submit(std::span(reqs).first(n / 2)).ok());
      REQUIRE(::truncate(path.c_str(), static_cast<off_t>(size / 4)) == 0);
      REQUIRE(backend->submit(std::span(reqs).subspan(n / 2)).ok());
      auto done = reap_all(*backend);
      REQUIRE(done.size() == n);
      size_t errors = 0;
      for (const auto& c : done) {
        const ReadRequest& r = reqs[c.tag];
        INFO("tag " << c.tag << ": " << c.status.to_string());
        if (c.status.ok()) {
          CHECK(c.bytes == kLen);
        } else {
          ++errors;
          CHECK(c.status.code() == StatusCode::io);
          CHECK_THAT(c.status.message(), Catch::Contains("offset " + std::to_string(r.offset)));
          CHECK(c.bytes < kLen);
        }
        // Whatever arrived is the file's content (truncation never changes earlier bytes).
        CHECK(first_mismatch(r.dst, r.offset, c.bytes) == c.bytes);
        // Requests submitted after the truncation, entirely past the new end, must fail.
        if (c.tag >= n / 2) CHECK(c.status.code() == StatusCode::io);
      }
      CHECK(errors >= n / 2);
    }
  }
}

TEST_CASE("cancel_all completes every outstanding request exactly once", "[io]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    DYNAMIC_SECTION(kind) {
      IoOptions opts;
      opts.queue_depth = 2;
      auto backend = les::test::make_io_backend(kind, opts);
      if (!backend) continue;
      auto file = backend->open_file(pattern_path());
      REQUIRE(file.ok());
      constexpr size_t kLen = 64 * 1024;
      constexpr size_t n = 100;
      auto buf = AlignedBytes::allocate(n * kLen, 4096);
      REQUIRE(buf.ok());
      std::vector<ReadRequest> reqs;
      for (size_t i = 0; i < n; ++i) reqs.push_back({i, *file, i * kLen, kLen, buf->data() + i * kLen});
      REQUIRE(backend->submit(reqs).ok());
      CHECK(backend->close_file(*file).code() == StatusCode::invalid_argument);
      backend->cancel_all();
      std::vector<ReadCompletion> done;
      REQUIRE(backend->reap(0, std::chrono::nanoseconds(0), done).ok());
      REQUIRE(done.size() == n);
      CHECK(backend->outstanding() == 0);
      std::set<uint64_t> tags;
      size_t cancelled = 0;
      for (const auto& c : done) {
        tags.insert(c.tag);
        if (c.status.ok()) {
          CHECK(first_mismatch(reqs[c.tag].dst, reqs[c.tag].offset, kLen) == kLen);
        } else {
          CHECK(c.status.code() == StatusCode::cancelled);
          ++cancelled;
        }
      }
      CHECK(tags.size() == n);
      CHECK(cancelled > 0);  // queue depth 2: most of the 100 had not started
      // Usable afterwards; the file can be closed once nothing is outstanding.
      REQUIRE(backend->submit(std::span(reqs).first(3)).ok());
      auto after = reap_all(*backend);
      REQUIRE(after.size() == 3);
      for (const auto& c : after) CHECK(c.status.ok());
      CHECK(backend->close_file(*file).ok());
    }
  }
}

TEST_CASE("reap honours min_complete, timeout and an empty backend", "[io]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    DYNAMIC_SECTION(kind) {
      auto backend = les::test::make_io_backend(kind, IoOptions{});
      if (!backend) continue;
      std::vector<ReadCompletion> out;
      // Nothing outstanding: returns at once even when asked to wait forever.
      REQUIRE(backend->reap(5, kWaitForever, out).ok());
      CHECK(out.empty());
      auto file = backend->open_file(pattern_path());
      REQUIRE(file.ok());
      std::vector<std::byte> buf(4 * 1000);
      std::vector<ReadRequest> reqs;
      for (uint64_t i = 0; i < 4; ++i) reqs.push_back({i, *file, i * 777, 1000, buf.data() + i * 1000});
      REQUIRE(backend->submit(reqs).ok());
      REQUIRE(backend->reap(2, kWaitForever, out).ok());
      CHECK(out.size() >= 2);
      while (backend->outstanding() > 0) REQUIRE(backend->reap(1, std::chrono::milliseconds(100), out).ok());
      CHECK(out.size() == 4);
      for (const auto& c : out) {
        CHECK(c.status.ok());
        CHECK(first_mismatch(reqs[c.tag].dst, reqs[c.tag].offset, 1000) == 1000);
      }
    }
  }
}

TEST_CASE("reads into registered pool buffers", "[io]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    DYNAMIC_SECTION(kind) {
      auto backend = les::test::make_io_backend(kind, IoOptions{});
      if (!backend) continue;
      auto pool = AlignedBufferPool::create(128 * 1024, 16);
      REQUIRE(pool.ok());
      auto regions = pool->regions();
      const auto reg = backend->register_buffers(regions);
      INFO(reg.to_string());
      CHECK((reg.ok() || reg.code() == StatusCode::unsupported));
      if (!reg.ok()) les::test::mark_skipped(kind + ": buffers not registered: " + reg.to_string());
      auto file = backend->open_file(pattern_path());
      REQUIRE(file.ok());
      std::vector<AlignedBuffer> held;
      std::vector<ReadRequest> reqs;
      std::mt19937_64 rng(7);
      for (uint64_t i = 0; i < 16; ++i) {
        auto b = pool->acquire();
        REQUIRE(b.ok());
        ReadRequest r;
        r.tag = i;
        r.file = *file;
        const bool aligned = i % 2 == 0;
        r.length = aligned ? 128 * 1024 : 1 + rng() % (100 * 1024);
        r.offset = aligned ? 4096 * (rng() % 1000) : rng() % 1000000;
        r.dst = b->data() + (aligned ? 0 : 3);
        reqs.push_back(r);
        held.push_back(std::move(b).value());
      }
      REQUIRE(backend->submit(reqs).ok());
      auto done = reap_all(*backend);
      REQUIRE(done.size() == 16);
      for (const auto& c : done) {
        INFO("tag " << c.tag << ": " << c.status.to_string());
        CHECK(c.status.ok());
        CHECK(first_mismatch(reqs[c.tag].dst, reqs[c.tag].offset, reqs[c.tag].length) == reqs[c.tag].length);
      }
      // Re-registering with nothing outstanding is allowed.
      CHECK(backend->register_buffers({}).ok());
    }
  }
}

TEST_CASE("widen_to_alignment: aligned bounds, clamped at end of file", "[io]") {
  auto w = widen_to_alignment(9000, 100, 10000, 4096);
  CHECK(w.offset == 8192);
  CHECK(w.length == 10000 - 8192);  // clamped at end of file
  CHECK(w.skip == 808);
  w = widen_to_alignment(5000, 100, 1 << 20, 4096);
  CHECK(w.offset == 4096);
  CHECK(w.length == 4096);
  w = widen_to_alignment(8192, 4096, 1 << 20, 4096);  // already aligned: unchanged
  CHECK(w.offset == 8192);
  CHECK(w.length == 4096);
  CHECK(w.skip == 0);
  w = widen_to_alignment(4095, 2, 1 << 20, 4096);  // straddles a boundary
  CHECK(w.offset == 0);
  CHECK(w.length == 8192);
  CHECK(w.skip == 4095);
  CHECK(w.length <= widened_capacity(2, 4096));
}

TEST_CASE("widened reads of arbitrary ranges, including the file's unaligned tail", "[io]") {
  for (const auto& kind : les::test::io_backend_kinds()) {
    DYNAMIC_SECTION(kind) {
      auto backend = les::test::make_io_backend(kind, IoOptions{});
      if (!backend) continue;
      auto file = backend->open_file(pattern_path());
      REQUIRE(file.ok());
      constexpr size_t kMaxLen = 100000;
      auto pool = AlignedBufferPool::create(widened_capacity(kMaxLen, 4096), 64);
      REQUIRE(pool.ok());
      std::mt19937_64 rng(5);
      std::vector<AlignedBuffer> bufs;
      std::vector<ReadRequest> reqs;
      std::vector<std::pair<uint64_t, size_t>> wanted;  // offset, length
      std::vector<size_t> skips;
      for (uint64_t i = 0; i < 64; ++i) {
        size_t len = 1 + rng() % kMaxLen;
        uint64_t off = rng() % (kFileSize - len + 1);
        if (i == 0) off = kFileSize - len;  // ends exactly at the unaligned end of file
        const WidenedRange w = widen_to_alignment(off, len, kFileSize, 4096);
        auto b = pool->acquire();
        REQUIRE(b.ok());
        REQUIRE(w.length <= b->size());
        reqs.push_back({i, *file, w.offset, w.length, b->data()});
        wanted.emplace_back(off, len);
        skips.push_back(w.skip);
        bufs.push_back(std::move(b).value());
      }
      REQUIRE(backend->submit(reqs).ok());
      auto done = reap_all(*backend);
      REQUIRE(done.size() == 64);
      for (const auto& c : done) {
        INFO("tag " << c.tag << ": " << c.status.to_string());
        REQUIRE(c.status.ok());
        const auto [off, len] = wanted[c.tag];
        CHECK(first_mismatch(bufs[c.tag].data() + skips[c.tag], off, len) == len);
      }
    }
  }
}
