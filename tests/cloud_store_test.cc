// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// s3:// against s3rver (the npm S3 emulator) and gs:// against the test
// HTTP server speaking the part of the Cloud Storage JSON API we use.
#include <cstdlib>
#include <string>

#include "dataecho/storage/glob.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/gcs_api.h"
#include "support/s3rver.h"
#include "support/store_objects.h"
#include "testing/http_server.h"

namespace dataecho {
namespace {

using testing::Bytes;
using testing::HttpServer;
using testing::S3rver;
using testing::ServeCloudStorageApi;

std::string ReadAll(ObjectStore& store, const std::string& uri, absl::Status* status) {
  std::string out;
  *status = testing::ReadObject(store, uri, 256 << 10, 100000, &out);
  return out;
}

class S3Test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s3 = S3rver::Start();
    ASSERT_TRUE(s3.ok()) << s3.status();
    s3_ = *std::move(s3);
    ASSERT_TRUE(s3_->CreateBucket("data").ok());
    big_ = Bytes((1 << 20) + 333, 5);
    ASSERT_TRUE(s3_->PutObject("data", "big.bin", big_).ok());
  }
  ObjectStoreOptions Options() const {
    ObjectStoreOptions o;
    o.s3.endpoint = s3_->endpoint();
    o.s3.access_key_id = S3rver::kAccessKey;
    o.s3.secret_access_key = S3rver::kSecretKey;
    o.http.chunk_size = 64 << 10;
    o.retry.initial_backoff = absl::Milliseconds(1);
    return o;
  }
  std::unique_ptr<S3rver> s3_;
  std::string big_;
};

TEST_F(S3Test, SignedStatRangedAndSequentialReads) {
  auto store = OpenObjectStore(Options());
  auto info = store->Stat("s3://data/big.bin");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->size, big_.size());
  EXPECT_FALSE(info->version.empty());
  auto range = store->ReadRange("s3://data/big.bin", 100000, 200000);
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_TRUE(range->view() == big_.substr(100000, 200000));
  absl::Status s;
  EXPECT_TRUE(ReadAll(*store, "s3://data/big.bin", &s) == big_);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(store->Stat("s3://data/missing").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->Stat("s3://data").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(S3Test, ListPaginatesWithContinuationTokens) {
  for (int i = 0; i < 23; ++i) {
    std::string key = fmt::format("train/part-{:02}", i);
    ASSERT_TRUE(s3_->PutObject("data", key, Bytes(100 + i, i)).ok());
  }
  // (s3rver pages in file-system walk order: a key like "train-other", which
  // sorts before "train/..." but is walked after it, would be skipped by its
  // continuation token; real S3 pages in key order.)
  ASSERT_TRUE(s3_->PutObject("data", "validation-0", "x").ok());
  ObjectStoreOptions o = Options();
  o.s3.list_page_size = 5;  // 5 pages for 23 keys
  auto store = OpenObjectStore(o);
  auto listed = store->List("s3://data/train/");
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 23u);
  for (int i = 0; i < 23; ++i) {
    EXPECT_EQ((*listed)[i].uri, fmt::format("s3://data/train/part-{:02}", i));
    EXPECT_EQ((*listed)[i].size, static_cast<uint64_t>(100 + i));
  }
  auto glob = ExpandUris(*store, "s3://data/train/part-1?");
  ASSERT_TRUE(glob.ok()) << glob.status();
  EXPECT_EQ(glob->size(), 10u);
  auto all = store->List("s3://data/");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 23u + 2u);
  absl::Status s;
  EXPECT_EQ(ReadAll(*store, "s3://data/train/part-07", &s), Bytes(107, 7));
}

// s3rver checks that requests carry a well-formed SigV4 Authorization
// header with a known key id (it does not recompute signatures).
TEST_F(S3Test, UnknownKeyIsPermissionDeniedAfterOneRequestAndNeverShown) {
  ObjectStoreOptions o = Options();
  o.s3.access_key_id = "AKIAUNKNOWNKEY42";
  o.s3.secret_access_key = "not-the-secret-7f3a";
  auto store = OpenObjectStore(o);
  absl::Status s = store->Stat("s3://data/big.bin").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  absl::Status list = store->List("s3://data/").status();
  EXPECT_EQ(list.code(), absl::StatusCode::kPermissionDenied) << list;
  EXPECT_NE(list.message().find("InvalidAccessKeyId"), std::string::npos) << list;
  absl::Status read = store->ReadRange("s3://data/big.bin", 0, 10).status();
  EXPECT_EQ(read.code(), absl::StatusCode::kPermissionDenied) << read;
  for (const absl::Status& e : {s, list, read}) {
    EXPECT_EQ(e.message().find("not-the-secret-7f3a"), std::string::npos) << e;
    EXPECT_EQ(e.message().find("AKIAUNKNOWNKEY42"), std::string::npos) << e;
  }
}

