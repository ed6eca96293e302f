// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/storage/fault_store.h"
#include "dataecho/storage/object_store.h"
#include "dataecho/storage/throttled_store.h"
#include "gtest/gtest.h"
#include "support/examples.h"
#include "support/store_objects.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

namespace fs = std::filesystem;

class WrappersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_.resize(1 << 20);
    for (size_t i = 0; i < bytes_.size(); ++i) bytes_[i] = static_cast<char>((i * 131) >> 3);
    path_ = (dir_ / "obj").string();
    std::ofstream(path_, std::ios::binary) << bytes_;
  }
  testing::TempDir tmp_;  // a fresh directory per test, removed after it
  fs::path dir_ = tmp_.path();
  std::string bytes_;
  std::string path_;
};

TEST_F(WrappersTest, ThrottledStoreAddsLatencyPerRequest) {
  auto store = NewThrottledStore(OpenObjectStore(), {.latency = absl::Milliseconds(40)});
  absl::Time start = absl::Now();
  ASSERT_TRUE(store->Stat(path_).ok());
  ASSERT_TRUE(store->ReadRange(path_, 0, 10).ok());
  ASSERT_TRUE(store->List(path_).ok());
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(120));
}

TEST_F(WrappersTest, ThrottledReaderPacesBytesAndPaysLatencyPerRequest) {
  ThrottledStoreOptions opts;
  opts.latency = absl::Milliseconds(20);
  opts.bytes_per_second = 4 << 20;
  opts.request_bytes = 256 << 10;
  auto store = NewThrottledStore(OpenObjectStore(), opts);
  absl::Time start = absl::Now();
  auto r = store->Open(path_, {});
  ASSERT_TRUE(r.ok()) << r.status();
  std::string got;
  const absl::Status read = testing::ReadToEnd(**r, 100000, &got);
  ASSERT_TRUE(read.ok()) << read;
  EXPECT_EQ(got, bytes_);
  // 1 MiB at 4 MiB/s, plus 4 latencies (open + 3 request boundaries).
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(250 + 80));
}

// The ObjectReader contract: a Read fills its buffer, short only at the end,
// however many request boundaries it crosses.
TEST_F(WrappersTest, ThrottledReaderFillsAReadAcrossRequestBoundaries) {
  auto store = NewThrottledStore(OpenObjectStore(), {.request_bytes = 1000});
  auto r = store->Open(path_, {});
  ASSERT_TRUE(r.ok()) << r.status();
  std::string buf(300000, '\0');
  std::string got;
  for (size_t want : {size_t{300000}, size_t{300000}, size_t{300000}, bytes_.size() - 900000}) {
    auto n = (*r)->Read(absl::MakeSpan(reinterpret_cast<uint8_t*>(buf.data()), buf.size()));
    ASSERT_TRUE(n.ok()) << n.status();
    ASSERT_EQ(*n, want);
    got.append(buf.data(), *n);
  }
  auto end = (*r)->Read(absl::MakeSpan(reinterpret_cast<uint8_t*>(buf.data()), buf.size()));
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, 0u);
  EXPECT_EQ(got, bytes_);
}

// TFRecords read through small requests: every record, none called truncated.
TEST_F(WrappersTest, TFRecordsReadThroughSmallThrottledRequests) {
  std::string file;
  std::vector<std::string> payloads;
  for (int i = 0; i < 300; ++i) payloads.push_back(std::string(700 + i, static_cast<char>(i)));
  for (const std::string& p : payloads) AppendTFRecord(&file, p);
  const std::string path = (dir_ / "records.tfrecord").string();
  std::ofstream(path, std::ios::binary) << file;
  for (uint64_t request_bytes : {uint64_t{1}, uint64_t{1000}, uint64_t{65536}}) {
    std::shared_ptr<ObjectStore> store =
        NewThrottledStore(OpenObjectStore(), {.request_bytes = request_bytes});
    auto source = MakeTFRecordSource(store, {path}, {.buffer_size = 4096});
    testing::ReadResult got = testing::ReadAllRecords(*source);
    ASSERT_TRUE(got.status.ok()) << "request_bytes " << request_bytes << ": " << got.status;
    ASSERT_EQ(got.records.size(), payloads.size()) << request_bytes;
    for (size_t i = 0; i < payloads.size(); ++i) EXPECT_EQ(got.records[i].data.view(), payloads[i]);
  }
}

