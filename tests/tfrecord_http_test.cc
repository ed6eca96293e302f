// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The TFRecord corruption cases of tfrecord_test.cc, read over HTTP from the
// loopback test server: the same status codes, with the URL and offset.
#include <string>
#include <vector>

#include "dataecho/crc32c.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/storage/object_store.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "testing/http_server.h"

namespace dataecho {
namespace {

using ::dataecho::testing::ExpectCorruptedAt;
using ::dataecho::testing::ReadResult;

ReadResult ReadUrls(std::vector<std::string> urls, TFRecordReaderOptions options = {}) {
  auto source = MakeTFRecordSource(OpenObjectStore(), std::move(urls), options);
  return testing::ReadAllRecords(*source);
}

std::string Payload(int i) {
  return std::string(static_cast<size_t>(10 + i), static_cast<char>('a' + i % 26));
}

std::string Framed(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) AppendTFRecord(&out, Payload(i));
  return out;
}

class TFRecordHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = testing::HttpServer::Start({});
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = *std::move(s);
  }
  std::string Serve(const std::string& name, std::string bytes) {
    server_->Put("/" + name, std::move(bytes));
    return server_->url() + "/" + name;
  }
  std::unique_ptr<testing::HttpServer> server_;
};

TEST_F(TFRecordHttpTest, CleanFileReadsEveryRecordOnce) {
  ReadResult r = ReadUrls({Serve("ok", Framed(50))});
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.records.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(r.records[static_cast<size_t>(i)].data.view(), Payload(i));
}

TEST_F(TFRecordHttpTest, TruncatedRecordNamesUrlAndOffset) {
  const std::string full = Framed(3);
  const size_t second = Payload(0).size() + 16;
  for (size_t cut : {second + 3, second + 12 + 2, second + 16 + Payload(1).size() - 1}) {
    const std::string url = Serve("t" + std::to_string(cut), full.substr(0, cut));
    ReadResult r = ReadUrls({url});
    EXPECT_EQ(r.records.size(), 1u) << cut;
    ASSERT_EQ(r.status.code(), absl::StatusCode::kDataLoss) << cut << " " << r.status;
    EXPECT_NE(r.status.message().find("truncated record at " + url + ":" + std::to_string(second)),
              std::string::npos)
        << r.status;
  }
}

TEST_F(TFRecordHttpTest, BadDataCrcFailsOrIsSkipped) {
  std::string bytes = Framed(5);
  const size_t r2 = Payload(0).size() + 16 + Payload(1).size() + 16;
  bytes[r2 + 12] ^= 1;
  const std::string url = Serve("c", bytes);
  ReadResult strict = ReadUrls({url});
  EXPECT_EQ(strict.records.size(), 2u);
  ExpectCorruptedAt(strict.status, url, r2);
  ReadResult skip = ReadUrls({url}, {.skip_corrupt = true});
  ASSERT_TRUE(skip.status.ok()) << skip.status;
  ASSERT_EQ(skip.records.size(), 4u);
  EXPECT_EQ(skip.records[2].data.view(), Payload(3));
  EXPECT_EQ(skip.stats[0].Extra("skipped_corrupt"), 1);
}

TEST_F(TFRecordHttpTest, BadLengthCrcFailsOrSkipsTheRestOfTheFile) {
  std::string bytes = Framed(5);
  const size_t r1 = Payload(0).size() + 16;
  bytes[r1 + 9] ^= 0x10;
  const std::string url = Serve("l", bytes);
  const std::string ok = Serve("ok2", Framed(3));
  ReadResult strict = ReadUrls({url});
  EXPECT_EQ(strict.records.size(), 1u);
  ExpectCorruptedAt(strict.status, url, r1);
  ReadResult skip = ReadUrls({url, ok}, {.skip_corrupt = true});
  ASSERT_TRUE(skip.status.ok()) << skip.status;
  EXPECT_EQ(skip.records.size(), 4u);  // record 0 of the bad file, then all of the good one
  EXPECT_EQ(skip.stats[0].Extra("skipped_corrupt"), 1);
}

TEST_F(TFRecordHttpTest, AbsurdLengthIsRejected) {
  std::string header(12, '\0');
  const uint64_t length = uint64_t{1} << 50;
  for (int i = 0; i < 8; ++i)
    header[static_cast<size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xff);
  const uint32_t crc = MaskCrc32c(Crc32c(header.data(), 8));
  for (int i = 0; i < 4; ++i)
    header[static_cast<size_t>(8 + i)] = static_cast<char>((crc >> (8 * i)) & 0xff);
  const std::string url = Serve("absurd", header + "xyz");
  ReadResult r = ReadUrls({url});
  EXPECT_TRUE(r.records.empty());
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss) << r.status;
  EXPECT_NE(r.status.message().find(url + ":0"), std::string::npos) << r.status;
}

}  // namespace
}  // namespace dataecho
