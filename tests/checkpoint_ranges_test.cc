// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Checkpoints of range sources (formats/range_source.h) over real TFRecord
// files, with cycle_length 1, 2 and 3: several ranges of one file, ranges of
// different files, an empty range; saved after every record, restored into a
// rebuilt source, compared record by record with an uninterrupted run; a
// Prefetch, an Echo and a Shuffle above; a state of another range list
// refused; damaged states.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "dataecho/checkpoint.h"
#include "dataecho/formats/range_source.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/formats/tfrecord_index.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/epoch_plan.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/checkpoint_check.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

using testing::CheckResumes;
using ::testing::HasSubstr;
using testing::Rest;
using testing::Store;

// Several ranges of file 0 (adjacent and not, out of order), ranges of the
// other files between them, an empty one, one of a single record.
const std::vector<RecordRange> kRanges = {
    {.file = 0, .begin = 0, .end = 5},  {.file = 1, .begin = 2, .end = 9},
    {.file = 0, .begin = 5, .end = 12}, {.file = 2, .begin = 0, .end = 4},
    {.file = 1, .begin = 9, .end = 10}, {.file = 0, .begin = 12, .end = 12},
    {.file = 2, .begin = 4, .end = 11}, {.file = 0, .begin = 14, .end = 17},
    {.file = 1, .begin = 0, .end = 2},
};

class RangeCheckpointTest : public ::testing::Test {
 protected:
  RangeCheckpointTest()
      : paths_(testing::WriteIndexedTFRecordFiles(dir_, {20, 10, 11}, &indexes_)) {}

  // The source over `ranges`; with indexes each range is one ranged read,
  // without them read from its file's start (LimitToRange).
  StagePtr<Record> Source(const std::vector<RecordRange>& ranges, InterleaveOptions interleave,
                          bool indexed = true) const {
    return MakeTFRecordRangeSource(
        Store(), paths_, ranges,
        indexed ? std::make_shared<const std::vector<TFRecordIndex>>(indexes_) : nullptr, {},
        interleave);
  }

  testing::TempDir dir_;
  std::vector<TFRecordIndex> indexes_;
  const std::vector<std::string> paths_;
};

// Saves `make()` after each k = 0..n records of an uninterrupted run of n,
// restores a rebuilt pipeline from it (and one from the restored pipeline's
// state, saved at once), and compares the rest with the run's. Returns n.
size_t ExpectResumesAtEveryPoint(const std::function<Pipeline<Record>()>& make) {
  Pipeline<Record> whole = make();
  const std::vector<std::string> expected = Rest(whole);
  std::vector<size_t> at(expected.size() + 1);
  std::iota(at.begin(), at.end(), size_t{0});
  return testing::CheckResumesAt(make, expected, at) ? expected.size() : 0;
}

TEST_F(RangeCheckpointTest, InterleavedRangesResumeAfterEveryRecord) {
  size_t total = 0;
  for (const RecordRange& r : kRanges) total += r.size();
  for (int cycle : {1, 2, 3}) {
    for (size_t buffered : {size_t{1}, size_t{4}}) {
      for (bool indexed : {true, false}) {
        SCOPED_TRACE(fmt::format("cycle_length {} buffered_records {} {}", cycle, buffered,
                                 indexed ? "indexed" : "not indexed"));
        const InterleaveOptions interleave{.cycle_length = cycle, .buffered_records = buffered};
        EXPECT_EQ(
            ExpectResumesAtEveryPoint([&] { return From(Source(kRanges, interleave, indexed)); }),
            total);
      }
    }
  }
}

// The records a restored source reads on are those of the ranges' rest:
// checked against the ranges themselves, not only against another run.
TEST_F(RangeCheckpointTest, RestoredSourceReadsTheRangesRest) {
  for (int cycle : {2, 3}) {
    const InterleaveOptions interleave{.cycle_length = cycle};
    Pipeline<Record> whole = From(Source(kRanges, interleave));
    std::vector<std::string> all;
    for (std::string& key : Rest(whole)) all.push_back(std::move(key));
    std::vector<std::string> want;
    for (const RecordRange& r : kRanges) {
      for (uint64_t i = r.begin; i < r.end; ++i) want.push_back(fmt::format("f{}-r{}", r.file, i));
    }
    for (size_t k : {size_t{0}, size_t{1}, all.size() / 2, all.size()}) {
      std::vector<std::string> got =
          testing::KeysAcrossSave<Record>([&] { return From(Source(kRanges, interleave)); }, k,
                                          [](const Record& r) {
                                            const std::string_view data = r.data.view();
                                            return std::string(data.substr(0, data.find('.')));
                                          });
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      EXPECT_EQ(got, want) << "cycle_length " << cycle << ", saved after " << k;
    }
  }
}

