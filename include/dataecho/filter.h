// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// filter.h: keep the elements a predicate accepts.
//
// FilterStage passes on the elements of its input for which `pred` returns
// true, in order, and drops the rest. `pred` takes `const T&` and returns bool
// or absl::StatusOr<bool>; an error from it comes out at the element's
// position (every element kept before it first) and then stays, like an
// input error.
//
//   auto labelled = dataecho::FromVector(std::move(examples))
//       .Filter([](const dataecho::Example& e) { return e.label >= 0; });
//   auto same = dataecho::FilterStage<dataecho::Example>::Make(
//       std::move(input), [](const dataecho::Example& e) { return e.label >= 0; });
//
// Filter runs `pred` in the consumer's thread; a Next() call pulls as many
// input elements as it takes to find one that passes. Put an expensive
// predicate inside a parallel Map instead (return the verdict with the
// element, then filter on it).
//
// Epochs and checkpoints (stage.h): a pass-through stage. It starts over
// with its input under a Repeat, and has no state of its own (a predicate
// with a state of its own is not saved: it must be a function of the
// element).
//
// Stats: elements = kept; input_wait = time blocked on an input with nothing
// ready; extra "dropped" = elements the predicate rejected.
//
// Thread safety: as every stage (stage.h); `pred` is called from one thread
// at a time.
#ifndef DATAECHO_FILTER_H_
#define DATAECHO_FILTER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dataecho/element_traits.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/stage_options.h"
#include "dataecho/status_macros.h"

namespace dataecho {

template <typename T>
class FilterStage final : public PassThroughStage<T> {
 public:
  using Predicate = FilterPredicate<T>;

  // INVALID_ARGUMENT for a null input or an empty predicate.
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, Predicate pred,
                                          FilterOptions options = {}) {
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, options.name));
    if (!pred) return absl::InvalidArgumentError(options.name + ": empty predicate");
    return StagePtr<T>(new FilterStage(std::move(input), std::move(pred), std::move(options)));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    if (!error_.ok()) return error_;
    while (true) {
      if (this->cancelled()) return CancelledError();
      absl::StatusOr<std::optional<T>> r;
      totals_.input_wait_ns.Add(internal::PullTimed(this->input(), &r));
      if (!r.ok() || !r->has_value()) return r;  // the input's errors are sticky already
      absl::StatusOr<bool> keep = pred_(**r);
      if (!keep.ok()) return error_ = keep.status();
      if (*keep) {
        totals_.elements.Add(1);
        totals_.bytes.Add(static_cast<int64_t>(ElementTraits<T>::ByteSize(**r)));
        return r;
      }
      dropped_.Add(1);
    }
  }

 protected:
  // A pass-through stage (stage.h): no state of its own (a predicate's own
  // state is not saved), references and epochs are its input's.
  std::string StateName() const override { return options_.name; }
  absl::Status StickyError() const override { return error_; }
  StageStats OwnStats() const override {
    return totals_.Report(options_.name, {{"dropped", static_cast<double>(dropped_.Get())}});
  }

 private:
  FilterStage(StagePtr<T> input, Predicate pred, FilterOptions options)
      : PassThroughStage<T>(std::move(input)),
        pred_(std::move(pred)),
        options_(std::move(options)) {}

  Predicate pred_;
  const FilterOptions options_;
  absl::Status error_;  // the predicate's error: sticky (consumer thread only)
  internal::StageTotals<internal::Counter> totals_;
  internal::Counter dropped_;
};

// Compiled once, in src/filter.cc (export.h).
DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(FilterStage);

}  // namespace dataecho

#endif  // DATAECHO_FILTER_H_
