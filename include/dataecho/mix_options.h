// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// mix_options.h: the options of Mix (mix.h): weights, seed, what happens when
// an input ends, and what the weights count.
//
//   dataecho::MixOptions options{.weights = {0.7, 0.3},
//                                .seed = 1,
//                                .on_empty = dataecho::MixOnEmpty::kRestartInput,
//                                .weights_of = dataecho::MixWeightsOf::kFresh};
//   absl::Status s = options.Validate(/*inputs=*/2);   // the factory checks it too
//
// Thread safety: plain values.
#ifndef DATAECHO_MIX_OPTIONS_H_
#define DATAECHO_MIX_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "dataecho/export.h"

namespace dataecho {

// What the mix does when the input it drew has ended (mix.h, "When an input
// ends"). The names follow the peers' options: tf.data's
// sample_from_datasets(stop_on_empty_dataset=True / False) and torchdata's
// MultiNodeWeightedSampler stop criteria (FIRST_DATASET_EXHAUSTED,
// ALL_DATASETS_EXHAUSTED, CYCLE_UNTIL_ALL_DATASETS_EXHAUSTED).
enum class MixOnEmpty {
  // The mix ends as soon as a draw picks an input that has ended.
  kStopOnFirstEmpty,
  // The ended input leaves the epoch; the others go on with their weights
  // renormalized; the mix ends when every input with a weight has ended.
  kContinueRenormalized,
  // The ended input starts over as its own next epoch and keeps its weight;
  // the mix ends once every input with a weight has ended at least once.
  kRestartInput,
};

// What the weights are shares of (mix.h, "Echo per input").
enum class MixWeightsOf {
  // Of the elements the mix emits, fresh or echoed.
  kEmitted,
  // Of the fresh items: the draw divides out each input's realized echo factor.
  kFresh,
};

struct DATAECHO_EXPORT MixOptions {
  // One weight per input, finite and >= 0, not all 0; normalized to sum to 1.
  // Empty: all inputs alike.
  std::vector<double> weights;
  // Seed of the draws (one per position, keyed by seed, epoch and position).
  uint64_t seed = 0;
  // What happens when the drawn input has ended.
  MixOnEmpty on_empty = MixOnEmpty::kContinueRenormalized;
  // What the weights are shares of.
  MixWeightsOf weights_of = MixWeightsOf::kEmitted;
  // Name shown in stats.
  std::string name = "mix";

  // INVALID_ARGUMENT naming the option ("weights", "inputs") if these options
  // cannot mix `inputs` inputs.
  absl::Status Validate(size_t inputs) const;
};

// "stop_on_first_empty", "continue_renormalized", "restart_input".
DATAECHO_EXPORT std::string_view MixOnEmptyName(MixOnEmpty v);
// The reverse; INVALID_ARGUMENT listing the names for another string.
DATAECHO_EXPORT absl::Status ParseMixOnEmpty(std::string_view name, MixOnEmpty* out);
// "emitted", "fresh".
DATAECHO_EXPORT std::string_view MixWeightsOfName(MixWeightsOf v);
DATAECHO_EXPORT absl::Status ParseMixWeightsOf(std::string_view name, MixWeightsOf* out);

}  // namespace dataecho

#endif  // DATAECHO_MIX_OPTIONS_H_
