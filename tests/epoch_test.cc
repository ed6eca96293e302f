// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Epochs (source.h): a Repeat stage numbers its passes, the elements carry
// the epoch, and every seeded stage (augmenters, Echo, Shuffle) and the
// record sources' file order give each epoch its own randomness, the same for
// the same seed and epoch. Statistics add up over all epochs.
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dataecho/augment.h"
#include "dataecho/formats/idx.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

using ::dataecho::testing::Drain;
using ::dataecho::testing::MakeExamples;
using ::dataecho::testing::TempDir;

absl::StatusOr<Example> Augment(Example ex) { return testing::CropAndFlip(std::move(ex), 6, 1); }

// (pass number, source index) -> augmented bytes, for a stream of passes over
// the same items in order.
std::map<std::pair<int, uint64_t>, std::string> ByPass(const std::vector<Example>& out,
                                                       size_t per_pass) {
  std::map<std::pair<int, uint64_t>, std::string> m;
  for (size_t i = 0; i < out.size(); ++i) {
    m[{static_cast<int>(i / per_pass), out[i].source_index}] =
        std::string(out[i].components[0].buffer().view());
  }
  return m;
}

// The case: RepeatSource over a TFRecord source, then RandomCrop and
// RandomFlip. Every epoch must get new crops and flips, and the same seed the
// same ones.
TEST(EpochTest, RepeatSourceGivesEveryEpochNewAugmentations) {
  TempDir dir;
  const std::vector<std::string> uris = testing::WriteImageShards(dir, 4, 50, 8);
  auto run = [&] {
    auto p =
        From(RepeatSource<Record>(
                 [&] { return StagePtr<Record>(MakeTFRecordSource(OpenObjectStore(), uris)); }, 2))
            .Map([](const Record& r) { return DecodeImageRecord(r); }, {.parallelism = 0})
            .Map(Augment, {.parallelism = 0});
    return Drain(**std::move(p).Release());
  };
  absl::StatusOr<std::vector<Example>> a = run();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->size(), 400u);
  auto by_pass = ByPass(*a, 200);
  int same = 0;
  for (const Example& ex : std::vector<Example>(a->begin(), a->begin() + 200)) {
    if (by_pass[{0, ex.source_index}] == by_pass[{1, ex.source_index}]) ++same;
  }
  // 9 crop positions x 2 flips: about 1 in 18 repeats its augmentation by chance.
  EXPECT_LT(same, 40) << "epoch 2 repeated epoch 1's crop and flip for " << same << " of 200";
  for (size_t i = 0; i < a->size(); ++i) EXPECT_EQ((*a)[i].epoch, i / 200) << i;

  absl::StatusOr<std::vector<Example>> b = run();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(ByPass(*b, 200), by_pass);  // the same seed and epoch: the same augmentations
}

// Counts add up over the pipeline's life: the source row counts every epoch,
// the repeat row its own elements.
TEST(EpochTest, RepeatSourceStatsAccumulateOverEpochs) {
  auto p = From(RepeatSource<int64_t>([] { return RangeSource(0, 5); }, 3));
  while (true) {
    auto n = p.Next();
    ASSERT_TRUE(n.ok());
    if (!n->has_value()) break;
  }
  const std::vector<StageStats> stats = p.Stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].name, "range");
  EXPECT_EQ(stats[0].elements, 15);
  EXPECT_EQ(stats[1].name, "repeat");
  EXPECT_EQ(stats[1].elements, 15);
  EXPECT_EQ(stats[1].Extra("epochs_started"), 3);
}

TEST(EpochTest, RepeatStepNumbersEpochsAndCountsThem) {
  auto p = FromVector(MakeExamples(4)).Repeat(3);
  ASSERT_TRUE(p.status().ok()) << p.status();
  std::vector<std::pair<uint64_t, uint32_t>> seen;
  while (true) {
    auto n = p.Next();
    ASSERT_TRUE(n.ok()) << n.status();
    if (!n->has_value()) break;
    seen.emplace_back((*n)->source_index, (*n)->epoch);
  }
  ASSERT_EQ(seen.size(), 12u);
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].first, i % 4);
    EXPECT_EQ(seen[i].second, i / 4);
  }
  const std::vector<StageStats> stats = p.Stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].elements, 12);  // the source, over all epochs
  EXPECT_EQ(stats[1].elements, 12);
  EXPECT_EQ(stats[1].Extra("epochs_started"), 3);
}

