// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// map_options.h: MapOptions, the options of Map (map.h), and MapFn, the
// function it applies. Apart from the stage so that the builder (builder.h)
// can take them without the stage's definition.
//
//   auto decoded = std::move(records).Map(DecodeImageRecord, {.parallelism = 4});
//   dataecho::MapOptions inline_map = {.name = "crop"};  // parallelism 0: inline
#ifndef DATAECHO_MAP_OPTIONS_H_
#define DATAECHO_MAP_OPTIONS_H_

#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/internal/str_cat.h"
#include "dataecho/map_parallelism.h"

namespace dataecho {

// MapOptions::parallelism and MapOptions::buffer: let the stage choose. (A
// sentinel no one types by accident: -1 stays an invalid parallelism.)
inline constexpr int kAutotune = std::numeric_limits<int>::min();

struct MapOptions {
  // 0 (default): fn runs inline in the consumer's thread. n >= 1: n worker
  // threads. kAutotune: inline while it measures fn, then inline or workers.
  int parallelism = 0;
  // true: results in input order; false: in completion order.
  bool deterministic = true;
  // Results a parallel Map may hold ahead of the consumer beyond the calls in
  // flight (taken from the input, not yet returned: at most parallelism +
  // buffer). kAutotune (default): three batches per worker (MapWindow).
  int buffer = kAutotune;
  std::string name = "map";
  // Optional: raise the workers while the Map runs (map_parallelism.h). The
  // Map runs max(parallelism, parallelism_control->requested()) workers from
  // its next Next() on (once a kAutotune Map has chosen), and reports its
  // figures through it. Null: the workers stay as above.
  std::shared_ptr<MapParallelism> parallelism_control = nullptr;

  absl::Status Validate() const {
    if (parallelism != kAutotune && (parallelism < 0 || parallelism > 1024)) {
      return absl::InvalidArgumentError(
          internal::StrCat("map parallelism must be kAutotune or in [0, 1024], got ", parallelism));
    }
    if (buffer != kAutotune && buffer < 0) {
      return absl::InvalidArgumentError(
          internal::StrCat("map buffer must be >= 0, got ", buffer, " (or kAutotune)"));
    }
    return absl::OkStatus();
  }
};

// What Map applies to each element of type In: a new element or an error.
template <typename In, typename Out>
using MapFn = std::function<absl::StatusOr<Out>(In)>;

}  // namespace dataecho

#endif  // DATAECHO_MAP_OPTIONS_H_
