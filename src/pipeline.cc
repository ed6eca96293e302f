// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The instantiations builder.h declares extern, and the stage factories it
// calls for the element types it builds without pipeline.h
// (internal/stage_factories.h): compiled here once for every program.
#include "dataecho/pipeline.h"

#include <utility>

#include "dataecho/batch.h"
#include "dataecho/example.h"
#include "dataecho/padded_batch.h"
#include "dataecho/record.h"

namespace dataecho {

DATAECHO_TEMPLATES_FOR_ELEMENTS(Pipeline);

namespace internal {

template struct MapFactory<Record, Example>;
template struct MapFactory<Record, Record>;
template struct MapFactory<Example, Example>;
template struct MapFactory<Batch, Batch>;
DATAECHO_TEMPLATES_FOR_ELEMENTS(FilterFactory);

absl::StatusOr<StagePtr<Batch>> MakeBatchStage(StagePtr<Example> input, BatchOptions options) {
  return BatchStage::Make(std::move(input), std::move(options));
}

absl::StatusOr<StagePtr<Batch>> MakePaddedBatchStage(StagePtr<Example> input,
                                                     PaddedBatchOptions options) {
  return PaddedBatchStage::Make(std::move(input), std::move(options));
}

}  // namespace internal
}  // namespace dataecho
