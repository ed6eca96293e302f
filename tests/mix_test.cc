// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/mix.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dataecho/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/mix_inputs.h"
#include "support/resume_check.h"

namespace dataecho {
namespace {

using testing::All;
using testing::ExampleInputs;
using ::testing::HasSubstr;
using testing::kSpan;
using testing::RangeInputs;

// |count - n p| within 5 standard deviations of a binomial(n, p).
void ExpectBinomial(int64_t count, int64_t n, double p, const std::string& what) {
  const double mean = static_cast<double>(n) * p;
  const double sd = std::sqrt(static_cast<double>(n) * p * (1 - p));
  EXPECT_LE(std::abs(static_cast<double>(count) - mean), 5 * sd)
      << what << ": " << count << " of " << n << ", expected " << mean;
}

TEST(MixTest, ProportionsOver100000DrawsAreWithinBinomialBounds) {
  const std::vector<double> weights = {5, 3, 2};
  Pipeline<int64_t> mixed =
      Mix(RangeInputs({200'000, 200'000, 200'000}), {.weights = weights, .seed = 7}).Take(100'000);
  std::vector<int64_t> counts(3, 0);
  std::vector<int64_t> next(3, 0);
  for (int64_t v : All(mixed)) {
    const int64_t k = v / kSpan;
    ASSERT_LT(k, 3);
    EXPECT_EQ(v % kSpan, next[k]++) << "each input is read in order";
    ++counts[k];
  }
  ASSERT_EQ(counts[0] + counts[1] + counts[2], 100'000);
  for (int k = 0; k < 3; ++k) ExpectBinomial(counts[k], 100'000, weights[k] / 10, "input");
}

TEST(MixTest, SameSeedSameOrderOtherSeedAnother) {
  auto run = [](uint64_t seed) {
    Pipeline<int64_t> p = Mix(RangeInputs({500, 500}), {.seed = seed});
    return All(p);
  };
  EXPECT_EQ(run(3), run(3));
  EXPECT_NE(run(3), run(4));
}

TEST(MixTest, ContinueRenormalizedGivesEveryElementOncePerEpoch) {
  const std::vector<int64_t> sizes = {300, 37, 1, 0};
  Pipeline<Example> mixed =
      Mix(ExampleInputs(sizes), {.weights = {0.1, 0.6, 0.2, 0.1},
                                 .seed = 2,
                                 .on_empty = MixOnEmpty::kContinueRenormalized})
          .Repeat(3);
  std::map<std::pair<uint32_t, uint64_t>, int> seen;
  for (const Example& e : All(mixed)) ++seen[{e.epoch, e.source_index}];
  for (uint32_t epoch = 0; epoch < 3; ++epoch) {
    for (size_t k = 0; k < sizes.size(); ++k) {
      for (int64_t i = 0; i < sizes[k]; ++i) {
        const auto key = std::make_pair(epoch, static_cast<uint64_t>(k) * kSpan + i);
        EXPECT_EQ(seen[key], 1) << "epoch " << epoch << " input " << k << " item " << i;
      }
    }
  }
  EXPECT_EQ(seen.size(), 3u * (300 + 37 + 1));
}

TEST(MixTest, StopOnFirstEmptyEndsWhenTheDrawnInputHasEnded) {
  const std::vector<int64_t> sizes = {50, 1000};
  Pipeline<int64_t> mixed =
      Mix(RangeInputs(sizes), {.seed = 9, .on_empty = MixOnEmpty::kStopOnFirstEmpty});
  std::vector<int64_t> got = All(mixed);
  std::vector<int64_t> next(2, 0);
  for (int64_t v : got) EXPECT_EQ(v % kSpan, next[v / kSpan]++) << "at most once, in order";
  // Input 0 was read to its end, and the mix stopped at the next draw of it:
  // the elements after input 0's last are all input 1's, and fewer than a
  // geometric tail allows.
  EXPECT_EQ(next[0], 50);
  EXPECT_LT(next[1], 1000);
  size_t last0 = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] / kSpan == 0) last0 = i;
  }
  EXPECT_LT(got.size() - last0, 60u);
}

TEST(MixTest, RestartInputCyclesEndedInputsUntilEveryInputEndedOnce) {
  const std::vector<int64_t> sizes = {10, 200};
  Pipeline<Example> mixed =
      Mix(ExampleInputs(sizes), {.seed = 4, .on_empty = MixOnEmpty::kRestartInput});
  std::vector<Example> got = All(mixed);
  std::map<uint32_t, std::multiset<uint64_t>> small_passes;
  std::multiset<uint64_t> large;
  for (const Example& e : got) {
    if (e.source_index >= static_cast<uint64_t>(kSpan)) {
      EXPECT_EQ(e.epoch, 0u);
      large.insert(e.source_index);
    } else {
      small_passes[e.epoch].insert(e.source_index);
    }
  }
  // The large input, read once: every element exactly once (the mix ended
  // at the first draw of it after its end: the last input's first end).
  EXPECT_EQ(large.size(), 200u);
  EXPECT_EQ(std::set<uint64_t>(large.begin(), large.end()).size(), 200u);
  // The small one, about 20 passes, numbered 0, 1, 2, ...: each whole pass
  // gives each element once; the last at most once.
  ASSERT_GE(small_passes.size(), 10u);
  uint32_t expect_epoch = 0;
  for (const auto& [epoch, items] : small_passes) {
    EXPECT_EQ(epoch, expect_epoch++);
    std::set<uint64_t> distinct(items.begin(), items.end());
    EXPECT_EQ(distinct.size(), items.size()) << "pass " << epoch;
    if (epoch + 1 < small_passes.size()) EXPECT_EQ(items.size(), 10u) << "pass " << epoch;
  }
  // The weights held over the whole epoch: 50/50 of what was emitted.
  const int64_t small = static_cast<int64_t>(got.size()) - 200;
  ExpectBinomial(small, static_cast<int64_t>(got.size()), 0.5, "small input");
}

TEST(MixTest, RestartInputNeedsInputsThatCanStartOver) {
  std::vector<Pipeline<int64_t>> inputs;
  inputs.push_back(FromRange(0, 10));
  inputs.push_back(FromGenerator<int64_t>(
      []() -> absl::StatusOr<std::optional<int64_t>> { return std::optional<int64_t>(1); }));
  Pipeline<int64_t> p = Mix(std::move(inputs), {.on_empty = MixOnEmpty::kRestartInput});
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented) << p.status();
}

TEST(MixTest, BadWeightsAreRefusedNamingTheOption) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const std::vector<double>& w : std::vector<std::vector<double>>{
           {nan, 1}, {-0.5, 1}, {0, 0}, {1}, {1, 2, 3}, {inf, 1}, {1e308, 1e308}}) {
    Pipeline<int64_t> p = Mix(RangeInputs({3, 3}), {.weights = w});
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(p.status().message(), HasSubstr("weights")) << p.status();
  }
  Pipeline<int64_t> none = Mix(std::vector<Pipeline<int64_t>>{});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(none.status().message(), HasSubstr("inputs"));
  // An input's build error is the mix's.
  std::vector<Pipeline<int64_t>> broken = RangeInputs({3});
  broken.push_back(FromRange(0, 3).Shuffle({.buffer_size = 0}));
  EXPECT_FALSE(Mix(std::move(broken)).status().ok());
}

