// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/map_refs.h: what a checkpoint needs of a Map<In, Out>'s elements
// (map.h, "Checkpoints"): the fingerprints a restore checks the inputs it
// skips against, the provenance fn's result carries, and the conversion of
// references between Out and In. Not part of the public API.
//
//   using Refs = internal::MapRefs<Record, Example>;
//   absl::StatusOr<Example> ex = Refs::Apply(fn, std::move(record));  // provenance set
//   if constexpr (Refs::kViaInput) return Refs::SaveRefs(input, input_mu, items, w);
//
// Thread safety: stateless; SaveRefs/Reread reach the input under the pull
// lock they are given.
#ifndef DATAECHO_INTERNAL_MAP_REFS_H_
#define DATAECHO_INTERNAL_MAP_REFS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/checkpoint.h"
#include "dataecho/example.h"
#include "dataecho/internal/input_snapshots.h"
#include "dataecho/internal/mutex.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"

namespace dataecho::internal {

template <typename In, typename Out>
struct MapRefs {
  // Map<T, T> passes its elements to its input as they are; Map<Record,
  // Example> references the record by the Example's provenance fields. Other
  // pairs: the Stage's default (numbers: their values; else
  // FAILED_PRECONDITION).
  static constexpr bool kViaInput =
      std::is_same_v<In, Out> || (std::is_same_v<In, Record> && std::is_same_v<Out, Example>);

  // What a restore checks the inputs it skips against (see
  // internal/input_snapshots.h): the fingerprint its result will have.
  static constexpr bool kChecksContents =
      (std::is_same_v<In, Out> && (std::is_same_v<In, Record> || std::is_same_v<In, Example>)) ||
      (std::is_same_v<In, Record> && std::is_same_v<Out, Example>);
  static uint32_t InputFingerprint(const In& in) {
    if constexpr (std::is_same_v<In, Record> && std::is_same_v<Out, Example>) {
      return in.PayloadCrc32c();
    } else if constexpr (kChecksContents) {
      return ContentFingerprint(in);
    } else {
      (void)in;
      return 0;
    }
  }
  static uint32_t OutputFingerprint(const Out& out) {
    if constexpr (kChecksContents) {
      return ContentFingerprint(out);
    } else {
      (void)out;
      return 0;
    }
  }

  // fn, and what a checkpoint needs of its result (see map.h's file comment).
  template <typename Fn>
  static absl::StatusOr<Out> Apply(const Fn& fn, In in) {
    if constexpr (std::is_same_v<In, Record> && std::is_same_v<Out, Example>) {
      const uint64_t source_index = in.source_index, offset = in.offset;
      const uint32_t repeat_index = in.repeat_index, epoch = in.epoch;
      const uint32_t crc = in.PayloadCrc32c();
      absl::StatusOr<Out> out = fn(std::move(in));
      if (out.ok()) {
        out->source_index = source_index;
        out->repeat_index = repeat_index;
        out->epoch = epoch;
        out->record_offset = offset;
        out->record_crc32c = crc;
      }
      return out;
    } else if constexpr (std::is_same_v<In, Example> && std::is_same_v<Out, Example>) {
      const uint64_t offset = in.record_offset;
      const uint32_t crc = in.record_crc32c;
      absl::StatusOr<Out> out = fn(std::move(in));
      if (out.ok()) {
        out->record_offset = offset;
        out->record_crc32c = crc;
      }
      return out;
    } else {
      return fn(std::move(in));
    }
  }

  // References (see map.h's file comment): the input's, under the pull lock.
  // REQUIRES: kViaInput.
  static absl::Status SaveRefs(Stage<In>& input, internal::Mutex& input_mu,
                               std::span<const Out* const> items, StateWriter& w) {
    static_assert(kViaInput);
    if constexpr (std::is_same_v<In, Out>) {
      internal::MutexLock lock(&input_mu);
      return input.SaveRefs(items, w);
    } else {
      std::vector<Record> records(items.size());
      std::vector<const Record*> refs(items.size());
      for (size_t i = 0; i < items.size(); ++i) {
        const Example& ex = *items[i];
        Record& rec = records[i];
        rec.source_index = ex.source_index;
        rec.repeat_index = ex.repeat_index;
        rec.epoch = ex.epoch;
        rec.offset = ex.record_offset;
        rec.crc32c = ex.record_crc32c;
        refs[i] = &rec;
      }
      internal::MutexLock lock(&input_mu);
      return input.SaveRefs(refs, w);
    }
  }
  // Rereads the input's elements under the pull lock and applies fn again.
  // REQUIRES: kViaInput.
  template <typename Fn>
  static absl::Status Reread(Stage<In>& input, internal::Mutex& input_mu, const Fn& fn,
                             StateReader& r, size_t n, std::vector<Out>* out) {
    static_assert(kViaInput);
    std::vector<In> inputs;
    {
      internal::MutexLock lock(&input_mu);
      DATAECHO_RETURN_IF_ERROR(input.Reread(r, n, &inputs));
    }
    for (In& in : inputs) {
      absl::StatusOr<Out> o = Apply(fn, std::move(in));
      if (!o.ok()) return o.status();
      out->push_back(*std::move(o));
    }
    return absl::OkStatus();
  }
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_MAP_REFS_H_
