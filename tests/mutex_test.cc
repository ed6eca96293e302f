// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal::Mutex's signals deferred to Unlock(): each reaches a waiter, none
// is lost when the signalling thread waits instead of unlocking. A lost
// signal hangs the test, which then fails by its ctest timeout.
#include "dataecho/internal/mutex.h"

#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace dataecho::internal {
namespace {

// Starts a thread that waits on `cv` under `mu` until `go`, then runs `then()`
// under `mu`; returns once that thread sleeps (it says so, then waits: the
// wait lets go of the mutex, which is what lets this function return), so
// that only the signal under test can wake it.
std::thread StartSleeper(Mutex& mu, CondVar& cv, const bool& go, std::function<void()> then = {}) {
  CondVar asleep;
  bool waiting = false;
  std::thread sleeper([&mu, &cv, &go, &asleep, &waiting, then = std::move(then)] {
    MutexLock lock(&mu);
    waiting = true;
    asleep.Signal();  // the last use of this function's locals
    while (!go) cv.Wait(&mu);
    if (then) then();
  });
  MutexLock lock(&mu);
  while (!waiting) asleep.Wait(&mu);
  return sleeper;
}

TEST(MutexTest, SignalOnUnlockWakesTheWaiterAtUnlock) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  std::thread waiter = StartSleeper(mu, cv, ready);
  {
    MutexLock lock(&mu);
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
  bool peer_may_go = false;
  bool peer_went = false;
  std::thread peer = StartSleeper(mu, to_peer, peer_may_go, [&] {
    peer_went = true;
    to_me.Signal();
  });
  {
    MutexLock lock(&mu);
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
