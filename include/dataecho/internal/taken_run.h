// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/taken_run.h: the consumer's side of a run-ahead queue
// (internal/run_ahead.h): it takes up to RunAhead::TakeRun() ready elements
// per lock and returns them one by one without it; they count against the
// window until its next lock, which releases them. RunAheadQueue (in order)
// and MapWorkers (in order or as they finish) both hand their elements over
// through it. Not part of the public API.
//
//   internal::TakenRun<Item> taken;
//   if (!taken.empty()) return taken.Pop();
//   internal::MutexLock lock(&core.mu());
//   taken.ReleaseLocked(core);
//   ... wait until core.ReadyLocked() ...
//   taken.TakeLocked(core, [&]() -> Item* { return next ready or nullptr; },
//                    [&] { drop the one just moved });
//   return taken.Pop();
//
// Thread safety: the consumer's; the methods marked Locked under the core's mu().
#ifndef DATAECHO_INTERNAL_TAKEN_RUN_H_
#define DATAECHO_INTERNAL_TAKEN_RUN_H_

#include <cstddef>
#include <cstdint>
#include <utility>

#include "dataecho/internal/ring_queue.h"
#include "dataecho/internal/run_ahead.h"

namespace dataecho::internal {

template <typename V>
class TakenRun {
 public:
  bool empty() const { return values_.empty(); }
  size_t size() const { return values_.size(); }
  const V& operator[](size_t i) const { return values_[i]; }
  // Taken and not yet released: they still count against the window.
  int64_t held() const { return held_; }

  // The next taken value. REQUIRES: !empty().
  V Pop() {
    V v = std::move(values_.front());
    values_.pop_front();
    return v;
  }
  // Values handed out before any taken (a restore's read-ahead); they do not
  // count against the window.
  void Preload(V v) { values_.push_back(std::move(v)); }

  // At every lock, first: what was returned since the last one makes room.
  void ReleaseLocked(RunAhead& core) {
    core.Released(held_);
    held_ = 0;
  }
  // Moves up to core.TakeRun() ready values here: `next()` points at the
  // next one that may be taken (nullptr: none), `drop()` removes it from
  // where it was. Returns how many were taken; the first is released at
  // once (it goes out now), the rest at the next lock.
  template <typename Next, typename Drop>
  int64_t TakeLocked(RunAhead& core, Next next, Drop drop) {
    const int64_t run = core.TakeRun();
    int64_t n = 0;
    for (; n < run; ++n) {
      V* v = next();
      if (v == nullptr) break;
      values_.push_back(std::move(*v));
      drop();
    }
    core.Took(n);
    core.Released(1);
    held_ = n - 1;
    return n;
  }
  void Clear() {
    values_.clear();
    held_ = 0;
  }

 private:
  RingQueue<V> values_;
  int64_t held_ = 0;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_TAKEN_RUN_H_
