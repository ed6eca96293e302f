// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// dataecho.Pipeline.report_loss() (py_pipeline.h): a trainer's loss of a
// batch, for the echo planner (loss_feedback.h, Pipeline<Batch>::ReportLoss).
#include <pybind11/numpy.h>

#include <memory>
#include <span>
#include <variant>

#include "absl/status/status.h"
#include "py_pipeline.h"
#include "status.h"

namespace dataecho::python {

std::shared_ptr<LossFeedback> PipelineHandle::loss_feedback() const {
  absl::MutexLock lock(&mu_);
  if (builder_.has_value()) {
    return std::visit([](const auto& p) { return p.loss_feedback(); }, *builder_);
  }
  return loss_feedback_;
}

void RegisterPipelineLoss(PipelineClass& cls) {
  cls.def(
      "report_loss",
      [](const PipelineHandle& self, const Batch& batch, const py::object& loss) {
        std::shared_ptr<LossFeedback> feedback = self.loss_feedback();
        if (feedback == nullptr) {
          ThrowStatus(absl::FailedPreconditionError(
              "report_loss: this pipeline has no echo planner to learn from the loss "
              "(echoed_batches with placement='auto' or 'adaptive' has one)"));
        }
        using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
        Array losses = Array::ensure(loss);
        if (!losses) {
          throw py::type_error(
              "report_loss: the loss must be a number or a 1-D array of one per row (a numpy "
              "array, a list, a detached CPU tensor)");
        }
        if (losses.ndim() == 0) {
          CheckOk(feedback->Report(batch, *losses.data()));
        } else if (losses.ndim() == 1) {
          CheckOk(feedback->Report(
              batch, std::span<const double>(losses.data(), static_cast<size_t>(losses.size()))));
        } else {
          throw py::value_error("report_loss: the row losses must be a 1-D array");
        }
      },
      py::arg("batch"), py::arg("loss"),
      R"(Tells the pipeline's echo planner the loss of `batch` (one this pipeline
returned), from the forward pass before its update: one loss per row (a 1-D
array, list or detached CPU tensor; best: copies and fresh rows are then told
apart by the batch's repeat_indices) or the batch's mean (a number). The planner
of echoed_batches(placement='auto') learns from them what a copy is worth on
this model and moves its factor and placement (docs/echoing.md, "Learning from
the loss"); without reports it keeps the fitted gains. Thread-safe.
FailedPreconditionError if the pipeline has no planner (a fixed placement);
InvalidArgumentError for losses that do not fit the batch.)");
}

}  // namespace dataecho::python
