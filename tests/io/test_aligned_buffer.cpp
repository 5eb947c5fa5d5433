// AlignedBytes and AlignedBufferPool: alignment, exhaustion, exactly-once
// release through move-only handles, handles outliving the pool, bad arguments.
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "support/aligned_buffer_pool.h"

using namespace les::io;
using les::StatusCode;

TEST_CASE("AlignedBytes is aligned, zeroed and rejects bad alignment", "[io]") {
  auto b = AlignedBytes::allocate(10000, 4096);
  REQUIRE(b.ok());
  CHECK(reinterpret_cast<uintptr_t>(b->data()) % 4096 == 0);
  CHECK(b->size() == 10000);
  for (size_t i = 0; i < b->size(); ++i) REQUIRE(b->data()[i] == std::byte{0});
  AlignedBytes moved = std::move(b).value();
  CHECK(moved.size() == 10000);
  CHECK(AlignedBytes::allocate(100, 3000).status().code() == StatusCode::invalid_argument);
  CHECK(AlignedBytes::allocate(100, 2).status().code() == StatusCode::invalid_argument);
  CHECK(AlignedBytes::allocate(SIZE_MAX - 10, 4096).status().code() == StatusCode::invalid_argument);
}

TEST_CASE("AlignedBufferPool hands out aligned buffers and takes each back exactly once", "[io]") {
  auto pool_r = AlignedBufferPool::create(5000, 4);
  REQUIRE(pool_r.ok());
  AlignedBufferPool pool = std::move(pool_r).value();
  CHECK(pool.buffer_bytes() == 8192);  // rounded up to the alignment
  CHECK(pool.capacity() == 4);
  CHECK(pool.available() == 4);

  std::vector<AlignedBuffer> held;
  std::set<uint32_t> indices;
  for (int i = 0; i < 4; ++i) {
    auto b = pool.acquire();
    REQUIRE(b.ok());
    CHECK(reinterpret_cast<uintptr_t>(b->data()) % 4096 == 0);
    CHECK(b->size() == 8192);
    indices.insert(b->index());
    held.push_back(std::move(b).value());
  }
  CHECK(indices.size() == 4);
  CHECK(pool.available() == 0);
  auto exhausted = pool.acquire();
  CHECK(exhausted.status().code() == StatusCode::out_of_memory);
  CHECK_THAT(exhausted.status().message(), Catch::Contains("exhausted"));

  // Regions match the handed-out buffers.
  auto regions = pool.regions();
  REQUIRE(regions.size() == 4);
  for (const auto& h : held) CHECK(regions[h.index()].data() == h.data());

  // Moving transfers ownership; the moved-from handle releases nothing.
  AlignedBuffer moved = std::move(held[0]);
  CHECK(held[0].empty());
  held[0].release();  // no-op on an empty handle
  CHECK(pool.available() == 0);
  moved.release();
  CHECK(moved.empty());
  CHECK(pool.available() == 1);
  moved.release();  // second release of the same handle: no-op
  CHECK(pool.available() == 1);

  // Move-assignment over a live handle releases the overwritten buffer.
  held[1] = std::move(held[2]);
  CHECK(pool.available() == 2);
  held.clear();  // destructors release the rest
  CHECK(pool.available() == 4);
}

TEST_CASE("a handle may outlive its pool", "[io]") {
  AlignedBuffer survivor;
  {
    auto pool = AlignedBufferPool::create(4096, 2);
    REQUIRE(pool.ok());
    auto b = pool->acquire();
    REQUIRE(b.ok());
    survivor = std::move(b).value();
  }
  survivor.data()[0] = std::byte{1};  // arena still alive
  survivor.release();
  CHECK(survivor.empty());
}

TEST_CASE("AlignedBufferPool is safe to use from several threads", "[io]") {
  auto pool = AlignedBufferPool::create(4096, 8);
  REQUIRE(pool.ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pool] {
      for (int i = 0; i < 2000; ++i) {
        auto b = pool->acquire();
        if (b.ok()) b->data()[0] = std::byte{1};
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(pool->available() == 8);
}

TEST_CASE("AlignedBufferPool rejects bad arguments", "[io]") {
  CHECK(AlignedBufferPool::create(0, 4).status().code() == StatusCode::invalid_argument);
  CHECK(AlignedBufferPool::create(4096, 0).status().code() == StatusCode::invalid_argument);
  CHECK(AlignedBufferPool::create(4096, 4, 1000).status().code() == StatusCode::invalid_argument);
  CHECK(AlignedBufferPool::create(SIZE_MAX / 4, 1000).status().code() == StatusCode::invalid_argument);
}