TEST(EpochTest, RepeatForeverAndOverAnEmptySourceEnds) {
  auto forever = FromRange(0, 3).Repeat(-1).Take(10);
  auto got = Drain(**std::move(forever).Release());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0}));
  auto empty = FromRange(0, 0).Repeat(-1);  // an empty pass ends it: no spinning
  EXPECT_TRUE(Drain(**std::move(empty).Release())->empty());
  auto none = FromRange(0, 3).Repeat(0);
  EXPECT_TRUE(Drain(**std::move(none).Release())->empty());
}

TEST(EpochTest, NoEpochFollowsTheLastOne) {
  // Started at the last 32-bit epoch, a Repeat fails at its next pass instead
  // of starting epoch 0's draws again.
  auto p = FromVector(MakeExamples(2)).Repeat(3);
  ASSERT_TRUE(p.status().ok()) << p.status();
  StagePtr<Example> stage = *std::move(p).Release();
  ASSERT_TRUE(stage->Restart(UINT32_MAX).ok());
  for (int i = 0; i < 2; ++i) {
    auto e = stage->Next();
    ASSERT_TRUE(e.ok() && e->has_value()) << e.status();
    EXPECT_EQ((*e)->epoch, UINT32_MAX);
  }
  auto after = stage->Next();
  EXPECT_EQ(after.status().code(), absl::StatusCode::kOutOfRange) << after.status();
  EXPECT_EQ(stage->Next().status().code(), absl::StatusCode::kOutOfRange);  // sticky
}

TEST(EpochTest, TakeBelowRepeatTakesFromEveryEpoch) {
  auto p = FromRange(0, 10).Take(3).Repeat(2);
  auto got = Drain(**std::move(p).Release());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
}

TEST(EpochTest, NestedRepeatsNumberEpochsConsecutively) {
  auto p = FromVector(MakeExamples(2)).Repeat(2).Repeat(3);
  auto got = Drain(**std::move(p).Release());
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<uint32_t> epochs;
  for (const Example& e : *got) epochs.push_back(e.epoch);
  EXPECT_EQ(epochs, (std::vector<uint32_t>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
}

TEST(EpochTest, IdxSourceStartsOver) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  auto p = From(MakeIdxSource(OpenObjectStore(), dir + "/t10k-images-idx3-ubyte.gz",
                              dir + "/t10k-labels-idx1-ubyte.gz"))
               .Take(3)
               .Repeat(2);
  ASSERT_TRUE(p.status().ok()) << p.status();
  auto got = Drain(**std::move(p).Release());
  if (!got.ok() && got.status().code() == absl::StatusCode::kNotFound) {
    GTEST_SKIP() << "no Fashion-MNIST here: " << got.status();
  }
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 6u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*got)[i].source_index, (*got)[i + 3].source_index);
    EXPECT_EQ((*got)[i].label, (*got)[i + 3].label);
    EXPECT_EQ((*got)[i].epoch, 0u);
    EXPECT_EQ((*got)[i + 3].epoch, 1u);
  }
}

TEST(EpochTest, AMapStartsOverInlineOrParallel) {
  auto inline_map =
      FromRange(0, 3).Map([](int64_t v) { return v * 10; }, {.parallelism = 0}).Repeat(2);
  auto got = Drain(**std::move(inline_map).Release());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, (std::vector<int64_t>{0, 10, 20, 0, 10, 20}));
  auto parallel =
      FromRange(0, 3).Map([](int64_t v) { return v * 10; }, {.parallelism = 2, .name = "decode"});
  got = Drain(**std::move(parallel).Repeat(2).Release());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, (std::vector<int64_t>{0, 10, 20, 0, 10, 20}));
  // A parallel Map over a stage that cannot start over: that stage is named.
  auto over_generator = FromGenerator<int>([]() -> absl::StatusOr<std::optional<int>> { return 1; })
                            .Map([](int v) { return v; }, {.parallelism = 2, .name = "decode"})
                            .Repeat(2);
  EXPECT_EQ(over_generator.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(over_generator.status().message().find("generator cannot start a new epoch"),
            std::string::npos)
      << over_generator.status();
}

TEST(EpochTest, RepeatOverAStageThatCannotStartOverFailsWhenBuilt) {
  auto p = FromGenerator<int>([]() -> absl::StatusOr<std::optional<int>> { return 1; }).Repeat(2);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(p.status().message().find("generator"), std::string::npos) << p.status();
}

