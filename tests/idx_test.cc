// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/idx.h"

#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "dataecho/checkpoint.h"
#include "dataecho/formats/fixed_length.h"
#include "dataecho/storage/object_store.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

using ::dataecho::testing::TempDir;
using ::dataecho::testing::WriteFileOrDie;

std::shared_ptr<ObjectStore> Store() { return OpenObjectStore(); }

std::string BE32(uint32_t v) {
  return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
}

std::string IdxHeaderBytes(uint8_t type, std::vector<uint32_t> dims) {
  std::string h{0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) h += BE32(d);
  return h;
}

// n images of h x w where pixel i of image r is (r + i) % 256; labels r % 10.
void WriteMnistLike(const std::string& images, const std::string& labels, uint32_t n, uint32_t h,
                    uint32_t w, bool gz = false) {
  std::string img = IdxHeaderBytes(0x08, {n, h, w});
  std::string lab = IdxHeaderBytes(0x08, {n});
  for (uint32_t r = 0; r < n; ++r) {
    for (uint32_t i = 0; i < h * w; ++i) img += static_cast<char>((r + i) % 256);
    lab += static_cast<char>(r % 10);
  }
  WriteFileOrDie(images, gz ? testing::Gzip(img) : img);
  WriteFileOrDie(labels, gz ? testing::Gzip(lab) : lab);
}

struct Drained {
  std::vector<Example> examples;
  absl::Status status;
};

Drained DrainExamples(Stage<Example>& s) {
  auto [examples, status] = testing::DrainWithStatus(s);
  return {std::move(examples), std::move(status)};
}

TEST(IdxTest, ZipsImagesAndLabels) {
  TempDir dir;
  for (bool gz : {false, true}) {
    const std::string images = dir.File(gz ? "i.gz" : "i"), labels = dir.File(gz ? "l.gz" : "l");
    WriteMnistLike(images, labels, 25, 4, 3, gz);
    auto source = MakeIdxSource(Store(), images, labels);
    Drained d = DrainExamples(*source);
    ASSERT_TRUE(d.status.ok()) << d.status;
    ASSERT_EQ(d.examples.size(), 25u);
    for (uint32_t r = 0; r < 25; ++r) {
      const Example& e = d.examples[r];
      EXPECT_EQ(e.source_index, r);
      EXPECT_EQ(e.label, r % 10);
      ASSERT_EQ(e.components[0].shape(), Shape({4, 3, 1}));
      EXPECT_EQ(e.components[0].buffer().data()[5], (r + 5) % 256);
    }
  }
}

// A state saved before the source read a row (a Prefetch's first snapshot,
// which a restore may start from many rows later) holds the files'
// fingerprints: a label file changed since is DATA_LOSS naming it.
TEST(IdxTest, StateSavedBeforeTheFirstRowNamesAChangedFile) {
  TempDir dir;
  const std::string images = dir.File("i"), labels = dir.File("l");
  WriteMnistLike(images, labels, 10, 2, 2);
  StateWriter w;
  ASSERT_TRUE(MakeIdxSource(Store(), images, labels)->SaveState(w).ok());
  const std::string state = w.Finish();
  std::string shifted = IdxHeaderBytes(0x08, {10});
  for (uint32_t r = 0; r < 10; ++r) shifted += static_cast<char>((r + 1) % 10);
  WriteFileOrDie(labels, shifted);  // the same size, every label changed
  absl::StatusOr<StateReader> r = StateReader::Parse(state);
  ASSERT_TRUE(r.ok()) << r.status();
  const absl::Status s = MakeIdxSource(Store(), images, labels)->RestoreState(*r);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(labels), std::string::npos) << s;
}

