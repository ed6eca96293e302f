// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// BufferPool (src/buffer_pool.h): blocks come back when the last view is
// released, are reused by size, are never handed out while still viewed,
// and outlive the pool safely.
#include "buffer_pool.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace dataecho::internal {
namespace {

TEST(BufferPoolTest, ReusesAReleasedBlock) {
  auto pool = BufferPool::Create(/*alignment=*/64);
  MutableBuffer first = pool->Get(1000);
  ASSERT_EQ(first.size(), 1000u);
  const uint8_t* block = first.data();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 64, 0u);
  EXPECT_EQ(pool->allocations(), 1);
  { Buffer frozen = std::move(first).Freeze(); }  // last view gone: back to the pool
  MutableBuffer second = pool->Get(1000);
  EXPECT_EQ(second.data(), block);  // the same allocation
  EXPECT_EQ(pool->allocations(), 1);
}

TEST(BufferPoolTest, NeverHandsOutABlockStillViewed) {
  auto pool = BufferPool::Create(64);
  MutableBuffer m = pool->Get(256);
  std::memset(m.data(), 0xAB, 256);
  const Buffer held = std::move(m).Freeze();
  Buffer slice = held.Slice(16, 32);  // another view of the same block
  {
    Buffer copy = held;  // a third view, released at once: the block stays out
  }
  MutableBuffer other = pool->Get(256);
  EXPECT_NE(other.data(), held.data());
  std::memset(other.data(), 0xCD, 256);  // writing it leaves the held bytes alone
  EXPECT_EQ(held.data()[0], 0xAB);
  EXPECT_EQ(slice.data()[0], 0xAB);
  EXPECT_EQ(pool->allocations(), 2);
}

TEST(BufferPoolTest, ReturnsWhenTheLastOfSeveralViewsGoes) {
  auto pool = BufferPool::Create(64);
  const uint8_t* block;
  Buffer slice;
  {
    Buffer whole = pool->Get(128).Freeze();
    block = whole.data();
    slice = whole.Slice(8, 8);
  }
  EXPECT_NE(pool->Get(128).data(), block);  // the slice still views it
  slice = Buffer();
  EXPECT_EQ(pool->Get(128).data(), block);
}

TEST(BufferPoolTest, BlocksAreKeptBySize) {
  auto pool = BufferPool::Create(64);
  const uint8_t* small = nullptr;
  {
    MutableBuffer a = pool->Get(100);
    small = a.data();
  }
  MutableBuffer big = pool->Get(200);  // the idle 100-byte block does not fit
  EXPECT_NE(big.data(), small);
  EXPECT_EQ(big.size(), 200u);
  EXPECT_EQ(pool->allocations(), 2);
  MutableBuffer again = pool->Get(100);
  EXPECT_EQ(again.data(), small);
  EXPECT_EQ(pool->allocations(), 2);
}

TEST(BufferPoolTest, KeepsAtMostMaxFreePerSize) {
  auto pool = BufferPool::Create(64, /*max_free_per_size=*/2);
  {
    std::vector<MutableBuffer> out;
    for (int i = 0; i < 5; ++i) out.push_back(pool->Get(64));
  }  // five come back, two are kept
  EXPECT_EQ(pool->allocations(), 5);
  std::vector<MutableBuffer> again;
  for (int i = 0; i < 5; ++i) again.push_back(pool->Get(64));
  EXPECT_EQ(pool->allocations(), 8);  // two reused, three new
}

TEST(BufferPoolTest, SteadyStateAllocatesNothing) {
  auto pool = BufferPool::Create(64);
  for (int step = 0; step < 1000; ++step) {
    Buffer batch = pool->Get(65536).Freeze();
    Buffer echoed = batch;  // a repeat holds the same block until released
  }
  EXPECT_EQ(pool->allocations(), 1);
}

TEST(BufferPoolTest, ABlockMayOutliveItsPool) {
  auto pool = BufferPool::Create(64);
  MutableBuffer block = pool->Get(512);
  std::memset(block.data(), 1, 512);
  Buffer kept = std::move(block).Freeze();
  pool.reset();  // the block is freed, not returned, when its last view goes
  EXPECT_EQ(kept.data()[511], 1);
}

TEST(BufferPoolTest, ViewsReleasedOnOtherThreads) {
  auto pool = BufferPool::Create(64, /*max_free_per_size=*/8);
  for (int round = 0; round < 50; ++round) {
    std::vector<Buffer> buffers;
    for (int i = 0; i < 8; ++i) buffers.push_back(pool->Get(4096).Freeze());
    std::vector<std::thread> threads;
    for (Buffer& b : buffers) threads.emplace_back([b = std::move(b)]() mutable { b = Buffer(); });
    for (std::thread& t : threads) t.join();
  }
  EXPECT_EQ(pool->allocations(), 8);
}

}  // namespace
}  // namespace dataecho::internal
