// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The instantiations stage.h declares extern, compiled here once for every
// program, and the stage lifecycle's one message.
#include "dataecho/stage.h"

#include "absl/strings/str_cat.h"

#include "dataecho/example.h"
#include "dataecho/record.h"

namespace dataecho {

absl::Status CannotSaveAfterError(absl::string_view stage, const absl::Status& error) {
  return absl::FailedPreconditionError(
      absl::StrCat(stage, " cannot save its state after an error: ", error.ToString()));
}

template class Stage<Record>;
template class Stage<Example>;
template class Stage<Batch>;
template class UnaryStage<Record, Record>;
template class UnaryStage<Example, Example>;
template class UnaryStage<Batch, Batch>;
template class UnaryStage<Example, Record>;
template class UnaryStage<Batch, Example>;
template class PassThroughStage<Record>;
template class PassThroughStage<Example>;
template class PassThroughStage<Batch>;

}  // namespace dataecho
