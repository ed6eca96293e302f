// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/interleave_state.h: the encoding of an Interleave's own section of
// a pipeline state (interleave.h, "Epochs and checkpoints"; docs/checkpoint.md):
// the cursor (slot, count into its block, whether the input ended), per slot
// whether it is open, the elements that opened the open slots (written by the
// stage: a string by value, else its input's references), then each open
// slot's pipeline state, nested. Not part of the public API.
//
//   internal::SaveInterleaveSlots(cursor, open, inputs, save_inputs, pipelines, w);
//   absl::StatusOr<internal::InterleaveSlots<T>> s =
//       internal::ReadInterleaveSlots<T>(r, limits, reread_inputs);
//
// Thread safety: the consumer thread only (as the stage's checkpoint calls).
#ifndef DATAECHO_INTERNAL_INTERLEAVE_STATE_H_
#define DATAECHO_INTERNAL_INTERLEAVE_STATE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dataecho/checkpoint.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"

namespace dataecho::internal {

// The elements that opened pipelines: strings by value, anything else as
// `input`'s references to them.
template <typename T>
absl::Status SaveOpeningElements(Stage<T>& input, std::span<const T* const> items, StateWriter& w) {
  if constexpr (std::is_same_v<T, std::string>) {
    for (const T* v : items) w.Bytes(*v);
    return absl::OkStatus();
  } else {
    return input.SaveRefs(items, w);
  }
}
template <typename T>
absl::Status RereadOpeningElements(Stage<T>& input, StateReader& r, size_t n, std::vector<T>* out) {
  if constexpr (std::is_same_v<T, std::string>) {
    for (size_t i = 0; i < n && r.status().ok(); ++i) out->push_back(r.Bytes());
    return r.status();
  } else {
    return input.Reread(r, n, out);
  }
}

// Where the Interleave stands: the slot it reads next, the elements taken
// from that slot's block, whether its input ended.
struct InterleaveCursor {
  uint64_t index = 0;
  uint64_t in_block = 0;
  bool input_done = false;
};

// The section as read back.
template <typename T>
struct InterleaveSlots {
  InterleaveCursor cursor;
  std::vector<bool> open;           // per slot
  std::vector<T> inputs;            // the elements that opened the open slots, in slot order
  std::vector<std::string> states;  // their pipelines' states, in slot order
};

// The bounds a section must keep (the stage's options) and the name errors carry.
struct InterleaveLimits {
  uint64_t cycle_length = 1;
  uint64_t block_length = 1;
  std::string name;
};

// `open[i]`: whether slot i holds a pipeline; `inputs` the elements that
// opened the open ones and `pipelines` those pipelines, both in slot order.
// save_inputs(std::span<const T* const>, StateWriter&) -> absl::Status.
template <typename T, typename P, typename SaveInputs>
absl::Status SaveInterleaveSlots(const InterleaveCursor& cursor, const std::vector<bool>& open,
                                 std::span<const T* const> inputs, SaveInputs&& save_inputs,
                                 std::span<P* const> pipelines, StateWriter& w) {
  w.U64(cursor.index);
  w.U64(cursor.in_block);
  w.Bool(cursor.input_done);
  w.U64(open.size());
  for (const bool o : open) w.Bool(o);
  DATAECHO_RETURN_IF_ERROR(save_inputs(inputs, w));
  for (P* pipeline : pipelines) {
    StateWriter inner;
    DATAECHO_RETURN_IF_ERROR(pipeline->SaveState(inner));
    w.Bytes(inner.Finish());
  }
  return absl::OkStatus();
}

// DATA_LOSS for a cursor outside `limits` or inputs not read again.
// reread_inputs(StateReader&, size_t n, std::vector<T>* out) -> absl::Status.
template <typename T, typename RereadInputs>
absl::StatusOr<InterleaveSlots<T>> ReadInterleaveSlots(StateReader& r,
                                                       const InterleaveLimits& limits,
                                                       RereadInputs&& reread_inputs) {
  InterleaveSlots<T> s;
  s.cursor.index = r.U64();
  s.cursor.in_block = r.U64();
  s.cursor.input_done = r.Bool();
  const uint64_t slots = r.Count(1);
  DATAECHO_RETURN_IF_ERROR(r.status());
  const InterleaveCursor& c = s.cursor;
  if (slots > limits.cycle_length || c.index > slots ||
      (c.index == slots && c.index >= limits.cycle_length) || c.in_block >= limits.block_length) {
    return absl::DataLossError(absl::StrCat("pipeline state: ", limits.name, " at slot ", c.index,
                                            " of ", slots, ", ", c.in_block,
                                            " elements into its block"));
  }
  s.open.resize(slots);
  size_t open_count = 0;
  for (uint64_t i = 0; i < slots; ++i) open_count += (s.open[i] = r.Bool()) ? 1 : 0;
  DATAECHO_RETURN_IF_ERROR(r.status());
  DATAECHO_RETURN_IF_ERROR(reread_inputs(r, open_count, &s.inputs));
  DATAECHO_RETURN_IF_ERROR(r.status());
  if (s.inputs.size() != open_count) {
    return absl::DataLossError(
        absl::StrCat("pipeline state: ", limits.name, "'s inputs not read again"));
  }
  for (size_t i = 0; i < open_count; ++i) {
    s.states.push_back(r.Bytes());
    DATAECHO_RETURN_IF_ERROR(r.status());
  }
  return s;
}

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_INTERLEAVE_STATE_H_
