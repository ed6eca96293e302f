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

DATAECHO_TEMPLATES_FOR_ELEMENTS(Stage);
template class UnaryStage<Record, Record>;
template class UnaryStage<Example, Example>;
template class UnaryStage<Batch, Batch>;
template class UnaryStage<Example, Record>;
template class UnaryStage<Batch, Example>;
DATAECHO_TEMPLATES_FOR_ELEMENTS(PassThroughStage);

}  // namespace dataecho
