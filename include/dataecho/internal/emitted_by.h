// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/emitted_by.h: which input gave each element a stage emitted, by
// the address of the element's payload: what Mix and Interleave
// (internal/mix_refs.h, internal/interleave_refs.h) need to reference the
// elements a Shuffle or Echo after them holds. Not part of the public API.
//
// Remember() maps each element, by the address of its payload, to the id of
// the input that gave it, keeping a handle to the element so that the address
// is not reused while the entry exists; an entry whose payload nobody else
// holds (no later stage can reference it any more) is dropped by a sweep, run
// each time the map grew by a quarter plus 64 entries: so besides what the
// later stages hold, it keeps at most a quarter of that and 64 elements alive
// (amortized, a sweep costs a few hash-map steps per element emitted).
//
//   internal::EmittedBy<Example, uint32_t> by;
//   if (by.Remember(example, input)) { ... }  // true: it swept (ForEachId lists what is left)
//   std::optional<uint32_t> id = by.Find(example);  // kAmbiguous: several inputs gave it
//
// Thread safety: the consumer thread only (as the stage's checkpoint calls).
#ifndef DATAECHO_INTERNAL_EMITTED_BY_H_
#define DATAECHO_INTERNAL_EMITTED_BY_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "dataecho/buffer.h"
#include "dataecho/example.h"
#include "dataecho/internal/str_cat.h"
#include "dataecho/record.h"

namespace dataecho::internal {

// FAILED_PRECONDITION: `name` cannot reference an element it emitted (`why`).
inline absl::Status NotReferenced(std::string_view name, std::string_view why) {
  return absl::FailedPreconditionError(internal::StrCat(
      name, " cannot reference an element it emitted (", why,
      "), so a stage after it that holds elements (Shuffle, Echo) cannot save its state"));
}

template <typename U, typename Id>
class EmittedBy {
 public:
  // Elements with a payload that tells which input gave them.
  static constexpr bool kEnabled =
      std::is_same_v<U, Record> || std::is_same_v<U, Example> || std::is_same_v<U, Batch>;
  // The id of an element several inputs gave (their payloads are one buffer).
  static constexpr Id kAmbiguous = std::numeric_limits<Id>::max();

  // Notes that input `id` gave `v`; true if this call swept the map.
  bool Remember(const U& v, Id id) {
    if constexpr (kEnabled) {
      const Buffer* payload = Payload(v);
      if (payload == nullptr) return false;
      auto [it, inserted] = emitted_.try_emplace(payload->data(), Entry{id, v});
      if (!inserted && it->second.id != id) it->second.id = kAmbiguous;
      if (emitted_.size() < next_sweep_) return false;
      Sweep();
      return true;
    } else {
      (void)v;
      (void)id;
      return false;
    }
  }

  // The input that gave `v` (kAmbiguous: several), or nullopt if `v` was not
  // remembered (a later stage made it).
  std::optional<Id> Find(const U& v) const {
    const Buffer* payload = Payload(v);
    if (payload == nullptr) return std::nullopt;
    auto it = emitted_.find(payload->data());
    if (it == emitted_.end()) return std::nullopt;
    return it->second.id;
  }

  // Calls f(id) for every entry (an id once per element it gave).
  template <typename F>
  void ForEachId(F f) const {
    for (const auto& e : emitted_) f(e.second.id);
  }

 private:
  struct Entry {
    Id id;
    std::conditional_t<kEnabled, U, char> element;
  };
  static constexpr size_t kSweepSlack = 64;

  // The payload that identifies `v` (nullptr if it has none).
  static const Buffer* Payload(const U& v) {
    if constexpr (std::is_same_v<U, Record>) {
      return v.data.empty() ? nullptr : &v.data;
    } else if constexpr (std::is_same_v<U, Example> || std::is_same_v<U, Batch>) {
      for (const Tensor& t : v.components) {
        if (t.byte_size() > 0) return &t.buffer();
      }
      return nullptr;
    } else {
      (void)v;
      return nullptr;
    }
  }

  void Sweep() {
    absl::erase_if(emitted_, [](const auto& e) {
      const Buffer* payload = Payload(e.second.element);
      return payload == nullptr || payload->use_count() <= 1;
    });
    next_sweep_ = emitted_.size() + emitted_.size() / 4 + kSweepSlack;
  }

  absl::flat_hash_map<const uint8_t*, Entry> emitted_;
  size_t next_sweep_ = kSweepSlack;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_EMITTED_BY_H_
