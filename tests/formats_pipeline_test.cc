// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The formats inside a real pipeline: TFRecord shards of image records ->
// decode -> prefetch -> echo -> augment, as the design's data path.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dataecho/augment.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "gtest/gtest.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

std::vector<std::string> WriteShards(const testing::TempDir& dir, int shards, int per_shard) {
  std::vector<std::string> uris;
  for (int s = 0; s < shards; ++s) {
    uris.push_back(dir.File("shard-" + std::to_string(s)));
    auto w = TFRecordWriter::Create(uris.back());
    for (int i = 0; i < per_shard; ++i) {
      MutableBuffer mb(8 * 8);
      for (int p = 0; p < 64; ++p) mb.data()[p] = static_cast<uint8_t>(s * 50 + i * 3 + p);
      auto img = Tensor::Make(DType::kUInt8, {8, 8, 1}, std::move(mb).Freeze());
      EXPECT_TRUE((*w)->Write(*EncodeImageRecord(*img, s * 100 + i)).ok());
    }
    EXPECT_TRUE((*w)->Close().ok());
  }
  return uris;
}

// (source_index, repeat_index) -> augmented pixels, for one run.
std::map<std::pair<uint64_t, uint32_t>, std::string> RunPipeline(
    const std::vector<std::string>& uris) {
  std::shared_ptr<ObjectStore> store = OpenObjectStore();
  const RandomCrop crop({.height = 6, .width = 6, .padding = 1, .seed = 5});
  auto pipeline = From(MakeTFRecordSource(store, uris, {}, {.cycle_length = 2}))
                      .Map(DecodeImageRecord, {.parallelism = 2})  // by name: one overload
                      .Prefetch({.depth = 8})
                      .Echo({.factor = 3.0})
                      .Map([crop](Example e) { return crop(std::move(e)); }, {.parallelism = 2});
  EXPECT_TRUE(pipeline.status().ok()) << pipeline.status();
  std::map<std::pair<uint64_t, uint32_t>, std::string> out;
  while (true) {
    auto next = pipeline.Next();
    EXPECT_TRUE(next.ok()) << next.status();
    if (!next.ok() || !next->has_value()) break;
    const Example& e = **next;
    EXPECT_EQ(e.components[0].shape(), Shape({6, 6, 1}));
    out[{e.source_index, e.repeat_index}] = std::string(e.components[0].buffer().view());
  }
  return out;
}

TEST(FormatsPipelineTest, EchoedCopiesGetDifferentCropsAndRunsRepeat) {
  testing::TempDir dir;
  const auto uris = WriteShards(dir, 3, 10);
  const auto first = RunPipeline(uris);
  ASSERT_EQ(first.size(), 3u * 10 * 3);  // 30 items, each emitted 3 times
  int items_with_distinct_copies = 0;
  for (uint64_t file = 0; file < 3; ++file) {
    for (uint64_t i = 0; i < 10; ++i) {
      std::set<std::string> copies;
      for (uint32_t k = 0; k < 3; ++k) {
        auto it = first.find({MakeSourceIndex(file, i), k});
        ASSERT_NE(it, first.end());
        copies.insert(it->second);
      }
      items_with_distinct_copies += copies.size() > 1;
    }
  }
  // 9 crop positions: 3 copies coincide for an item with probability 1/81.
  EXPECT_GE(items_with_distinct_copies, 25);
  EXPECT_EQ(RunPipeline(uris), first);  // same seeds, same data: same augmentations
}

}  // namespace
}  // namespace dataecho
