// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// example.h: the elements that flow through a pipeline.
//
// An `Example` is one training item: tensor components (e.g. an image), a
// label, the stable index of the item in its source and its repeat index
// (0 = the fresh read, k = the k-th echo of it). A `Batch` is what the Batch
// stage makes of many Examples: one contiguous ("fused") buffer per component
// with a leading row dimension, plus per-row labels, source and repeat
// indices, and how many of its rows are fresh.
//
//   dataecho::Example ex;
//   ex.components.push_back(*image_tensor);
//   ex.label = 7;
//   ex.source_index = 42;
//   bool fresh = ex.fresh();        // true: repeat_index == 0
//
// `ElementTraits<T>` tells generic stages (Echo, Shuffle, Prefetch) how big an
// element is and how to mark it as a repeat. It is specialized for Example and
// Batch; specialize it for your own element types to get byte counts and
// fresh/repeat accounting, otherwise the defaults (sizeof, no marking) apply.
//
// Thread safety: value types; copies share payload bytes (see buffer.h).
#ifndef DATAECHO_EXAMPLE_H_
#define DATAECHO_EXAMPLE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "dataecho/tensor.h"

namespace dataecho {

struct Example {
  absl::InlinedVector<Tensor, 1> components;
  int64_t label = 0;
  uint64_t source_index = 0;  // stable position of the item in its source
  uint32_t repeat_index = 0;  // 0 = fresh, k = k-th repeat

  bool fresh() const { return repeat_index == 0; }
  // Payload bytes of all components.
  size_t ByteSize() const {
    size_t n = 0;
    for (const Tensor& t : components) n += t.byte_size();
    return n;
  }
};

struct Batch {
  // Component i of every row, fused: shape [rows, ...example shape...].
  absl::InlinedVector<Tensor, 1> components;
  Tensor labels;          // int64 [rows]
  Tensor source_indices;  // int64 [rows]
  Tensor repeat_indices;  // int32 [rows]: each row's example-level repeat index
  int64_t num_rows = 0;
  // Rows whose example was fresh; 0 for a batch-level repeat (batch echoing).
  int64_t fresh_rows = 0;
  // 0 = this batch as built; k = the k-th repeat of it (batch echoing).
  uint32_t repeat_index = 0;

  bool fresh() const { return repeat_index == 0; }
  size_t ByteSize() const {
    size_t n = labels.byte_size() + source_indices.byte_size() + repeat_indices.byte_size();
    for (const Tensor& t : components) n += t.byte_size();
    return n;
  }
};

// How generic stages see an element type. Default: plain values, never fresh-counted.
template <typename T>
struct ElementTraits {
  static size_t ByteSize(const T&) { return sizeof(T); }
  // Number of fresh items the element carries (1 for a fresh Example, the
  // fresh row count for a Batch).
  static int64_t FreshCount(const T&) { return 1; }
  static int64_t ItemCount(const T&) { return 1; }
  static void MarkRepeat(T&, uint32_t /*repeat_index*/) {}
  // Optional: `static void Prefetch(const T&)` hints the CPU to load the
  // element's bytes; Shuffle calls it on the element it will emit next.
};

template <>
struct ElementTraits<Example> {
  static size_t ByteSize(const Example& e) { return e.ByteSize(); }
  static int64_t FreshCount(const Example& e) { return e.fresh() ? 1 : 0; }
  static int64_t ItemCount(const Example&) { return 1; }
  static void MarkRepeat(Example& e, uint32_t k) { e.repeat_index = k; }
  // Up to the first 4 KiB of each component (the hardware prefetcher follows
  // a longer row by itself).
  static void Prefetch(const Example& e) {
    for (const Tensor& t : e.components) {
      const uint8_t* p = t.buffer().data();
      const size_t n = std::min<size_t>(t.byte_size(), 4096);
      for (size_t off = 0; off < n; off += 64) __builtin_prefetch(p + off);
    }
  }
};

template <>
struct ElementTraits<Batch> {
  static size_t ByteSize(const Batch& b) { return b.ByteSize(); }
  static int64_t FreshCount(const Batch& b) { return b.fresh_rows; }
  static int64_t ItemCount(const Batch& b) { return b.num_rows; }
  static void MarkRepeat(Batch& b, uint32_t k) {
    b.repeat_index = k;
    if (k > 0) b.fresh_rows = 0;
  }
};

}  // namespace dataecho

#endif  // DATAECHO_EXAMPLE_H_
