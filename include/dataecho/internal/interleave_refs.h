// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/interleave_refs.h: references to the elements an Interleave
// emitted (interleave.h, "References"), for a Shuffle or Echo after it. Not
// part of the public API.
//
// Each pipeline the Interleave opens gets a number (NewPipeline). Remember()
// notes which pipeline made each element it emits (internal/emitted_by.h).
// The element that opened a pipeline is kept while the pipeline is open or an
// element it made may be referenced.
//
// A reference: the pipelines of the items (the elements that opened them:
// Hooks::save_inputs), each item's pipeline, then each pipeline's own
// references to its items (the open pipeline's SaveRefs, or a new one's made
// with fn if it ended). Reread() makes each pipeline again with fn and has it
// read its items again.
//
//   internal::InterleaveRefs<std::string, Record> refs;
//   uint64_t p = refs.NewPipeline(file);     // a slot opened
//   refs.Remember(record, p, open_numbers);  // each element emitted
//   refs.Save(items, w, hooks);              // SaveRefs
//
// Thread safety: the consumer thread only (as the stage's checkpoint calls).
#ifndef DATAECHO_INTERNAL_INTERLEAVE_REFS_H_
#define DATAECHO_INTERNAL_INTERLEAVE_REFS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/buffer.h"
#include "dataecho/checkpoint.h"
#include "dataecho/example.h"
#include "dataecho/internal/emitted_by.h"
#include "dataecho/internal/str_cat.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"

namespace dataecho::internal {

template <typename T, typename U>
class InterleaveRefs {
 public:
  // Elements are referenced when the Interleave keeps its input's elements
  // and they have a payload that tells which pipeline made them.
  static constexpr bool kEnabled =
      std::is_copy_constructible_v<T> && EmittedBy<U, uint64_t>::kEnabled;

  // What the stage gives: its open pipeline of a number (or nullptr), a new
  // pipeline of an input element, and how its input's elements are saved and
  // read again.
  struct Hooks {
    std::string_view name;
    std::function<Stage<U>*(uint64_t)> open_pipeline;
    std::function<absl::StatusOr<StagePtr<U>>(const T&)> make;
    std::function<absl::Status(std::span<const T* const>, StateWriter&)> save_inputs;
    std::function<absl::Status(StateReader&, size_t, std::vector<T>*)> reread_inputs;
  };

  static absl::Status NotReferenced(std::string_view name, std::string_view why) {
    return internal::NotReferenced(name, why);
  }

  // A number for a pipeline opened by `input`.
  uint64_t NewPipeline(const T& input) {
    if constexpr (kEnabled) origins_.emplace(next_, input);
    (void)input;
    return next_++;
  }

  // Notes that pipeline `pipeline` made `v`; `open` lists the numbers of the
  // open pipelines (called only when the map is swept).
  template <typename OpenNumbers>
  void Remember(const U& v, uint64_t pipeline, const OpenNumbers& open) {
    if (!by_.Remember(v, pipeline)) return;
    // Swept: the pipelines neither open nor named by an element left go.
    const std::vector<uint64_t>& still_open = open();
    absl::flat_hash_set<uint64_t> live(still_open.begin(), still_open.end());
    by_.ForEachId([&](uint64_t p) { live.insert(p); });
    absl::erase_if(origins_, [&](const auto& o) { return !live.contains(o.first); });
  }

  absl::Status Save(std::span<const U* const> items, StateWriter& w, const Hooks& h) {
    std::vector<uint64_t> pipelines;
    absl::flat_hash_map<uint64_t, size_t> place;
    std::vector<size_t> of(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      const std::optional<uint64_t> pipeline = by_.Find(*items[i]);
      if (!pipeline.has_value()) {
        return NotReferenced(h.name,
                             "a later stage made a new element from it; put such stages, a Map "
                             "for example, inside the interleaved pipelines");
      }
      if (!origins_.contains(*pipeline)) {  // kAmbiguous is never a pipeline's number
        return NotReferenced(h.name, "its pipelines gave elements that share one payload");
      }
      auto [p, added] = place.try_emplace(*pipeline, pipelines.size());
      if (added) pipelines.push_back(*pipeline);
      of[i] = p->second;
    }
    w.U64(pipelines.size());
    std::vector<const T*> inputs;
    for (uint64_t p : pipelines) inputs.push_back(&origins_.at(p));
    DATAECHO_RETURN_IF_ERROR(h.save_inputs(inputs, w));
    for (size_t k : of) w.U64(k);
    for (size_t k = 0; k < pipelines.size(); ++k) {
      std::vector<const U*> mine;
      for (size_t i = 0; i < items.size(); ++i) {
        if (of[i] == k) mine.push_back(items[i]);
      }
      // The open pipeline, else (it ended) a new one.
      Stage<U>* stage = h.open_pipeline(pipelines[k]);
      StagePtr<U> made;
      if (stage == nullptr) {
        DATAECHO_ASSIGN_OR_RETURN(made, h.make(origins_.at(pipelines[k])));
        stage = made.get();
      }
      DATAECHO_RETURN_IF_ERROR(stage->SaveRefs(mine, w));
    }
    return absl::OkStatus();
  }

  // Appends the `n` elements Save() referenced to `out`, and remembers them.
  template <typename OpenNumbers>
  absl::Status Reread(StateReader& r, size_t n, std::vector<U>* out, const Hooks& h,
                      const OpenNumbers& open) {
    const uint64_t count = r.U64();
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (count > n || (n > 0 && count == 0)) {
      return absl::DataLossError(internal::StrCat("pipeline state: ", h.name, " references ", n,
                                                  " elements of ", count, " pipelines"));
    }
    std::vector<T> inputs;
    DATAECHO_RETURN_IF_ERROR(h.reread_inputs(r, static_cast<size_t>(count), &inputs));
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (inputs.size() != count) {
      return absl::DataLossError(
          internal::StrCat("pipeline state: ", h.name, "'s pipelines not read again"));
    }
    std::vector<size_t> of(n);
    std::vector<size_t> per(count, 0);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t k = r.U64();
      DATAECHO_RETURN_IF_ERROR(r.status());
      if (k >= count) {
        return absl::DataLossError(internal::StrCat("pipeline state: ", h.name,
                                                    " references pipeline ", k, " of ", count));
      }
      of[i] = static_cast<size_t>(k);
      ++per[of[i]];
    }
    std::vector<std::vector<U>> made(count);
    std::vector<uint64_t> numbers(count);
    for (size_t k = 0; k < count; ++k) {
      numbers[k] = NewPipeline(inputs[k]);
      DATAECHO_ASSIGN_OR_RETURN(StagePtr<U> stage, h.make(inputs[k]));
      DATAECHO_RETURN_IF_ERROR(stage->Reread(r, per[k], &made[k]));
      if (made[k].size() != per[k]) {
        return absl::DataLossError(
            internal::StrCat("pipeline state: ", h.name, "'s elements not read again"));
      }
    }
    std::vector<size_t> next(count, 0);
    for (size_t i = 0; i < n; ++i) {
      U& v = made[of[i]][next[of[i]]++];
      Remember(v, numbers[of[i]], open);
      out->push_back(std::move(v));
    }
    return absl::OkStatus();
  }

 private:
  uint64_t next_ = 0;
  absl::flat_hash_map<uint64_t, std::conditional_t<kEnabled, T, char>> origins_;
  EmittedBy<U, uint64_t> by_;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_INTERLEAVE_REFS_H_