TEST(MixTest, WeightZeroInputIsNeverRead) {
  Pipeline<int64_t> mixed = Mix(RangeInputs({100, 100}), {.weights = {1, 0}});
  std::vector<int64_t> got = All(mixed);
  ASSERT_EQ(got.size(), 100u);
  for (int64_t v : got) EXPECT_LT(v, kSpan);
}

TEST(MixTest, RestartIsFreeOfHiddenState) {
  auto make = [] { return Mix(ExampleInputs({40, 60}), {.weights = {0.3, 0.7}, .seed = 11}); };
  Pipeline<Example> fresh = make();
  absl::StatusOr<StagePtr<Example>> a = std::move(fresh).Release();
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE((*a)->EnableRestart().ok());
  ASSERT_TRUE((*a)->Restart(5).ok());
  absl::StatusOr<std::vector<Example>> expected = testing::Drain(**a);
  ASSERT_TRUE(expected.ok());

  Pipeline<Example> used = make();
  absl::StatusOr<StagePtr<Example>> b = std::move(used).Release();
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE((*b)->EnableRestart().ok());
  for (int i = 0; i < 73; ++i) ASSERT_TRUE((*b)->Next().ok());  // an input ended, others read
  ASSERT_TRUE((*b)->Restart(5).ok());
  absl::StatusOr<std::vector<Example>> got = testing::Drain(**b);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), expected->size());
  for (size_t i = 0; i < got->size(); ++i) {
    EXPECT_EQ(testing::Key((*got)[i]), testing::Key((*expected)[i])) << i;
    EXPECT_EQ((*got)[i].epoch, 5u);
  }
}