// Below a Repeat, Shuffle draws epoch e's order from (seed, e): epoch 0 is
// the order without Repeat, later epochs differ, reruns agree.
TEST(EpochTest, ShuffleBelowRepeatHasANewOrderEachEpoch) {
  auto order = [](int epochs) {
    std::vector<uint64_t> out;
    auto p = FromVector(MakeExamples(50)).Shuffle({.buffer_size = 50, .seed = 3});
    if (epochs > 0) p = std::move(p).Repeat(epochs);
    auto got = Drain(**std::move(p).Release());
    EXPECT_TRUE(got.ok());
    for (const Example& e : *got) out.push_back(e.source_index);
    return out;
  };
  const std::vector<uint64_t> plain = order(0), three = order(3);
  ASSERT_EQ(three.size(), 150u);
  const std::vector<uint64_t> e0(three.begin(), three.begin() + 50);
  const std::vector<uint64_t> e1(three.begin() + 50, three.begin() + 100);
  const std::vector<uint64_t> e2(three.begin() + 100, three.end());
  EXPECT_EQ(e0, plain);
  EXPECT_NE(e1, e0);
  EXPECT_NE(e2, e1);
  EXPECT_EQ(std::set<uint64_t>(e1.begin(), e1.end()).size(), 50u);
  EXPECT_EQ(order(3), three);
}

// Echo above a Repeat: epoch 0's copies are those without Repeat; epoch 1's
// come from (seed, 1), differ from epoch 0's and are the same in every run.
TEST(EpochTest, EchoDrawsDependOnSeedAndEpoch) {
  auto copies = [](int epochs) {
    std::vector<int> out;  // copies per fresh item, in order
    auto p = FromVector(MakeExamples(200));
    if (epochs > 0) p = std::move(p).Repeat(epochs);
    auto got = Drain(**std::move(p).Echo({.factor = 1.5, .seed = 9}).Release());
    EXPECT_TRUE(got.ok());
    for (const Example& e : *got) {
      if (e.fresh()) {
        out.push_back(1);
      } else {
        ++out.back();
      }
    }
    return out;
  };
  const std::vector<int> plain = copies(0), two = copies(2);
  ASSERT_EQ(two.size(), 400u);
  EXPECT_EQ(std::vector<int>(two.begin(), two.begin() + 200), plain);
  EXPECT_NE(std::vector<int>(two.begin() + 200, two.end()), plain);
  EXPECT_EQ(copies(2), two);
}

// Echo below a Repeat starts each epoch's draws from (seed, epoch) too, and
// adaptive echo can start over.
TEST(EpochTest, EchoStagesBelowRepeatStartOver) {
  auto p = FromVector(MakeExamples(100)).Echo({.factor = 1.5, .seed = 9}).Repeat(2);
  auto got = Drain(**std::move(p).Release());
  ASSERT_TRUE(got.ok()) << got.status();
  auto above = FromVector(MakeExamples(100)).Repeat(2).Echo({.factor = 1.5, .seed = 9});
  auto want = Drain(**std::move(above).Release());
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    EXPECT_EQ(std::tie((*got)[i].source_index, (*got)[i].repeat_index, (*got)[i].epoch),
              std::tie((*want)[i].source_index, (*want)[i].repeat_index, (*want)[i].epoch))
        << i;
  }
  auto adaptive =
      FromVector(MakeExamples(20)).AdaptiveEcho({.max_factor = 2, .pool_size = 4}).Repeat(3);
  auto a = Drain(**std::move(adaptive).Release());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_GE(a->size(), 60u);
  EXPECT_EQ(a->back().epoch, 2u);
}

TEST(EpochTest, BatchCarriesTheNewestEpochOfItsRows) {
  auto above = FromVector(MakeExamples(5)).Repeat(2).Batch({.batch_size = 3});
  auto got = Drain(**std::move(above).Release());
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<uint32_t> epochs;
  for (const Batch& b : *got) epochs.push_back(b.epoch);
  EXPECT_EQ(epochs, (std::vector<uint32_t>{0, 1, 1, 1}));  // rows 3 + 3 (2 of epoch 1) + 3 + 1
  auto below = FromVector(MakeExamples(5)).Batch({.batch_size = 3}).Repeat(2);
  got = Drain(**std::move(below).Release());
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<int64_t> rows;
  epochs.clear();
  for (const Batch& b : *got) {
    rows.push_back(b.num_rows);
    epochs.push_back(b.epoch);
  }
  EXPECT_EQ(rows, (std::vector<int64_t>{3, 2, 3, 2}));
  EXPECT_EQ(epochs, (std::vector<uint32_t>{0, 0, 1, 1}));
}

