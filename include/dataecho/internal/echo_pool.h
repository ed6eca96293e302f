// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/echo_pool.h: the pool of recent items adaptive and auto echo repeat
// from (internal/pooled_echo_stage.h). Not part of the public API.
#ifndef DATAECHO_INTERNAL_ECHO_POOL_H_
#define DATAECHO_INTERNAL_ECHO_POOL_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

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

  // Checkpoints: the items, oldest first, and each one's emissions so far
  // and budget; Restore() puts such entries back (REQUIRES: at most
  // capacity(), each 1 <= emitted < budget).
  std::vector<const T*> items() const {
    std::vector<const T*> out;
    for (const Entry& e : entries_) out.push_back(&e.item);
    return out;
  }
  std::vector<std::pair<uint32_t, uint32_t>> counts() const {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    for (const Entry& e : entries_) out.emplace_back(e.emitted, e.budget);
    return out;
  }
  void Restore(std::vector<T> items, const std::vector<std::pair<uint32_t, uint32_t>>& counts) {
    entries_.clear();
    for (size_t i = 0; i < items.size() && i < counts.size(); ++i) {
      entries_.push_back(Entry{std::move(items[i]), counts[i].first, counts[i].second});
    }
  }

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

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_ECHO_POOL_H_
