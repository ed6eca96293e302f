// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/element_refs.h: what a stage that holds elements (a cache, a
// shuffle buffer, a batch's rows) needs to put them into a state: their count
// and references (its input's SaveRefs(), stage.h), reading them again at a
// restore, and their bytes once read again (ElementTraits::ByteSize summed).
// Not part of the public API.
//
//   return internal::SaveElements(this->input(), buffer_, w);
//   ...
//   DATAECHO_RETURN_IF_ERROR(
//       internal::RereadElements(this->input(), r, n, &buffer_, "shuffle buffer"));
//   bytes_held_.Set(internal::ElementBytes(buffer_));
//
// Thread safety: plain functions over the caller's elements.
#ifndef DATAECHO_INTERNAL_ELEMENT_REFS_H_
#define DATAECHO_INTERNAL_ELEMENT_REFS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"

namespace dataecho::internal {

// Pointers to `items`, in order. REQUIRES: `items` outlives them unchanged.
template <typename T>
std::vector<const T*> ElementPointers(const std::vector<T>& items) {
  std::vector<const T*> out(items.size());
  for (size_t i = 0; i < items.size(); ++i) out[i] = &items[i];
  return out;
}

// Saves `items` into a state: their count, then their references (the
// input's SaveRefs()).
template <typename T>
absl::Status SaveElements(Stage<T>& input, const std::vector<T>& items, StateWriter& w) {
  w.U64(items.size());
  return input.SaveRefs(ElementPointers(items), w);
}

// Appends to `*out` the `n` elements a state named, read again through
// `input`: DATA_LOSS "pipeline state: <what> not read again" unless all came
// back.
template <typename T>
absl::Status RereadElements(Stage<T>& input, StateReader& r, uint64_t n, std::vector<T>* out,
                            absl::string_view what) {
  const size_t had = out->size();
  DATAECHO_RETURN_IF_ERROR(input.Reread(r, n, out));
  DATAECHO_RETURN_IF_ERROR(r.status());
  if (out->size() - had != n) {
    return absl::DataLossError(absl::StrCat("pipeline state: ", what, " not read again"));
  }
  return absl::OkStatus();
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
