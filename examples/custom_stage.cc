// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// A stage of your own (docs/writing_stages.md): StrideStage keeps every
// `stride`-th element of each epoch and drops the others. It is written with
// the stage kit (dataecho/stage_kit.h), added to a pipeline with Apply(),
// starts over under a Repeat, reports its stats, and saves its position in
// a checkpoint. The program reads the pipeline once without a stop, then
// again stopped after 20 elements -- its state saved, the pipeline
// destroyed, a new one built and restored -- and checks that the restored
// one continues at exactly the next element.
//
//   custom_stage
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dataecho/dataecho.h"

namespace {

using dataecho::Example;

struct StrideOptions {
  // Keep one element in `stride`: the first of each epoch, then every
  // stride-th after it. >= 1.
  int64_t stride = 2;
  // Name shown in stats, states and errors.
  std::string name = "stride";
};

// Elements pass unchanged, so it derives from PassThroughStage: references
// (for a Shuffle or Echo after it) and epochs are its input's.
template <typename T>
class StrideStage final : public dataecho::PassThroughStage<T> {
 public:
  // Factories check everything, and say what is wrong.
  static absl::StatusOr<dataecho::StagePtr<T>> Make(dataecho::StagePtr<T> input,
                                                    StrideOptions options) {
    DATAECHO_RETURN_IF_ERROR(dataecho::CheckInput(input, options.name));
    if (options.stride < 1) {
      return absl::InvalidArgumentError(options.name + ": stride must be >= 1, got " +
                                        std::to_string(options.stride));
    }
    return dataecho::StagePtr<T>(new StrideStage(std::move(input), std::move(options)));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    while (true) {
      if (this->cancelled()) return dataecho::CancelledError();
      absl::StatusOr<std::optional<T>> in;
      totals_.input_wait_ns.Add(dataecho::PullTimed(this->input(), &in));
      // An error (the input keeps it: errors are sticky) or the end.
      if (!in.ok() || !in->has_value()) return in;
      if (position_++ % options_.stride == 0) {
        totals_.elements.Add(1);
        totals_.bytes.Add(static_cast<int64_t>(dataecho::ElementTraits<T>::ByteSize(**in)));
        return in;
      }
      skipped_.Add(1);
    }
  }

 protected:
  // A new epoch (a Repeat above restarted the input): count from its start.
  absl::Status OnRestart(uint32_t /*epoch*/) override {
    position_ = 0;
    return absl::OkStatus();
  }

  // The checkpoint: the input's state is written first (UnaryStage does it),
  // then this section: its name, a hash of the options that change the
  // output (a state restores only into the same stride), and the position.
  std::string StateName() const override { return options_.name; }
  uint64_t StateOptionsHash() const override {
    return dataecho::OptionsHash().Add(options_.stride).value();
  }
  absl::Status SaveOwn(dataecho::StateWriter& w) override {
    w.I64(position_);
    return absl::OkStatus();
  }
  absl::Status RestoreOwn(dataecho::StateReader& r) override {
    const int64_t position = r.I64();
    if (!r.status().ok()) return r.status();  // truncated: DATA_LOSS
    if (position < 0) {
      return absl::DataLossError("pipeline state: " + options_.name + " at position " +
                                 std::to_string(position));
    }
    position_ = position;
    return absl::OkStatus();
  }

  dataecho::StageStats OwnStats() const override {
    return totals_.Report(options_.name, {{"skipped", static_cast<double>(skipped_.Get())}});
  }

 private:
  StrideStage(dataecho::StagePtr<T> input, StrideOptions options)
      : dataecho::PassThroughStage<T>(std::move(input)), options_(std::move(options)) {}

  const StrideOptions options_;
  int64_t position_ = 0;            // input elements read this epoch (consumer thread only)
  dataecho::StageTotals<> totals_;  // elements, bytes, input_wait
  dataecho::StageCounter skipped_;  // an extra figure of its own
};

// 60 examples, shuffled anew each of 2 epochs, one in 3 kept, read ahead.
dataecho::Pipeline<Example> Build() {
  std::vector<Example> examples(60);
  for (size_t i = 0; i < examples.size(); ++i) {
    examples[i].source_index = i;
    examples[i].label = static_cast<int64_t>(i % 10);
  }
  return dataecho::FromVector(std::move(examples))
      .Shuffle({.buffer_size = 16, .seed = 1})
      .Repeat(2)
      .Apply([](dataecho::StagePtr<Example> in) {
        return StrideStage<Example>::Make(std::move(in), {.stride = 3});
      })
      .Prefetch({.depth = 4});
}

std::string Key(const Example& e) {
  return std::to_string(e.source_index) + "@" + std::to_string(e.epoch);
}

// Up to `n` elements of `p` (all of them for n < 0) as keys.
absl::StatusOr<std::vector<std::string>> Read(dataecho::Pipeline<Example>& p, int64_t n) {
  std::vector<std::string> keys;
  while (n < 0 || static_cast<int64_t>(keys.size()) < n) {
    absl::StatusOr<std::optional<Example>> next = p.Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) break;
    keys.push_back(Key(**next));
  }
  return keys;
}

absl::Status Run() {
  constexpr int64_t kStopAfter = 20;
  dataecho::Pipeline<Example> whole = Build();
  DATAECHO_ASSIGN_OR_RETURN(const std::vector<std::string> expected, Read(whole, -1));
  std::printf("%s", dataecho::FormatStatsTable(whole.Stats()).c_str());

  std::string state;
  std::vector<std::string> got;
  {
    dataecho::Pipeline<Example> first = Build();
    DATAECHO_ASSIGN_OR_RETURN(got, Read(first, kStopAfter));
    DATAECHO_ASSIGN_OR_RETURN(state, first.SaveState());
  }  // destroyed, as in a stopped job
  dataecho::Pipeline<Example> again = Build();
  DATAECHO_RETURN_IF_ERROR(again.RestoreState(state));
  DATAECHO_ASSIGN_OR_RETURN(const std::vector<std::string> rest, Read(again, -1));
  got.insert(got.end(), rest.begin(), rest.end());

  std::printf("%zu elements; stopped after %lld, state %zu bytes, resumed at %s: %s\n",
              expected.size(), static_cast<long long>(kStopAfter), state.size(),
              rest.empty() ? "the end" : rest.front().c_str(),
              got == expected ? "identical" : "DIFFERENT");
  if (got != expected) return absl::InternalError("the restored pipeline went elsewhere");
  return absl::OkStatus();
}

}  // namespace

int main() {
  const absl::Status s = Run();
  if (!s.ok()) {
    std::fprintf(stderr, "custom_stage: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
