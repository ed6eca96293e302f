// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// example.h: the elements that flow through a pipeline.
//
// An `Example` is one training item: tensor components (e.g. an image), a
// label, the stable index of the item in its source, its repeat index (0 = the
// fresh read, k = the k-th echo of it) and its epoch (0 = the first pass over
// the source; a Repeat stage, repeat.h, numbers the passes). A `Batch` is what
// the Batch stage makes of many Examples: one contiguous ("fused") buffer per
// component with a leading row dimension, plus per-row labels, source and
// repeat indices, and how many of its rows are fresh.
//
// (source_index, repeat_index, epoch) name an element independently of
// timing: seeded stages (augment.h, Echo, Shuffle) derive their randomness
// from them, so each epoch gets its own crops and draws, and the same seed
// and epoch give the same ones. (record_offset and record_crc32c, set by a
// Map from records, name the record an Example was made from: checkpoints.)
//
//   dataecho::Example ex;
//   ex.components.push_back(*image_tensor);
//   ex.label = 7;
//   ex.source_index = 42;
//   bool fresh = ex.fresh();        // true: repeat_index == 0
//
// How generic stages see these types (byte size, fresh rows, repeat marking)
// is in element_traits.h.
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
  uint32_t epoch = 0;         // pass over the source: 0 = the first
  // Provenance, for checkpoints (docs/checkpoint.md): the record this example
  // was made from, set by a Map from Record to Example after its function
  // returned: the record's byte offset in its file and the CRC-32C of its
  // payload (Record::PayloadCrc32c). A state references the example by them
  // (with source_index and epoch), and a restore reads the record again and
  // applies the Map's function to it. 0 for examples not made from a record.
  uint64_t record_offset = 0;
  uint32_t record_crc32c = 0;

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
  // The newest epoch among its rows (a Shuffle may mix the end of one epoch
  // with the start of the next).
  uint32_t epoch = 0;

  bool fresh() const { return repeat_index == 0; }
  size_t ByteSize() const {
    size_t n = labels.byte_size() + source_indices.byte_size() + repeat_indices.byte_size();
    for (const Tensor& t : components) n += t.byte_size();
    return n;
  }
};

}  // namespace dataecho

#endif  // DATAECHO_EXAMPLE_H_