TEST_F(WrappersTest, ThrottledReaderCancelEndsAWaitPromptly) {
  ThrottledStoreOptions opts;
  opts.bytes_per_second = 1000;  // 1 MiB would take ~17 minutes
  auto store = NewThrottledStore(OpenObjectStore(), opts);
  auto r = store->Open(path_, {});
  ASSERT_TRUE(r.ok());
  std::thread canceller([&] {
    absl::SleepFor(absl::Milliseconds(50));
    (*r)->Cancel();
  });
  std::string buf(bytes_.size(), '\0');
  auto n = (*r)->Read(absl::MakeSpan(reinterpret_cast<uint8_t*>(buf.data()), buf.size()));
  canceller.join();
  EXPECT_EQ(n.status().code(), absl::StatusCode::kCancelled);
}

TEST_F(WrappersTest, FaultStoreFailsReadsAtTheScriptedOffsetThenRecovers) {
  auto store = std::make_shared<FaultInjectingStore>(OpenObjectStore());
  store->AddFault({.op = Fault::Op::kRead,
                   .uri_substring = "obj",
                   .error = absl::UnavailableError("link down"),
                   .at_offset = 300000,
                   .times = 2});
  auto r = store->Open(path_, {});
  ASSERT_TRUE(r.ok());
  std::string got;
  std::string buf(65536, '\0');
  int errors = 0;
  while (true) {
    auto n = (*r)->Read(absl::MakeSpan(reinterpret_cast<uint8_t*>(buf.data()), buf.size()));
    if (!n.ok()) {
      EXPECT_EQ(n.status().code(), absl::StatusCode::kUnavailable);
      EXPECT_NE(n.status().message().find("link down"), std::string::npos);
      EXPECT_EQ((*r)->offset(), 262144u);  // the Read covering 300000 consumed nothing
      ++errors;
      continue;
    }
    if (*n == 0) break;
    got.append(buf.data(), *n);
  }
  EXPECT_EQ(errors, 2);
  EXPECT_EQ(got, bytes_);
  EXPECT_EQ(store->fired(), 2);
  EXPECT_EQ(store->calls(Fault::Op::kOpen), 1);
}

TEST_F(WrappersTest, FaultStoreFailsOtherCallsAndSkips) {
  auto store = std::make_shared<FaultInjectingStore>(OpenObjectStore());
  store->AddFault({.op = Fault::Op::kStat, .error = absl::NotFoundError("gone"), .skip = 1});
  EXPECT_TRUE(store->Stat(path_).ok());
  absl::Status s = store->Stat(path_).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find(path_), std::string::npos);
  EXPECT_TRUE(store->Stat(path_).ok());  // spent
  store->AddFault({.op = Fault::Op::kList, .error = absl::PermissionDeniedError("no")});
  EXPECT_EQ(store->List(path_).status().code(), absl::StatusCode::kPermissionDenied);
  store->AddFault({.op = Fault::Op::kReadRange, .uri_substring = "other"});
  EXPECT_TRUE(store->ReadRange(path_, 0, 10).ok());
  EXPECT_EQ(store->calls(Fault::Op::kStat), 3);
  EXPECT_EQ(store->calls(Fault::Op::kAny), 5);
}

TEST_F(WrappersTest, FaultStoreCorruptsChosenBytes) {
  auto store = std::make_shared<FaultInjectingStore>(OpenObjectStore());
  store->CorruptByte(path_, 1000, 0x01);
  auto range = store->ReadRange(path_, 990, 20);
  ASSERT_TRUE(range.ok());
  std::string expected = bytes_.substr(990, 20);
  expected[10] ^= 0x01;
  EXPECT_EQ(range->view(), expected);
  auto r = store->Open(path_, {});
  ASSERT_TRUE(r.ok());
  std::string all(bytes_.size(), '\0');
  auto n = (*r)->Read(absl::MakeSpan(reinterpret_cast<uint8_t*>(all.data()), all.size()));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(all[1000], static_cast<char>(bytes_[1000] ^ 0x01));
  all[1000] = bytes_[1000];
  EXPECT_EQ(all, bytes_);
}

}  // namespace
}  // namespace dataecho
