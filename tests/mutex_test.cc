// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal::Mutex's signals deferred to Unlock(): each reaches a waiter, none
// is lost when the signalling thread waits instead of unlocking. A lost
// signal hangs the test, which then fails by its ctest timeout.
#include "dataecho/internal/mutex.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace dataecho::internal {
namespace {

// Each test first waits until the other thread sleeps on its condition
// variable (it says so, then waits: the wait lets go of the mutex, which is
// what lets the test go on), so that only the signal under test can wake it.

TEST(MutexTest, SignalOnUnlockWakesTheWaiterAtUnlock) {
  Mutex mu;
  CondVar cv;
  CondVar asleep;
  bool waiting = false;
  bool ready = false;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    waiting = true;
    asleep.Signal();
    while (!ready) cv.Wait(&mu);
  });
  {
    MutexLock lock(&mu);
    while (!waiting) asleep.Wait(&mu);
    ready = true;
    mu.SignalOnUnlock(&cv);
  }
  waiter.join();
  MutexLock lock(&mu);
  EXPECT_TRUE(ready);
}

// The signalling thread waits on another condition variable before it ever
// unlocks: the deferred signal goes out before it sleeps.
TEST(MutexTest, AWaitSendsTheDeferredSignalsFirst) {
  Mutex mu;
  CondVar to_peer;
  CondVar to_me;
  bool peer_waiting = false;
  bool peer_may_go = false;
  bool peer_went = false;
  std::thread peer([&] {
    MutexLock lock(&mu);
    peer_waiting = true;
    to_me.Signal();
    while (!peer_may_go) to_peer.Wait(&mu);
    peer_went = true;
    to_me.Signal();
  });
  {
    MutexLock lock(&mu);
    while (!peer_waiting) to_me.Wait(&mu);
    peer_may_go = true;
    mu.SignalOnUnlock(&to_peer);
    while (!peer_went) to_me.Wait(&mu);
    EXPECT_TRUE(peer_went);
  }
  peer.join();
}

// More signals than the mutex keeps: each still wakes one waiter.
TEST(MutexTest, EverySignalWakesOneWaiter) {
  constexpr int kWaiters = 9;
  Mutex mu;
  CondVar cv;
  int tokens = 0;
  int woken = 0;
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&] {
      MutexLock lock(&mu);
      while (tokens == 0) cv.Wait(&mu);
      --tokens;
      ++woken;
    });
  }
  {
    MutexLock lock(&mu);
    tokens = kWaiters;
    for (int i = 0; i < kWaiters; ++i) mu.SignalOnUnlock(&cv);
  }
  for (std::thread& t : waiters) t.join();
  MutexLock lock(&mu);
  EXPECT_EQ(woken, kWaiters);
  EXPECT_EQ(tokens, 0);
}

TEST(MutexTest, WaitWithTimeoutRunsOut) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  EXPECT_TRUE(cv.WaitWithTimeout(&mu, absl::Milliseconds(1)));
}

}  // namespace
}  // namespace dataecho::internal
