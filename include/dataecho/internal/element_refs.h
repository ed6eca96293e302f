// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/element_refs.h: what a stage that holds elements (a cache, a
// shuffle buffer, a batch's rows) needs to put them into a state: pointers
// to them, the form its input's SaveRefs() takes (stage.h), and their bytes
// once read again (ElementTraits::ByteSize summed). Not part of the public
// API.
//
//   w.U64(buffer_.size());
//   return this->input().SaveRefs(internal::ElementPointers(buffer_), w);
//   ...
//   bytes_held_.Set(internal::ElementBytes(buffer_));
//
// Thread safety: plain functions over the caller's elements.
#ifndef DATAECHO_INTERNAL_ELEMENT_REFS_H_
#define DATAECHO_INTERNAL_ELEMENT_REFS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dataecho/element_traits.h"

namespace dataecho::internal {

// Pointers to `items`, in order. REQUIRES: `items` outlives them unchanged.
template <typename T>
std::vector<const T*> ElementPointers(const std::vector<T>& items) {
  std::vector<const T*> out(items.size());
  for (size_t i = 0; i < items.size(); ++i) out[i] = &items[i];
  return out;
}

// The bytes of `items` (ElementTraits<T>::ByteSize, summed).
template <typename T>
int64_t ElementBytes(const std::vector<T>& items) {
  int64_t bytes = 0;
  for (const T& v : items) bytes += static_cast<int64_t>(ElementTraits<T>::ByteSize(v));
  return bytes;
}

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_ELEMENT_REFS_H_
