// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Mix's states and references (mix.h, docs/checkpoint.md).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dataecho/mix.h"
#include "dataecho/pipeline.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/mix_inputs.h"
#include "support/resume_check.h"

namespace dataecho {
namespace {

using testing::ExampleInputs;
using testing::kSpan;
using testing::RangeInputs;

// Resumes: the policies, echo on an input, a Shuffle after the mix (which
// saves references through it), epochs.
TEST(MixCheckpointTest, ResumesExactlyFromAnyPosition) {
  for (MixOnEmpty policy : {MixOnEmpty::kStopOnFirstEmpty, MixOnEmpty::kContinueRenormalized,
                            MixOnEmpty::kRestartInput}) {
    SCOPED_TRACE(std::string(MixOnEmptyName(policy)));
    testing::CheckResumes<Example>(
        [policy] {
          std::vector<Pipeline<Example>> inputs = ExampleInputs({30, 70, 12});
          inputs[1] = std::move(inputs[1]).Echo({.factor = 1.5, .seed = 2});
          return Mix(std::move(inputs), {.weights = {0.2, 0.5, 0.3},
                                         .seed = 5,
                                         .on_empty = policy,
                                         .weights_of = MixWeightsOf::kFresh})
              .Shuffle({.buffer_size = 16, .seed = 3})
              .Repeat(2);
        },
        30);
  }
  testing::CheckResumes<int64_t>(
      [] {
        return Mix(RangeInputs({50, 20}), {.seed = 1}).Shuffle({.buffer_size = 8, .seed = 1});
      },
      20);
}

// Records and batches mix too, and resume with an Echo and a Shuffle after
// the mix holding their elements.
TEST(MixCheckpointTest, RecordsAndBatchesMixAndResume) {
  auto records = [](uint64_t base, int n) {
    std::vector<Record> out;
    auto uri = std::make_shared<const std::string>(fmt::format("memory://{}", base));
    for (int i = 0; i < n; ++i) {
      Record r;
      r.data = Buffer::CopyOf(fmt::format("record {}", base + i));
      r.source = uri;
      r.source_index = base + i;
      out.push_back(std::move(r));
    }
    return FromVector(std::move(out));
  };
  const size_t n = testing::CheckResumes<Record>(
      [&] {
        std::vector<Pipeline<Record>> inputs;
        inputs.push_back(records(0, 40));
        inputs.push_back(records(kSpan, 25));
        return Mix(std::move(inputs), {.weights = {0.6, 0.4}, .seed = 2})
            .Echo({.factor = 1.5, .seed = 1})
            .Shuffle({.buffer_size = 8, .seed = 4});
      },
      20);
  EXPECT_GE(n, 65u);
  testing::CheckResumes<Batch>(
      [] {
        std::vector<Pipeline<Example>> examples = ExampleInputs({40, 24});
        std::vector<Pipeline<Batch>> inputs;
        for (Pipeline<Example>& e : examples)
          inputs.push_back(std::move(e).Batch({.batch_size = 4}));
        return Mix(std::move(inputs), {.seed = 6, .on_empty = MixOnEmpty::kRestartInput})
            .Echo({.factor = 2.0, .seed = 1});
      },
      20);
}

TEST(MixCheckpointTest, StateOfAnotherMixIsRefused) {
  Pipeline<int64_t> a = Mix(RangeInputs({10, 10}), {.weights = {1, 3}});
  ASSERT_TRUE(a.Next().ok());
  absl::StatusOr<std::string> state = a.SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  Pipeline<int64_t> other = Mix(RangeInputs({10, 10}), {.weights = {3, 1}});
  EXPECT_EQ(other.RestoreState(*state).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dataecho