TEST(MixTest, EachRankMixesItsOwnShards) {
  constexpr int kWorld = 3;
  std::multiset<int64_t> all;
  for (int rank = 0; rank < kWorld; ++rank) {
    std::vector<Pipeline<int64_t>> shards;
    shards.push_back(FromRange(rank, 90, kWorld));                  // input 0, sharded
    shards.push_back(FromRange(kSpan + rank, kSpan + 30, kWorld));  // input 1, sharded
    Pipeline<int64_t> mixed = Mix(std::move(shards), {.weights = {0.75, 0.25}, .seed = 1});
    for (int64_t v : All(mixed)) {
      EXPECT_EQ((v % kSpan) % kWorld, rank) << "rank " << rank << " got another rank's element";
      all.insert(v);
    }
  }
  std::multiset<int64_t> expected;
  for (int64_t i = 0; i < 90; ++i) expected.insert(i);
  for (int64_t i = 0; i < 30; ++i) expected.insert(kSpan + i);
  EXPECT_EQ(all, expected);
}

// Input 0 echoed 3 times, input 1 not.
std::vector<Pipeline<Example>> EchoedInputs(int64_t n) {
  std::vector<Pipeline<Example>> inputs = ExampleInputs({n, n});
  inputs[0] = std::move(inputs[0]).Echo({.factor = 3.0, .seed = 1});
  return inputs;
}

double Extra(const StageStats& s, const std::string& key) {
  for (const auto& [k, v] : s.extra) {
    if (k == key) return v;
  }
  ADD_FAILURE() << "no " << key;
  return -1;
}

TEST(MixTest, WeightsOfFreshDivideOutEachInputsEchoFactor) {
  constexpr int64_t kEmitted = 40'000;
  Pipeline<Example> fresh_weights =
      Mix(EchoedInputs(kEmitted), {.seed = 3, .weights_of = MixWeightsOf::kFresh}).Take(kEmitted);
  std::vector<int64_t> fresh(2, 0), emitted(2, 0);
  for (const Example& e : All(fresh_weights)) {
    const size_t k = e.source_index >= static_cast<uint64_t>(kSpan) ? 1 : 0;
    ++emitted[k];
    fresh[k] += e.fresh() ? 1 : 0;
  }
  // 50/50 of the fresh items, so input 0 emits 3 times as much.
  const double share = static_cast<double>(fresh[0]) / static_cast<double>(fresh[0] + fresh[1]);
  EXPECT_NEAR(share, 0.5, 0.02) << fresh[0] << " vs " << fresh[1];
  EXPECT_NEAR(static_cast<double>(emitted[0]) / kEmitted, 0.75, 0.02);
  // Stats per input: elements, fresh and echoed.
  std::vector<StageStats> stats = fresh_weights.Stats();
  const StageStats* mix = nullptr;
  for (const StageStats& s : stats) {
    if (s.name == "mix") mix = &s;
  }
  ASSERT_NE(mix, nullptr);
  EXPECT_EQ(Extra(*mix, "input0_elements"), static_cast<double>(emitted[0]));
  EXPECT_EQ(Extra(*mix, "input0_fresh"), static_cast<double>(fresh[0]));
  EXPECT_EQ(Extra(*mix, "input0_echoed"), static_cast<double>(emitted[0] - fresh[0]));
  EXPECT_EQ(Extra(*mix, "input1_echoed"), 0.0);
  EXPECT_EQ(Extra(*mix, "input1_weight"), 0.5);

  // By default the weights are shares of what is emitted.
  Pipeline<Example> emitted_weights = Mix(EchoedInputs(kEmitted), {.seed = 3}).Take(kEmitted);
  int64_t from0 = 0;
  for (const Example& e : All(emitted_weights)) from0 += e.source_index < uint64_t{kSpan} ? 1 : 0;
  ExpectBinomial(from0, kEmitted, 0.5, "input 0 emitted");
}

