// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// stage_kit.h: what a stage of your own needs: the library's stages are
// written with the same parts (docs/writing_stages.md walks through one).
//
//   // Keeps one element in `stride` (examples/custom_stage.cc is the whole
//   // stage: options, epochs, a checkpoint section of its own).
//   template <typename T>
//   class StrideStage final : public dataecho::PassThroughStage<T> {
//    public:
//     static absl::StatusOr<dataecho::StagePtr<T>> Make(dataecho::StagePtr<T> input,
//                                                       int64_t stride) {
//       DATAECHO_RETURN_IF_ERROR(dataecho::CheckInput(input, "stride"));
//       if (stride < 1) return absl::InvalidArgumentError("stride: stride must be >= 1");
//       return dataecho::StagePtr<T>(new StrideStage(std::move(input), stride));
//     }
//     absl::StatusOr<std::optional<T>> Next() override {
//       while (true) {
//         if (this->cancelled()) return dataecho::CancelledError();
//         absl::StatusOr<std::optional<T>> in;
//         totals_.input_wait_ns.Add(dataecho::PullTimed(this->input(), &in));
//         if (!in.ok() || !in->has_value()) return in;  // an error, or the end
//         if (position_++ % stride_ == 0) {
//           totals_.elements.Add(1);
//           return in;
//         }
//       }
//     }
//     ...  // OnRestart, SaveOwn/RestoreOwn (the position), the constructor
//    protected:
//     dataecho::StageStats OwnStats() const override { return totals_.Report("stride"); }
//    private:
//     const int64_t stride_;
//     int64_t position_ = 0;
//     dataecho::StageTotals<> totals_;
//   };
//
//   auto p = dataecho::FromVector(std::move(examples))
//                .Apply([](dataecho::StagePtr<dataecho::Example> in) {
//                  return StrideStage<dataecho::Example>::Make(std::move(in), 3);
//                });
//
// The parts, and where each is documented:
//   stage.h          Stage<T> (the contract: Next(), Cancel(), AppendStats(),
//                    Restart(), SaveState()/RestoreState(), SaveRefs()/Reread()),
//                    UnaryStage and PassThroughStage (bases that give a stage
//                    with one input its lifecycle and checkpoint shape),
//                    CheckInput(), PullTimed(), CancelledError(),
//                    CannotSaveAfterError()
//   checkpoint.h     StateWriter, StateReader, OptionsHash
//   element_traits.h ElementTraits<T> (byte size, fresh counts, epochs)
//   stats.h          StageStats
//   status_macros.h  DATAECHO_RETURN_IF_ERROR, DATAECHO_ASSIGN_OR_RETURN
//   trace.h          TraceScope and friends, to show a stage's own work in a
//                    timeline (optional)
// and here: StageTotals, the figures every stage reports, and
// StartPipelineThread(), which a stage that runs threads of its own calls
// first thing in each.
//
// Thread safety: StageTotals<StageCounter> (the default) has one writer, the
// stage's consumer thread, and any number of readers (AppendStats() may be
// called from any thread); StageTotals<int64_t> is a plain value, to guard
// with the stage's mutex.
#ifndef DATAECHO_STAGE_KIT_H_
#define DATAECHO_STAGE_KIT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/stage.h"
#include "dataecho/stats.h"
#include "dataecho/status_macros.h"

namespace dataecho {

// A statistics counter with one writer and any number of readers: Add(n),
// Set(n), Get(); no locked instruction on the writer's path.
using StageCounter = internal::Counter;

// Marks the calling thread as one of a pipeline's (a stage's producer or
// worker; the library's threads all do): names its track in a timeline
// (SetTraceThreadName, trace.h; `name` a string literal) and counts its CPU,
// while it runs and after it ends, as the pipeline's: auto echo's planner
// (echo_planner.h) reads the pipeline's CPU from these threads, and the rest
// of the process (the trainer, its libraries' threads) as not the pipeline's.
// Call it once, first thing in the thread.
DATAECHO_EXPORT void StartPipelineThread(const char* name);

// The figures every stage reports in its StageStats (stats.h): elements and
// bytes emitted, the time spent blocked on the input (add what PullTimed()
// returns) and the time the consumer was blocked on this stage (stages with
// threads only), in nanoseconds. `N` is StageCounter or int64_t.
template <typename N = StageCounter>
struct StageTotals {
  N elements{};
  N bytes{};
  N input_wait_ns{};
  N consumer_wait_ns{};

  // The stage's StageStats: these figures, `name` and the stage's own `extra`
  // figures (and the threads it runs, if any).
  StageStats Report(std::string name,
                    std::vector<std::pair<std::string, double>> extra = {}) const {
    return Report(std::move(name), 0, std::move(extra));
  }
  StageStats Report(std::string name, int threads,
                    std::vector<std::pair<std::string, double>> extra) const {
    StageStats s;
    s.name = std::move(name);
    s.threads = threads;
    s.elements = Value(elements);
    s.bytes = Value(bytes);
    s.input_wait = absl::Nanoseconds(Value(input_wait_ns));
    s.consumer_wait = absl::Nanoseconds(Value(consumer_wait_ns));
    s.extra = std::move(extra);
    return s;
  }

 private:
  static int64_t Value(int64_t v) { return v; }
  static int64_t Value(const StageCounter& c) { return c.Get(); }
};

}  // namespace dataecho

#endif  // DATAECHO_STAGE_KIT_H_