TEST_F(RangeCheckpointTest, InterleavedRangesBehindAPrefetchResume) {
  for (int cycle : {2, 3}) {
    SCOPED_TRACE(fmt::format("cycle_length {}", cycle));
    const InterleaveOptions interleave{.cycle_length = cycle, .buffered_records = 3};
    EXPECT_GT(CheckResumes<Record>(
                  [&] { return From(Source(kRanges, interleave)).Prefetch({.depth = 4}); }),
              30u);
  }
}

// A Shuffle's and an Echo's references to a range source's records name
// their dataset file: they are read again from it (not from the range at
// that place of the list), with and without indexes, with any cycle_length.
TEST_F(RangeCheckpointTest, EchoAndShuffleAboveRangesResume) {
  for (int cycle : {1, 2, 3}) {
    for (bool indexed : {true, false}) {
      SCOPED_TRACE(fmt::format("cycle_length {}, indexed {}", cycle, indexed));
      const InterleaveOptions interleave{.cycle_length = cycle, .buffered_records = 3};
      EXPECT_GT(CheckResumes<Record>([&] {
                  return From(Source(kRanges, interleave, indexed))
                      .Prefetch({.depth = 4})
                      .Echo({.factor = 2, .seed = 3})
                      .Shuffle({.buffer_size = 9, .seed = 4});
                }),
                60u);
    }
  }
}

// The references' files are fingerprinted by dataset file: one that changed
// after the save is DATA_LOSS naming it.
TEST_F(RangeCheckpointTest, ChangedFileUnderReferencesIsDataLoss) {
  const InterleaveOptions interleave{.cycle_length = 2};
  auto make = [&] {
    return From(Source(kRanges, interleave, /*indexed=*/false))
        .Echo({.factor = 2, .seed = 3})
        .Shuffle({.buffer_size = 40, .seed = 4});
  };
  absl::StatusOr<std::string> state = testing::SaveAfter(make(), 30);
  ASSERT_TRUE(state.ok()) << state.status();
  std::string bytes;
  for (int i = 0; i < 11; ++i) AppendTFRecord(&bytes, fmt::format("f2-r{}-changed", i));
  testing::WriteFileOrDie(paths_[2], bytes);
  Pipeline<Record> b = make();
  const absl::Status restored = b.RestoreState(*state);
  EXPECT_EQ(restored.code(), absl::StatusCode::kDataLoss) << restored;
  EXPECT_THAT(restored.message(), HasSubstr("part-02.tfrecord"));
}

TEST_F(RangeCheckpointTest, NonDeterministicInterleavedRangesResumeExactlyOnce) {
  const InterleaveOptions interleave{.cycle_length = 3, .deterministic = false};
  Pipeline<Record> whole = From(Source(kRanges, interleave));
  std::vector<std::string> all = Rest(whole);
  std::sort(all.begin(), all.end());
  for (size_t k : {size_t{0}, size_t{7}, size_t{30}, all.size()}) {
    std::vector<std::string> got =
        testing::KeysAcrossSave<Record>([&] { return From(Source(kRanges, interleave)); }, k);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, all) << "saved after " << k;
  }
}

// A state of another list of ranges (other bounds over the same files, or
// other files) is INVALID_ARGUMENT naming the source, never another position.
TEST_F(RangeCheckpointTest, StateOfAnotherRangeListIsRefused) {
  std::vector<RecordRange> shifted = kRanges;
  shifted[2].begin = 6;  // same files in the same places, one bound moved
  std::vector<RecordRange> swapped = kRanges;
  std::swap(swapped[0], swapped[1]);
  std::vector<RecordRange> shorter(kRanges.begin(), kRanges.end() - 1);
  for (int cycle : {2, 3}) {
    const InterleaveOptions interleave{.cycle_length = cycle};
    absl::StatusOr<std::string> state = testing::SaveAfter(From(Source(kRanges, interleave)), 6);
    ASSERT_TRUE(state.ok()) << state.status();
    for (const std::vector<RecordRange>* other : {&shifted, &swapped, &shorter}) {
      Pipeline<Record> q = From(Source(*other, interleave));
      absl::Status s = q.RestoreState(*state);
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
      EXPECT_THAT(s.message(), HasSubstr("'tfrecord_source') has other options")) << s;
    }
    // The same list restores.
    Pipeline<Record> same = From(Source(kRanges, interleave));
    EXPECT_TRUE(same.RestoreState(*state).ok());
  }
}

// Damaged states of an interleaved range source fail to restore or end,
// never crash or spin.
TEST_F(RangeCheckpointTest, FlippedStatesOfInterleavedRangesEnd) {
  const InterleaveOptions interleave{.cycle_length = 3, .buffered_records = 2};
  auto make = [&] { return From(Source(kRanges, interleave)); };
  absl::StatusOr<std::string> state = testing::SaveAfter(make(), 11);
  ASSERT_TRUE(state.ok()) << state.status();
  testing::CheckFlippedStatesEnd<Record>(make, *state, 200);
}

}  // namespace
}  // namespace dataecho
