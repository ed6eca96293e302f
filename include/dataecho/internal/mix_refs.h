// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/mix_refs.h: references to the elements a Mix emitted (mix.h,
// "References"), for a Shuffle or Echo after it. Not part of the public API.
//
// Remember() notes which input gave each element the Mix emits
// (internal/emitted_by.h). A reference: each item's input, then each input's
// own references to its items, input by input.
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
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "dataecho/checkpoint.h"
#include "dataecho/internal/emitted_by.h"
#include "dataecho/internal/str_cat.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"

namespace dataecho::internal {

template <typename U>
class MixRefs {
 public:
  static constexpr bool kEnabled = EmittedBy<U, uint32_t>::kEnabled;

  static absl::Status NotReferenced(std::string_view name, std::string_view why) {
    return internal::NotReferenced(name, why);
  }

  // Notes that input `input` gave `v`.
  void Remember(const U& v, uint32_t input) { by_.Remember(v, input); }

  // Writes the references of `items` (see the file comment).
  absl::Status Save(std::span<const U* const> items, StateWriter& w, std::string_view name,
                    std::span<Stage<U>* const> inputs) {
    std::vector<uint32_t> of(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      const std::optional<uint32_t> input = by_.Find(*items[i]);
      if (!input.has_value()) {
        return NotReferenced(name,
                             "a later stage made a new element from it; put such stages, a Map "
                             "for example, on the mixed inputs");
      }
      if (*input == EmittedBy<U, uint32_t>::kAmbiguous) {
        return NotReferenced(name, "its inputs gave elements that share one payload");
      }
      of[i] = *input;
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
        return absl::DataLossError(internal::StrCat("pipeline state: ", name, " references input ",
                                                    k, " of ", inputs.size()));
      }
      of[i] = static_cast<uint32_t>(k);
      ++per[k];
    }
    std::vector<std::vector<U>> made(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (per[k] == 0) continue;
      DATAECHO_RETURN_IF_ERROR(inputs[k]->Reread(r, per[k], &made[k]));
      if (made[k].size() != per[k]) {
        return absl::DataLossError(internal::StrCat("pipeline state: ", name,
                                                    "'s elements of input ", k, " not read again"));
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
  EmittedBy<U, uint32_t> by_;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_MIX_REFS_H_
