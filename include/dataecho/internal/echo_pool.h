// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/echo_pool.h: the pool of recent items adaptive echo repeats from,
// and the moving estimate of the upstream/downstream rate ratio. Not part of
// the public API; used by adaptive_echo.h.
#ifndef DATAECHO_INTERNAL_ECHO_POOL_H_
#define DATAECHO_INTERNAL_ECHO_POOL_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>

#include "dataecho/element_traits.h"
#include "dataecho/example.h"

namespace dataecho::internal {

// Recent fresh items that may still be repeated. Each entry knows how often it
// was emitted (the fresh emission included) and its budget: the total number
// of emissions it may get. An entry leaves when its budget is used up
// (exhausted) or when a new item arrives and the pool is full (the oldest
// leaves: evicted). So every entry in the pool is eligible for a repeat.
//
// Thread-compatible (the owning stage's consumer thread only).
template <typename T>
class EchoPool {
 public:
  explicit EchoPool(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  size_t capacity() const { return capacity_; }

  // Drops every entry and sets a new capacity (>= 1).
  void Reset(size_t capacity) {
    entries_.clear();
    capacity_ = capacity < 1 ? 1 : capacity;
  }

  // Adds `item`, just emitted fresh, with a total budget of `budget`
  // emissions. An item with budget <= 1 is not kept. Returns true if the
  // oldest entry had to leave while it still had budget.
  bool Add(const T& item, uint32_t budget) {
    if (budget <= 1) return false;
    bool evicted = false;
    if (entries_.size() == capacity_) {
      entries_.pop_front();
      evicted = true;
    }
    entries_.push_back(Entry{item, 1, budget});
    return evicted;
  }

  // REQUIRES: !empty(). Emits a repeat of the entry with the fewest emissions
  // so far (the oldest among equals), marked with its repeat index; removes
  // the entry once its budget is used up. O(size()).
  T TakeFewest() {
    size_t best = 0;
    for (size_t i = 1; i < entries_.size(); ++i) {
      if (entries_[i].emitted < entries_[best].emitted) best = i;
    }
    return Take(best);
  }

  // REQUIRES: !empty(). Emits a repeat of the newest entry (fixed echo:
  // copies back to back).
  T TakeNewest() { return Take(entries_.size() - 1); }

 private:
  struct Entry {
    T item;
    uint32_t emitted;  // emissions so far, the fresh one included
    uint32_t budget;   // total emissions allowed
  };

  T Take(size_t i) {
    Entry& e = entries_[i];
    const uint32_t repeat_index = e.emitted++;
    if (e.emitted == e.budget) {  // last copy: hand over the pooled item itself
      T out = std::move(e.item);
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
      ElementTraits<T>::MarkRepeat(out, repeat_index);
      return out;
    }
    T out = e.item;
    ElementTraits<T>::MarkRepeat(out, repeat_index);
    return out;
  }

  size_t capacity_;
  std::deque<Entry> entries_;  // arrival order, oldest first
};

// Moving estimate of R = (upstream time per fresh item) / (downstream time
// per element). A window closes when `window` fresh items have arrived since
// the last one closed; over it,
//   upstream time per item   = wall / fresh,
//   downstream time per elem = (wall - time blocked on the upstream) / emitted,
// and the estimate moves toward the window's ratio by `smoothing` (the first
// window sets it). While the upstream keeps up every element is fresh and the
// ratio is about 1: a faster upstream is not observable through a full queue.
//
// Thread-compatible.
class RateRatioEstimator {
 public:
  RateRatioEstimator(int64_t window, double smoothing)
      : window_(window < 1 ? 1 : window), smoothing_(smoothing) {}

  // Starts the first window at `now_ns` (the first request).
  void Start(int64_t now_ns) {
    if (!started_) {
      started_ = true;
      window_start_ns_ = now_ns;
    }
  }
  void AddBlocked(int64_t ns) { blocked_ns_ += ns; }
  void AddEmitted() { ++emitted_; }
  // A fresh item arrived at `now_ns` (count its emission separately). Returns
  // true if a window closed and the estimate changed.
  bool AddFresh(int64_t now_ns) {
    if (++fresh_ < window_) return false;
    const double wall = static_cast<double>(now_ns - window_start_ns_);
    const double busy = wall - static_cast<double>(blocked_ns_);
    const bool usable = wall > 0 && busy > 0 && emitted_ > 0;
    if (usable) {
      const double ratio =
          (wall / static_cast<double>(fresh_)) / (busy / static_cast<double>(emitted_));
      estimate_ = windows_ == 0 ? ratio : estimate_ + smoothing_ * (ratio - estimate_);
      ++windows_;
    }
    window_start_ns_ = now_ns;
    blocked_ns_ = 0;
    fresh_ = 0;
    emitted_ = 0;
    return usable;
  }

  double estimate() const { return estimate_; }  // 0 until a window closed
  int64_t windows() const { return windows_; }

 private:
  const int64_t window_;
  const double smoothing_;
  bool started_ = false;
  int64_t window_start_ns_ = 0;
  int64_t blocked_ns_ = 0;
  int64_t fresh_ = 0;
  int64_t emitted_ = 0;
  int64_t windows_ = 0;
  double estimate_ = 0;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_ECHO_POOL_H_
