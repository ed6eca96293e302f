// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// element_traits.h: how generic stages (Echo, Shuffle, Prefetch, Map) see an
// element type.
//
// `ElementTraits<T>` tells a stage how big an element is, how many fresh items
// it carries, how to mark it as a repeat and which epoch it belongs to. It is
// specialized for Example, Batch and Record; specialize it for your own
// element types to get byte counts and fresh/repeat accounting, otherwise the
// defaults (sizeof, no marking) apply. `Epoch` / `SetEpoch` are optional: a
// type without them is always in epoch 0 as far as the stages can see:
//
//   template <>
//   struct dataecho::ElementTraits<MyItem> {
//     static size_t ByteSize(const MyItem& m) { return m.bytes.size(); }
//     static int64_t FreshCount(const MyItem& m) { return m.copy == 0 ? 1 : 0; }
//     static int64_t ItemCount(const MyItem&) { return 1; }
//     static void MarkRepeat(MyItem& m, uint32_t k) { m.copy = k; }
//     static uint32_t Epoch(const MyItem& m) { return m.epoch; }      // optional
//     static void SetEpoch(MyItem& m, uint32_t e) { m.epoch = e; }    // optional
//   };
//
// Thread safety: stateless.
#ifndef DATAECHO_ELEMENT_TRAITS_H_
#define DATAECHO_ELEMENT_TRAITS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "dataecho/example.h"

namespace dataecho {

// How generic stages see an element type. Default: plain values, never fresh-counted.
template <typename T>
struct ElementTraits {
  static size_t ByteSize(const T&) { return sizeof(T); }
  // Number of fresh items the element carries (1 for a fresh Example, the
  // fresh row count for a Batch).
  static int64_t FreshCount(const T&) { return 1; }
  static int64_t ItemCount(const T&) { return 1; }
  static void MarkRepeat(T&, uint32_t /*repeat_index*/) {}
};

template <>
struct ElementTraits<Example> {
  static size_t ByteSize(const Example& e) { return e.ByteSize(); }
  static int64_t FreshCount(const Example& e) { return e.fresh() ? 1 : 0; }
  static int64_t ItemCount(const Example&) { return 1; }
  static void MarkRepeat(Example& e, uint32_t k) { e.repeat_index = k; }
  static uint32_t Epoch(const Example& e) { return e.epoch; }
  static void SetEpoch(Example& e, uint32_t epoch) { e.epoch = epoch; }
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
  static uint32_t Epoch(const Batch& b) { return b.epoch; }
  static void SetEpoch(Batch& b, uint32_t epoch) { b.epoch = epoch; }
};

namespace internal {

// The epoch of `v` (0 if ElementTraits<T> has no Epoch()).
template <typename T>
uint32_t EpochOf(const T& v) {
  if constexpr (requires { ElementTraits<T>::Epoch(v); }) {
    return ElementTraits<T>::Epoch(v);
  } else {
    return 0;
  }
}

// Raises the epoch of `v` to at least `epoch` (nothing if ElementTraits<T>
// has no SetEpoch()). Returns the element's epoch afterwards.
template <typename T>
uint32_t RaiseEpoch(T& v, uint32_t epoch) {
  if constexpr (requires { ElementTraits<T>::SetEpoch(v, epoch); }) {
    if (EpochOf(v) < epoch) ElementTraits<T>::SetEpoch(v, epoch);
  }
  return EpochOf(v);
}

}  // namespace internal

}  // namespace dataecho

#endif  // DATAECHO_ELEMENT_TRAITS_H_