TEST(IdxTest, HeaderLiesAreDataLoss) {
  TempDir dir;
  const std::string good_labels = dir.File("labels");
  WriteFileOrDie(good_labels, IdxHeaderBytes(0x08, {2}) + "\x01\x02");
  struct Case {
    const char* name;
    std::string bytes;
    absl::StatusCode code;
  };
  const std::string pixels(2 * 2 * 2, 'p');
  const std::vector<Case> cases = {
      {"product bigger than file", IdxHeaderBytes(0x08, {2, 2, 3}) + pixels,
       absl::StatusCode::kDataLoss},
      {"product smaller than file", IdxHeaderBytes(0x08, {2, 2, 1}) + pixels,
       absl::StatusCode::kDataLoss},
      {"overflowing dims",
       IdxHeaderBytes(0x08, {2, 0xffffffffu, 0xffffffffu, 0xffffffffu}) + pixels,
       absl::StatusCode::kDataLoss},
      {"overflow in rows x row", IdxHeaderBytes(0x0E, {0xffffffffu, 0xffffffffu, 0xffffffffu}),
       absl::StatusCode::kDataLoss},
      {"bad magic", "\x01\x00\x08\x03" + BE32(2) + BE32(2) + BE32(2) + pixels,
       absl::StatusCode::kDataLoss},
      {"unknown type", IdxHeaderBytes(0x07, {2, 2, 2}) + pixels, absl::StatusCode::kDataLoss},
      {"no dims", IdxHeaderBytes(0x08, {}), absl::StatusCode::kDataLoss},
      {"a billion empty rows", IdxHeaderBytes(0x08, {0x40000000u, 0, 28}),
       absl::StatusCode::kDataLoss},
      {"truncated header", IdxHeaderBytes(0x08, {2, 2, 2}).substr(0, 10),
       absl::StatusCode::kDataLoss},
      {"empty file", "", absl::StatusCode::kDataLoss},
      {"float type", IdxHeaderBytes(0x0D, {2, 1, 1}) + pixels, absl::StatusCode::kUnimplemented},
  };
  for (const Case& c : cases) {
    for (bool gz : {false, true}) {
      const std::string path = dir.File(gz ? "images.gz" : "images");
      WriteFileOrDie(path, gz ? testing::Gzip(c.bytes) : c.bytes);
      auto source = MakeIdxSource(Store(), path, good_labels);
      Drained d = DrainExamples(*source);
      EXPECT_TRUE(d.examples.empty()) << c.name;
      EXPECT_EQ(d.status.code(), c.code) << c.name << (gz ? " (gz)" : "") << ": " << d.status;
      if (c.code == absl::StatusCode::kDataLoss) {
        EXPECT_NE(d.status.message().find(path), std::string::npos) << d.status;
      }
    }
  }
}

TEST(IdxTest, GzipStreamShorterThanItsTrailerSaysIsDataLoss) {
  TempDir dir;
  // A valid header and ISIZE, but the deflate stream is cut: the rows run out.
  std::string img = IdxHeaderBytes(0x08, {2, 2, 2}) + std::string(8, 'p');
  std::string gz = testing::Gzip(img);
  WriteFileOrDie(dir.File("labels"), IdxHeaderBytes(0x08, {2}) + "\x01\x02");
  WriteFileOrDie(dir.File("i.gz"), gz.substr(0, gz.size() - 9) + gz.substr(gz.size() - 4));
  Drained d = DrainExamples(*MakeIdxSource(Store(), dir.File("i.gz"), dir.File("labels")));
  EXPECT_EQ(d.status.code(), absl::StatusCode::kDataLoss) << d.status;
}

