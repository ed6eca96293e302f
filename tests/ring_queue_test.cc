// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/internal/ring_queue.h"

#include <deque>
#include <memory>
#include <optional>

#include "dataecho/internal/random.h"
#include "gtest/gtest.h"

namespace dataecho::internal {
namespace {

// Random pushes, pops and resizes (growing across the ring's wrap point)
// leave the same elements in the same order as a std::deque.
TEST(RingQueueTest, BehavesLikeADeque) {
  RingQueue<std::optional<int>> ring;
  std::deque<std::optional<int>> deque;
  Rng rng(7);
  int next = 0;
  for (int step = 0; step < 20000; ++step) {
    const uint64_t op = rng.Below(10);
    if (op < 5) {
      ring.push_back(next);
      deque.push_back(next);
      ++next;
    } else if (op < 9 && !deque.empty()) {
      ASSERT_EQ(ring.front(), deque.front());
      ring.pop_front();
      deque.pop_front();
    } else if (op == 9) {
      const size_t n = rng.Below(deque.size() + 40);
      ring.resize(n);
      deque.resize(n);
    }
    ASSERT_EQ(ring.size(), deque.size());
    for (size_t i = 0; i < deque.size(); i += 7) ASSERT_EQ(ring[i], deque[i]) << step;
  }
  ring.clear();
  EXPECT_TRUE(ring.empty());
}

// A popped or dropped element is released at once, not when its slot is
// reused.
TEST(RingQueueTest, ReleasesWhatItDrops) {
  auto shared = std::make_shared<int>(1);
  RingQueue<std::shared_ptr<int>> ring;
  for (int i = 0; i < 3; ++i) ring.push_back(shared);
  EXPECT_EQ(shared.use_count(), 4);
  ring.pop_front();
  EXPECT_EQ(shared.use_count(), 3);
  ring.resize(1);
  EXPECT_EQ(shared.use_count(), 2);
  ring.clear();
  EXPECT_EQ(shared.use_count(), 1);
}

}  // namespace
}  // namespace dataecho::internal
