// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "support/examples.h"

#include "dataecho/augment.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "fmt/format.h"
#include "gtest/gtest.h"

namespace dataecho::testing {

Example MakeExample(uint64_t i, int64_t bytes) {
  MutableBuffer mb(static_cast<size_t>(bytes));
  for (int64_t j = 0; j < bytes; ++j)
    mb.data()[j] = static_cast<uint8_t>((i * 31 + static_cast<uint64_t>(j)) % 251);
  Example e;
  e.components.push_back(*Tensor::Make(DType::kUInt8, {bytes}, std::move(mb).Freeze()));
  e.label = static_cast<int64_t>(i % 10);
  e.source_index = i;
  return e;
}

std::vector<Example> MakeExamples(int64_t n, int64_t bytes) {
  std::vector<Example> v;
  v.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v.push_back(MakeExample(static_cast<uint64_t>(i), bytes));
  return v;
}

absl::StatusOr<Example> StampRepeat(Example e, int64_t bytes) {
  MutableBuffer pixels(static_cast<size_t>(bytes));
  for (int64_t j = 0; j < bytes; ++j)
    pixels.data()[j] = static_cast<uint8_t>(e.source_index * 31 + e.repeat_index * 7 + j + 1);
  e.components[0] = *Tensor::Make(DType::kUInt8, {bytes}, std::move(pixels).Freeze());
  return e;
}

absl::StatusOr<Example> CropAndFlip(Example e, int64_t side, int64_t padding) {
  const auto augment =
      Compose(RandomCrop({.height = side, .width = side, .padding = padding, .seed = 11}),
              RandomFlip({.seed = 12}));
  return augment(std::move(e));
}

std::vector<std::string> WriteImageShards(const TempDir& dir, int files, int per_file,
                                          int64_t side) {
  std::vector<std::string> paths;
  for (int f = 0; f < files; ++f) {
    std::string bytes;
    for (int i = 0; i < per_file; ++i) {
      MutableBuffer pixels(static_cast<size_t>(side * side));
      for (int64_t p = 0; p < side * side; ++p) {
        pixels.data()[p] = static_cast<uint8_t>(1 + (p * 7 + i * 13 + f * 31) % 250);
      }
      auto image = Tensor::Make(DType::kUInt8, {side, side, 1}, std::move(pixels).Freeze());
      AppendTFRecord(&bytes, *EncodeImageRecord(*image, (f * per_file + i) % 10));
    }
    paths.push_back(dir.File(fmt::format("images-{}.tfrecord", f)));
    WriteFileOrDie(paths.back(), bytes);
  }
  return paths;
}

ReadResult ReadAllRecords(Stage<Record>& source) {
  ReadResult r;
  std::tie(r.records, r.status) = DrainWithStatus(source);
  source.AppendStats(&r.stats);
  return r;
}

void ExpectCorruptedAt(const absl::Status& status, const std::string& uri, uint64_t offset) {
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_NE(status.message().find("corrupted record at " + uri + ":" + std::to_string(offset)),
            std::string::npos)
      << status;
}

}  // namespace dataecho::testing