TEST(IdxTest, MismatchedRowCountsAreInvalidArgument) {
  TempDir dir;
  WriteMnistLike(dir.File("i"), dir.File("l"), 3, 2, 2);
  WriteFileOrDie(dir.File("l4"), IdxHeaderBytes(0x08, {4}) + "\x01\x02\x03\x04");
  EXPECT_EQ(DrainExamples(*MakeIdxSource(Store(), dir.File("i"), dir.File("l4"))).status.code(),
            absl::StatusCode::kInvalidArgument);
  // Labels must be 1-D.
  EXPECT_EQ(DrainExamples(*MakeIdxSource(Store(), dir.File("i"), dir.File("i"))).status.code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(IdxTest, RowsAsRecords) {
  TempDir dir;
  WriteMnistLike(dir.File("i"), dir.File("l"), 5, 2, 2);
  auto source = MakeIdxRecordSource(Store(), {dir.File("i"), dir.File("l")});
  std::vector<Record> records;
  while (true) {
    auto n = source->Next();
    ASSERT_TRUE(n.ok()) << n.status();
    if (!n->has_value()) break;
    records.push_back(**n);
  }
  ASSERT_EQ(records.size(), 10u);
  EXPECT_EQ(records[1].offset, 16u + 4);
  EXPECT_EQ(records[1].data.size(), 4u);
  EXPECT_EQ(records[6].data.view(), std::string(1, '\x01'));
  EXPECT_EQ(records[6].source_index, MakeSourceIndex(1, 1));
}

TEST(IdxTest, FashionMnistTestSet) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  if (!std::filesystem::exists(dir + "t10k-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed (scripts/setup.sh installs it)";
  }
  auto source =
      MakeIdxSource(Store(), dir + "t10k-images-idx3-ubyte.gz", dir + "t10k-labels-idx1-ubyte.gz");
  Drained d = DrainExamples(*source);
  ASSERT_TRUE(d.status.ok()) << d.status;
  ASSERT_EQ(d.examples.size(), 10000u);
  EXPECT_EQ(d.examples[0].label, 9);
  EXPECT_EQ(d.examples[1].label, 2);
  EXPECT_EQ(d.examples[0].components[0].shape(), Shape({28, 28, 1}));
  auto px = d.examples[0].components[0].data<uint8_t>();
  EXPECT_EQ(std::accumulate(px.begin(), px.end(), 0), 33456);
  int64_t label_sum = 0;
  for (const Example& e : d.examples) label_sum += e.label;
  EXPECT_EQ(label_sum, 45000);  // 1,000 of each class 0..9
}

TEST(FixedLengthTest, ReadsRecordsBetweenHeaderAndFooter) {
  TempDir dir;
  std::string bytes = "HDR";
  for (int r = 0; r < 6; ++r) bytes += std::string(5, static_cast<char>('a' + r));
  bytes += "FT";
  for (bool gz : {false, true}) {
    const std::string path = dir.File(gz ? "f.gz" : "f");
    WriteFileOrDie(path, gz ? testing::Gzip(bytes) : bytes);
    FixedLengthOptions o{.record_bytes = 5,
                         .header_bytes = 3,
                         .footer_bytes = 2,
                         .compression = gz ? Compression::kGzip : Compression::kNone};
    auto s = MakeFixedLengthSource(Store(), {path}, o);
    auto [recs, st] = testing::DrainWithStatus(*s);
    ASSERT_TRUE(st.ok()) << st;
    ASSERT_EQ(recs.size(), 6u);
    EXPECT_EQ(recs[2].data.view(), "ccccc");
    EXPECT_EQ(recs[2].offset, 13u);
    // One byte short: 5 records, then truncated at the sixth.
    std::string cut = bytes.substr(0, 3 + 5 * 6 - 1) + "FT";
    WriteFileOrDie(path, gz ? testing::Gzip(cut) : cut);
    auto t = MakeFixedLengthSource(Store(), {path}, o);
    auto [cut_recs, err] = testing::DrainWithStatus(*t);
    EXPECT_EQ(err.code(), absl::StatusCode::kDataLoss) << gz;
    if (!gz) {  // a stream cannot tell the footer from record bytes before its end
      EXPECT_EQ(cut_recs.size(), 5u);
      EXPECT_NE(err.message().find("truncated record at " + path + ":28"), std::string::npos)
          << err;
    }
  }
}

TEST(FixedLengthTest, CifarStyleDecodeToHwc) {
  std::string rec(1 + 2 * 2 * 3, '\0');
  rec[0] = 7;
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 4; ++i) rec[1 + c * 4 + i] = static_cast<char>(10 * c + i);
  Record r;
  r.data = Buffer::CopyOf(rec);
  r.source_index = 12;
  FixedImageDecoder decode({.height = 2, .width = 2, .channels = 3});
  auto e = decode(r);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->label, 7);
  EXPECT_EQ(e->source_index, 12u);
  EXPECT_EQ(e->components[0].shape(), Shape({2, 2, 3}));
  auto px = e->components[0].data<uint8_t>();
  EXPECT_EQ(px[3 * 1 + 2], 21);  // pixel 1, channel 2
  r.data = Buffer::CopyOf(rec.substr(1));
  EXPECT_EQ(decode(r).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace dataecho