TEST_F(S3Test, EndpointRegionAndKeysFromTheEnvironment) {
  setenv("AWS_ENDPOINT_URL", s3_->endpoint().c_str(), 1);
  setenv("AWS_ACCESS_KEY_ID", S3rver::kAccessKey, 1);
  setenv("AWS_SECRET_ACCESS_KEY", S3rver::kSecretKey, 1);
  setenv("AWS_REGION", "us-east-1", 1);
  auto store = OpenObjectStore();
  auto info = store->Stat("s3://data/big.bin");
  unsetenv("AWS_ENDPOINT_URL");
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  unsetenv("AWS_REGION");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->size, big_.size());
}

// gs:// against the Cloud Storage JSON API served by HttpServer
// (support/gcs_api.h).
class GcsTest : public ::testing::Test {
 protected:
  static constexpr int kPageSize = 3;
  static constexpr const char* kToken = "ya29.test-token-1234";

  void SetUp() override {
    server_ = testing::StartServer();
    ASSERT_NE(server_, nullptr);
    ServeCloudStorageApi(server_.get(), kToken, kPageSize);
    data_ = Bytes(300000, 3);
    server_->Put("/bkt/dir/obj", data_);
    for (int i = 0; i < 10; ++i)
      server_->Put(fmt::format("/bkt/shards/s-{:02}", i), Bytes(i + 1, i));
    options_.gcs.endpoint = server_->url();
    options_.gcs.access_token = kToken;
    options_.http.chunk_size = 64 << 10;
  }
  std::unique_ptr<HttpServer> server_;
  std::string data_;
  ObjectStoreOptions options_;
};

TEST_F(GcsTest, StatReadAndList) {
  auto store = OpenObjectStore(options_);
  auto info = store->Stat("gs://bkt/dir/obj");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->size, data_.size());
  EXPECT_EQ(info->version, std::to_string(server_->Get("/bkt/dir/obj")->generation));
  absl::Status s;
  EXPECT_TRUE(ReadAll(*store, "gs://bkt/dir/obj", &s) == data_);
  EXPECT_TRUE(s.ok()) << s;
  auto range = store->ReadRange("gs://bkt/dir/obj", 5, 10);
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ(range->view(), data_.substr(5, 10));
  auto listed = store->List("gs://bkt/shards/");
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 10u);  // four pages of three
  EXPECT_EQ((*listed)[9].uri, "gs://bkt/shards/s-09");
  EXPECT_EQ((*listed)[9].size, 10u);
  EXPECT_EQ(store->Stat("gs://bkt/nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(GcsTest, GenerationChangeMidReadIsFailedPrecondition) {
  auto store = OpenObjectStore(options_);
  auto r = store->Open("gs://bkt/dir/obj", {.read_ahead = 64 << 10});
  ASSERT_TRUE(r.ok()) << r.status();
  std::string buf(64 << 10, '\0');
  ASSERT_TRUE((*r)->Read(absl::MakeSpan(reinterpret_cast<uint8_t*>(buf.data()), buf.size())).ok());
  server_->Put("/bkt/dir/obj", Bytes(300000, 4));
  absl::Status s = testing::ReadToEnd(**r, buf.size());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
}

TEST_F(GcsTest, EmulatorHostAndTokenFromTheEnvironment) {
  setenv("STORAGE_EMULATOR_HOST", ("127.0.0.1:" + std::to_string(server_->port())).c_str(), 1);
  setenv("GOOGLE_OAUTH_ACCESS_TOKEN", kToken, 1);
  auto store = OpenObjectStore();
  auto info = store->Stat("gs://bkt/dir/obj");
  setenv("GOOGLE_OAUTH_ACCESS_TOKEN", "ya29.wrong-token-5678", 1);
  auto denied = OpenObjectStore()->Stat("gs://bkt/dir/obj");
  unsetenv("STORAGE_EMULATOR_HOST");
  unsetenv("GOOGLE_OAUTH_ACCESS_TOKEN");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->size, data_.size());
  EXPECT_EQ(denied.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(denied.status().message().find("wrong-token"), std::string::npos) << denied.status();
}

}  // namespace
}  // namespace dataecho
