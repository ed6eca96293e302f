// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/ring_queue.h: a FIFO queue in one ring of slots that grows (to
// the next power of two) and never shrinks, so a queue that cycles at a
// steady depth allocates nothing: std::deque frees and allocates a block
// every few hundred bytes pushed through it. The queues of Prefetch and of
// Map's workers hold their elements here.
//
//   internal::RingQueue<Item> q;
//   q.push_back(std::move(item));
//   Item first = std::move(q.front());
//   q.pop_front();
//
// Thread safety: none (the owner's lock guards it).
#ifndef DATAECHO_INTERNAL_RING_QUEUE_H_
#define DATAECHO_INTERNAL_RING_QUEUE_H_

#include <cstddef>
#include <utility>
#include <vector>

namespace dataecho::internal {

template <typename T>
class RingQueue {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Element i from the front. REQUIRES: i < size().
  T& operator[](size_t i) { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  const T& operator[](size_t i) const { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }

  void push_back(T value) {
    if (size_ == slots_.size()) Grow(size_ + 1);
    (*this)[size_] = std::move(value);
    ++size_;
  }
  // REQUIRES: !empty(). The slot is reset to T() (what it held is released).
  void pop_front() {
    front() = T();
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }
  // n elements: new ones are T(), dropped ones released.
  void resize(size_t n) {
    while (size_ > n) {
      --size_;
      (*this)[size_] = T();
    }
    if (n > slots_.size()) Grow(n);
    size_ = n;  // slots past the old size hold T() already
  }
  void clear() { resize(0); }

 private:
  void Grow(size_t at_least) {
    size_t capacity = slots_.empty() ? 8 : slots_.size();
    while (capacity < at_least) capacity *= 2;
    std::vector<T> slots(capacity);
    for (size_t i = 0; i < size_; ++i) slots[i] = std::move((*this)[i]);
    slots_ = std::move(slots);
    head_ = 0;
  }

  std::vector<T> slots_;  // a power of two of them, or none
  size_t head_ = 0;       // the front's slot
  size_t size_ = 0;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_RING_QUEUE_H_
