// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The ImageNet-shaped set (testing/imagenet_like.h): deterministic from its
// seed, ImageNet-shaped, cached. A handful of images only.
#include "testing/imagenet_like.h"

#include <filesystem>

#include "dataecho/formats/image_record.h"
#include "dataecho/formats/jpeg.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "gtest/gtest.h"
#include "support/temp_files.h"

namespace dataecho::testing {
namespace {

const ImagenetLikeOptions kSmall{.images = 4, .shards = 2, .seed = 1};

std::vector<Record> ReadAll(const std::vector<std::string>& shards) {
  auto source = MakeTFRecordSource(OpenObjectStore(), shards);
  std::vector<Record> records;
  for (;;) {
    absl::StatusOr<std::optional<Record>> r = source->Next();
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok() || !r->has_value()) break;
    records.push_back(**r);
  }
  return records;
}

TEST(ImagenetLikeTest, SameSeedSameBytesOtherSeedOtherImages) {
  TempDir dir;
  absl::StatusOr<std::vector<std::string>> a = WriteImagenetLike(dir.File("a"), kSmall);
  absl::StatusOr<std::vector<std::string>> b = WriteImagenetLike(dir.File("b"), kSmall);
  ImagenetLikeOptions other = kSmall;
  other.seed = 2;
  absl::StatusOr<std::vector<std::string>> c = WriteImagenetLike(dir.File("c"), other);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status() << b.status() << c.status();
  ASSERT_EQ(a->size(), 2u);
  for (size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ(ReadFileOrDie((*a)[i]), ReadFileOrDie((*b)[i])) << (*a)[i];
    EXPECT_NE(ReadFileOrDie((*a)[i]), ReadFileOrDie((*c)[i])) << (*a)[i];
  }
  // Image i depends on (seed, i) only: a longer set starts with the same images.
  ImagenetLikeOptions longer = kSmall;
  longer.images = 6;
  absl::StatusOr<std::vector<Tensor>> photos = LoadPhotos();
  ASSERT_TRUE(photos.ok()) << photos.status();
  const LabelledImage x = *MakeImagenetLikeImage(*photos, kSmall, 3);
  const LabelledImage y = *MakeImagenetLikeImage(*photos, longer, 3);
  EXPECT_EQ(x.image.buffer().view(), y.image.buffer().view());
  EXPECT_EQ(x.label, y.label);
}

TEST(ImagenetLikeTest, ImagenetShapedJpegRecords) {
  TempDir dir;
  absl::StatusOr<std::vector<std::string>> shards = WriteImagenetLike(dir.path(), kSmall);
  ASSERT_TRUE(shards.ok()) << shards.status();
  const std::vector<Record> records = ReadAll(*shards);
  ASSERT_EQ(records.size(), 4u);
  for (const Record& r : records) {
    absl::StatusOr<Example> enc = EncodedImageRecord(r);
    ASSERT_TRUE(enc.ok()) << enc.status();
    ASSERT_EQ(enc->components[0].rank(), 1) << "a JPEG record";
    const JpegInfo info = *ReadJpegInfo(enc->components[0].buffer().view());
    EXPECT_EQ(info.components, 3);
    EXPECT_GE(info.height, 300);
    EXPECT_LE(info.height, 500);
    EXPECT_GE(info.width, 300);
    EXPECT_LE(info.width, 500);
    EXPECT_GE(enc->label, 0);
    EXPECT_LT(enc->label, 1000);
    // A photograph, not flat colour: plenty of detail survives quality 90.
    EXPECT_GT(enc->components[0].byte_size(), static_cast<size_t>(info.height * info.width) / 20);
    absl::StatusOr<Example> dec = DecodeImageRecord(r);
    ASSERT_TRUE(dec.ok()) << dec.status();
    EXPECT_EQ(dec->components[0].dim(2), 3);
  }
}

TEST(ImagenetLikeTest, PrepareWritesOnceThenReuses) {
  TempDir dir;
  absl::StatusOr<std::vector<std::string>> first = PrepareImagenetLike(dir.path(), kSmall);
  ASSERT_TRUE(first.ok()) << first.status();
  const std::filesystem::path done = std::filesystem::path((*first)[0]).parent_path() / "DONE";
  EXPECT_TRUE(std::filesystem::exists(done));
  // A cached set is not rewritten: a marker planted in a shard survives.
  WriteFileOrDie((*first)[0], "planted");
  absl::StatusOr<std::vector<std::string>> again = PrepareImagenetLike(dir.path(), kSmall);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *first);
  EXPECT_EQ(ReadFileOrDie((*again)[0]), "planted");
  // Missing photographs: NOT_FOUND naming the package.
  ImagenetLikeOptions missing = kSmall;
  missing.photo_dir = dir.File("nowhere");
  absl::StatusOr<std::vector<std::string>> none = WriteImagenetLike(dir.File("x"), missing);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("python3-skimage"), std::string::npos) << none.status();
}

}  // namespace
}  // namespace dataecho::testing