// Record sources read epoch 0 in the given order, later epochs in a seeded
// shuffled order; every epoch has every record once, with the same source
// index; the same seed gives the same orders. Sequential and interleaved.
TEST(EpochTest, RecordSourcesShuffleTheirFileOrderPerEpoch) {
  TempDir dir;
  const std::vector<std::string> uris = testing::WriteImageShards(dir, 8, 2, 8);
  for (int cycle : {1, 3}) {
    auto files_per_epoch = [&](InterleaveOptions interleave) {
      interleave.cycle_length = cycle;
      auto p = From(MakeTFRecordSource(OpenObjectStore(), uris, {}, interleave)).Repeat(3);
      EXPECT_TRUE(p.status().ok()) << p.status();
      std::vector<std::vector<uint64_t>> files(3);
      std::vector<std::set<uint64_t>> indices(3);
      while (true) {
        auto r = p.Next();
        EXPECT_TRUE(r.ok()) << r.status();
        if (!r.ok() || !r->has_value()) break;
        const Record& rec = **r;
        EXPECT_LT(rec.epoch, 3u);
        if (rec.epoch >= 3) break;
        const uint64_t file = rec.source_index >> kRecordIndexBits;
        if (files[rec.epoch].empty() || files[rec.epoch].back() != file) {
          files[rec.epoch].push_back(file);
        }
        indices[rec.epoch].insert(rec.source_index);
      }
      for (const auto& s : indices) EXPECT_EQ(s.size(), 16u);
      EXPECT_EQ(p.Stats()[0].elements, 48);
      return files;
    };
    const auto shuffled = files_per_epoch({});
    if (cycle == 1) {
      EXPECT_EQ(shuffled[0], (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
      for (int e = 1; e < 3; ++e) {
        EXPECT_EQ(std::set<uint64_t>(shuffled[e].begin(), shuffled[e].end()).size(), 8u);
      }
    }
    EXPECT_NE(shuffled[1], shuffled[0]) << "cycle " << cycle;
    EXPECT_NE(shuffled[2], shuffled[1]) << "cycle " << cycle;
    EXPECT_EQ(files_per_epoch({}), shuffled) << "cycle " << cycle;
    EXPECT_NE(files_per_epoch({.file_order_seed = 5}), shuffled) << "cycle " << cycle;
    const auto fixed = files_per_epoch({.shuffle_files_each_epoch = false});
    EXPECT_EQ(fixed[1], fixed[0]);
    EXPECT_EQ(fixed[2], fixed[0]);
  }
}

// A Take that stops an interleaved source mid-file: the reading threads are
// stopped and started over for the next epoch.
TEST(EpochTest, InterleavedSourceRestartsWhileItsThreadsRun) {
  TempDir dir;
  const std::vector<std::string> uris = testing::WriteImageShards(dir, 4, 20, 8);
  auto p = From(MakeTFRecordSource(OpenObjectStore(), uris, {},
                                   {.cycle_length = 2, .buffered_records = 2}))
               .Take(5)
               .Repeat(4);
  auto got = Drain(**std::move(p).Release());
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 20u);
  for (size_t i = 0; i < got->size(); ++i) EXPECT_EQ((*got)[i].epoch, i / 5);
}

// The whole chain below Repeat starts over: decode Map inline, augment above.
TEST(EpochTest, RepeatedTFRecordPipelineAugmentsEachEpochAnew) {
  TempDir dir;
  const std::vector<std::string> uris = testing::WriteImageShards(dir, 2, 30, 8);
  auto p =
      From(MakeTFRecordSource(OpenObjectStore(), uris, {}, {.shuffle_files_each_epoch = false}))
          .Repeat(2)
          .Map([](const Record& r) { return DecodeImageRecord(r); }, {.parallelism = 0})
          .Map(Augment, {.parallelism = 0});
  auto got = Drain(**std::move(p).Release());
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 120u);
  auto by_pass = ByPass(*got, 60);
  int same = 0;
  for (int i = 0; i < 60; ++i) {
    const uint64_t s = (*got)[static_cast<size_t>(i)].source_index;
    if (by_pass[{0, s}] == by_pass[{1, s}]) ++same;
  }
  EXPECT_LT(same, 15);
}

}  // namespace
}  // namespace dataecho