// An input whose echo factor climbs from 1 to 5 halfway (as an adaptive
// echo's does when its upstream slows down): the draw follows the recent
// factor, so the fresh items stay 50/50 after the change too.
TEST(MixTest, WeightsOfFreshFollowAFactorThatChanges) {
  std::vector<Example> climbing;
  for (uint64_t i = 0; i < 10'000; ++i) {
    const int copies = i < 5'000 ? 1 : 5;
    for (int c = 0; c < copies; ++c) {
      Example e = testing::MakeExample(i, 8);
      e.repeat_index = static_cast<uint32_t>(c);
      climbing.push_back(std::move(e));
    }
  }
  std::vector<Pipeline<Example>> inputs = ExampleInputs({0, 40'000});
  inputs[0] = FromVector(std::move(climbing));
  Pipeline<Example> mixed =
      Mix(std::move(inputs), {.seed = 8, .weights_of = MixWeightsOf::kFresh}).Take(30'000);
  // From the 500th fresh item of the second phase on: the factor is 5.
  int64_t fresh[2] = {0, 0};
  bool counting = false;
  for (const Example& e : All(mixed)) {
    const int k = e.source_index >= static_cast<uint64_t>(kSpan) ? 1 : 0;
    if (k == 0 && e.source_index == 5'500) counting = true;
    if (counting && e.fresh()) ++fresh[k];
  }
  ASSERT_GT(fresh[0] + fresh[1], 5'000);
  const double share = static_cast<double>(fresh[0]) / static_cast<double>(fresh[0] + fresh[1]);
  EXPECT_NEAR(share, 0.5, 0.03) << fresh[0] << " vs " << fresh[1];
}

// Inputs that read ahead on their own threads: the same order as inline
// ones (the draws do not depend on timing); Stats() from another thread
// while it runs, and Cancel() reaching every input.
TEST(MixTest, PrefetchedInputsGiveTheSameOrderAndCancelReachesThem) {
  auto make = [](bool prefetch) {
    std::vector<Pipeline<Example>> inputs = ExampleInputs({300, 200, 100});
    if (prefetch) {
      for (Pipeline<Example>& in : inputs) in = std::move(in).Prefetch({.depth = 4});
    }
    return Mix(std::move(inputs), {.weights = {0.2, 0.3, 0.5}, .seed = 12});
  };
  Pipeline<Example> inline_inputs = make(false);
  std::vector<std::string> expected;
  for (const Example& e : All(inline_inputs)) expected.push_back(testing::Key(e));
  Pipeline<Example> prefetched = make(true);
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    while (!stop.load()) (void)prefetched.Stats();
  });
  std::vector<std::string> got;
  for (const Example& e : All(prefetched)) got.push_back(testing::Key(e));
  stop.store(true);
  watcher.join();
  EXPECT_EQ(got, expected);

  Pipeline<Example> cancelled = make(true);
  ASSERT_TRUE(cancelled.Next().ok());
  std::thread canceller([&] { cancelled.Cancel(); });
  canceller.join();
  EXPECT_EQ(cancelled.Next().status().code(), absl::StatusCode::kCancelled);
}

TEST(MixTest, AnInputsErrorComesInOrderAndStays) {
  int calls = 0;
  std::vector<Pipeline<int64_t>> inputs;
  inputs.push_back(FromGenerator<int64_t>([&]() -> absl::StatusOr<std::optional<int64_t>> {
    if (++calls > 5) return absl::DataLossError("broken input");
    return std::optional<int64_t>(calls);
  }));
  inputs.push_back(FromRange(kSpan, 2 * kSpan));
  Pipeline<int64_t> mixed = Mix(std::move(inputs), {.seed = 1});
  int from_first = 0;
  absl::Status error;
  for (int i = 0; i < 1000 && error.ok(); ++i) {
    absl::StatusOr<std::optional<int64_t>> next = mixed.Next();
    if (!next.ok()) {
      error = next.status();
    } else if (**next < kSpan) {
      EXPECT_EQ(**next, ++from_first);
    }
  }
  EXPECT_EQ(from_first, 5);
  EXPECT_EQ(error.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(mixed.Next().status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace dataecho
