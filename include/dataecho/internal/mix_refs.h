// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/mix_refs.h: references to the elements a Mix emitted (mix.h,
// "References"), for a Shuffle or Echo after it. Not part of the public API.
//
// Remember() maps each element the Mix emits, by the address of its payload,
// to the input that gave it, keeping a handle to the element so that the
// address is not reused while the entry exists; entries whose payload nobody
// else holds (no later stage can reference them any more) are dropped by a
// sweep each time the map grew by a quarter plus 64 entries (as
// internal/interleave_refs.h). A reference: each item's input, then each
// input's own references to its items, input by input.
//
//   internal::MixRefs<Example> refs;
//   refs.Remember(example, input);                 // each element emitted
//   refs.Save(items, w, name, inputs);             // SaveRefs
//   refs.Reread(r, n, out, name, inputs);          // Reread
//
// Thread safety: the consumer thread only (as the stage's checkpoint calls).
#ifndef DATAECHO_INTERNAL_MIX_REFS_H_
#define DATAECHO_INTERNAL_MIX_REFS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "dataecho/buffer.h"
#include "dataecho/checkpoint.h"
#include "dataecho/example.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho::internal {

template <typename U>
class MixRefs {
 public:
  // Elements with a payload that tells which input gave them.
  static constexpr bool kEnabled =
      std::is_same_v<U, Record> || std::is_same_v<U, Example> || std::is_same_v<U, Batch>;

  // FAILED_PRECONDITION: `name` cannot reference an element (`why`).
  static absl::Status NotReferenced(std::string_view name, std::string_view why) {
    return absl::FailedPreconditionError(fmt::format(
        "{} cannot reference an element it emitted ({}), so a stage after it that holds "
        "elements (Shuffle, Echo) cannot save its state",
        name, why));
  }

  // Notes that input `input` gave `v`.
  void Remember(const U& v, uint32_t input) {
    if constexpr (kEnabled) {
      const Buffer* payload = Payload(v);
      if (payload == nullptr) return;
      auto [it, inserted] = emitted_.try_emplace(payload->data(), Emitted{input, v});
      if (!inserted && it->second.input != input) it->second.input = kAmbiguous;
      if (emitted_.size() >= next_sweep_) Sweep();
    } else {
      (void)v;
      (void)input;
    }
  }

  // Writes the references of `items` (see the file comment).
  absl::Status Save(std::span<const U* const> items, StateWriter& w, std::string_view name,
                    std::span<Stage<U>* const> inputs) {
    std::vector<uint32_t> of(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      const Buffer* payload = Payload(*items[i]);
      auto it = payload == nullptr ? emitted_.end() : emitted_.find(payload->data());
      if (it == emitted_.end()) {
        return NotReferenced(name,
                             "a later stage made a new element from it; put such stages, a Map "
                             "for example, on the mixed inputs");
      }
      if (it->second.input == kAmbiguous) {
        return NotReferenced(name, "its inputs gave elements that share one payload");
      }
      of[i] = it->second.input;
    }
    for (uint32_t k : of) w.U64(k);
    for (size_t k = 0; k < inputs.size(); ++k) {
      std::vector<const U*> mine;
      for (size_t i = 0; i < items.size(); ++i) {
        if (of[i] == k) mine.push_back(items[i]);
      }
      if (!mine.empty()) DATAECHO_RETURN_IF_ERROR(inputs[k]->SaveRefs(mine, w));
    }
    return absl::OkStatus();
  }

  // Appends the `n` elements Save() referenced to `out`, and remembers them.
  absl::Status Reread(StateReader& r, size_t n, std::vector<U>* out, std::string_view name,
                      std::span<Stage<U>* const> inputs) {
    std::vector<uint32_t> of(n);
    std::vector<size_t> per(inputs.size(), 0);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t k = r.U64();
      DATAECHO_RETURN_IF_ERROR(r.status());
      if (k >= inputs.size()) {
        return absl::DataLossError(
            fmt::format("pipeline state: {} references input {} of {}", name, k, inputs.size()));
      }
      of[i] = static_cast<uint32_t>(k);
      ++per[k];
    }
    std::vector<std::vector<U>> made(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (per[k] == 0) continue;
      DATAECHO_RETURN_IF_ERROR(inputs[k]->Reread(r, per[k], &made[k]));
      if (made[k].size() != per[k]) {
        return absl::DataLossError(
            fmt::format("pipeline state: {}'s elements of input {} not read again", name, k));
      }
    }
    std::vector<size_t> next(inputs.size(), 0);
    for (size_t i = 0; i < n; ++i) {
      U& v = made[of[i]][next[of[i]]++];
      Remember(v, of[i]);
      out->push_back(std::move(v));
    }
    return absl::OkStatus();
  }

 private:
  struct Emitted {
    uint32_t input;  // kAmbiguous: several inputs gave this payload
    std::conditional_t<kEnabled, U, char> element;
  };
  static constexpr uint32_t kAmbiguous = UINT32_MAX;
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

  absl::flat_hash_map<const uint8_t*, Emitted> emitted_;
  size_t next_sweep_ = kSweepSlack;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_MIX_REFS_H_
