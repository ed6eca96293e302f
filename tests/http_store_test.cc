// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The http:// store against the in-process server on 127.0.0.1: every
// scripted fault at several offsets, asserting status codes, request counts
// and byte-identical content.
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/store_objects.h"
#include "testing/http_server.h"

namespace dataecho {
namespace {

using testing::Bytes;
using testing::HttpFault;
using testing::HttpServer;

constexpr size_t kChunk = 64 << 10;

ObjectStoreOptions FastRetries() {
  ObjectStoreOptions o;
  o.retry.initial_backoff = absl::Milliseconds(1);
  o.retry.max_backoff = absl::Milliseconds(20);
  o.retry.max_attempts = 5;
  o.http.chunk_size = kChunk;
  o.http.stall_timeout = absl::Seconds(1);
  return o;
}

class HttpStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::StartServer();
    ASSERT_NE(server_, nullptr);
    data_ = Bytes(5 * kChunk + 40000, 7);
    server_->Put("/bucket/obj", data_);
    url_ = server_->url() + "/bucket/obj";
  }

  // Reads the whole object with `step`-byte reads; the status of the end.
  absl::Status ReadAll(ObjectStore& store, const std::string& url, std::string* out,
                       size_t read_ahead = 4 * kChunk, size_t step = 10000) {
    out->clear();
    return testing::ReadObject(store, url, read_ahead, step, out);
  }

  std::unique_ptr<HttpServer> server_;
  std::string data_;
  std::string url_;
  std::unique_ptr<ObjectStore> store_ = OpenObjectStore(FastRetries());
};

TEST_F(HttpStoreTest, StatReadRangeAndSequentialRead) {
  auto info = store_->Stat(url_);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->size, data_.size());
  EXPECT_EQ(info->version, server_->Get("/bucket/obj")->etag);
  auto range = store_->ReadRange(url_, 1000, 5000);
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ(range->view(), data_.substr(1000, 5000));
  std::string got;
  for (size_t read_ahead : {size_t{1}, kChunk, 3 * kChunk + 7, 64 * kChunk}) {
    ASSERT_TRUE(ReadAll(*store_, url_, &got, read_ahead).ok());
    EXPECT_TRUE(got == data_) << "read_ahead " << read_ahead;
  }
  ReadOptions ro{.offset = 70000, .length = 100000};
  auto r = store_->Open(url_, ro);
  ASSERT_TRUE(r.ok());
  std::string part(200000, '\0');
  auto n = (*r)->Read(absl::MakeSpan(reinterpret_cast<uint8_t*>(part.data()), part.size()));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(part.substr(0, *n), data_.substr(70000, 100000));
  EXPECT_EQ((*r)->offset(), 170000u);
  // The reader's ranged GETs (all but the first GET, from ReadRange) are
  // pinned to the ETag.
  int gets = 0;
  for (const auto& req : server_->requests()) {
    if (req.method != "GET" || gets++ == 0) continue;
    EXPECT_EQ(req.headers.count("if-match") ? req.headers.at("if-match") : "", info->version);
  }
  EXPECT_GT(gets, 6);
}

TEST_F(HttpStoreTest, RangesAtAndPastTheEndAreClean) {
  auto at_end = store_->ReadRange(url_, data_.size(), 10);  // a 416
  ASSERT_TRUE(at_end.ok()) << at_end.status();
  EXPECT_TRUE(at_end->empty());
  auto tail = store_->ReadRange(url_, data_.size() - 5, 100);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->view(), data_.substr(data_.size() - 5));
  auto big = store_->ReadRange(url_, 10, ~uint64_t{0});  // stats first
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->view(), data_.substr(10));
  server_->Put("/empty", "");
  std::string got;
  EXPECT_TRUE(ReadAll(*store_, server_->url() + "/empty", &got).ok());
  EXPECT_EQ(got, "");
}

TEST_F(HttpStoreTest, PermanentErrorsAfterExactlyOneRequest) {
  struct Case {
    int status;
    absl::StatusCode code;
  };
  for (Case c :
       {Case{404, absl::StatusCode::kNotFound}, Case{403, absl::StatusCode::kPermissionDenied},
        Case{401, absl::StatusCode::kPermissionDenied},
        Case{400, absl::StatusCode::kInvalidArgument}}) {
    server_->ClearLog();
    server_->AddFault({.kind = HttpFault::Kind::kStatus, .method = "GET", .status = c.status});
    absl::Status s = store_->ReadRange(url_, 0, 100).status();
    EXPECT_EQ(s.code(), c.code) << s;
    EXPECT_NE(s.message().find(url_), std::string::npos) << s;
    EXPECT_EQ(server_->request_count(), 1) << c.status;
    server_->ClearLog();
    server_->AddFault({.kind = HttpFault::Kind::kStatus, .method = "HEAD", .status = c.status});
    EXPECT_EQ(store_->Stat(url_).status().code(), c.code);
    EXPECT_EQ(server_->request_count(), 1);
  }
  server_->ClearLog();
  EXPECT_EQ(store_->Open(server_->url() + "/missing", {}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(server_->request_count(), 1);
}

struct FaultCase {
  std::string name;
  HttpFault fault;
};

std::vector<FaultCase> TransientFaults() {
  std::vector<FaultCase> out;
  for (uint64_t at : {uint64_t{0}, uint64_t{1}, uint64_t{30000}, uint64_t{39999}}) {
    std::string a = std::to_string(at);
    out.push_back({"reset@" + a, {.kind = HttpFault::Kind::kReset, .after_bytes = at}});
    out.push_back({"short@" + a, {.kind = HttpFault::Kind::kShortBody, .after_bytes = at}});
  }
  for (int status : {500, 502, 503, 504, 408, 429}) {
    out.push_back(
        {"status" + std::to_string(status), {.kind = HttpFault::Kind::kStatus, .status = status}});
  }
  for (int64_t shift : {-1, -1000, 1, 1000}) {
    out.push_back({"content-range" + std::to_string(shift),
                   {.kind = HttpFault::Kind::kWrongContentRange, .range_shift = shift}});
  }
  out.push_back({"ignore-range", {.kind = HttpFault::Kind::kIgnoreRange}});
  return out;
}

TEST_F(HttpStoreTest, TransientFaultsAtSeveralOffsetsLoseAndDuplicateNothing) {
  for (const FaultCase& c : TransientFaults()) {
    for (int skip : {0, 2, 5}) {  // the first, third or last chunk's request
      server_->ClearLog();
      server_->ClearFaults();
      int64_t fired = server_->faults_fired();
      HttpFault f = c.fault;
      f.skip = skip;
      f.times = 2;
      server_->AddFault(f);
      std::string got;
      absl::Status s = ReadAll(*store_, url_, &got);
      ASSERT_TRUE(s.ok()) << c.name << " skip " << skip << ": " << s;
      ASSERT_TRUE(got == data_) << c.name << " skip " << skip << ": " << got.size() << " bytes";
      // Faults that leave nothing to fix (a range starting early is trimmed,
      // a 200 is skipped into) need no retry; the others one per shot.
      bool trimmed = f.kind == HttpFault::Kind::kIgnoreRange ||
                     (f.kind == HttpFault::Kind::kWrongContentRange && f.range_shift < 0);
      if (trimmed) {
        EXPECT_GE(server_->faults_fired(), fired + 1) << c.name;
        EXPECT_EQ(server_->request_count(), 1 + 6) << c.name;
      } else {
        EXPECT_EQ(server_->faults_fired(), fired + 2) << c.name;
        EXPECT_GE(server_->request_count(), 1 + 6 + 1) << c.name;
      }
    }
  }
}

TEST_F(HttpStoreTest, PacedReadsWithFaultsLoseAndDuplicateNothing) {
  // 2 ms per request: the reader paces its requests (from 1 ms of round
  // trip), and retried requests wait for the pace too.
  auto slow = HttpServer::Start({.latency = absl::Milliseconds(2)});
  ASSERT_TRUE(slow.ok()) << slow.status();
  (*slow)->Put("/bucket/obj", data_);
  const std::string url = (*slow)->url() + "/bucket/obj";
  for (const FaultCase& c : TransientFaults()) {
    (*slow)->ClearFaults();
    HttpFault f = c.fault;
    f.skip = 2;
    f.times = 2;
    (*slow)->AddFault(f);
    std::string got;
    absl::Status s = ReadAll(*store_, url, &got);
    ASSERT_TRUE(s.ok()) << c.name << ": " << s;
    ASSERT_TRUE(got == data_) << c.name << ": " << got.size() << " bytes";
  }
}

TEST_F(HttpStoreTest, ReadersSharingAPacedStoreLoseAndDuplicateNothing) {
  // Four readers on four threads share one store with 3 requests in flight
  // and ask for 4 ranges each, from two hosts (each with its own shared
  // pacer) at 2 ms per request; requests 4 to 7 of each host are reset
  // after 1,000 bytes.
  ObjectStoreOptions options = FastRetries();
  options.http.max_concurrency = 3;
  std::unique_ptr<ObjectStore> store = OpenObjectStore(options);
  std::vector<std::unique_ptr<HttpServer>> servers;
  for (int i = 0; i < 2; ++i) {
    auto slow = HttpServer::Start({.latency = absl::Milliseconds(2)});
    ASSERT_TRUE(slow.ok()) << slow.status();
    (*slow)->Put("/bucket/obj", data_);
    (*slow)->AddFault(
        {.kind = HttpFault::Kind::kReset, .after_bytes = 1000, .skip = 3, .times = 4});
    servers.push_back(*std::move(slow));
  }
  constexpr int kReaders = 4;
  std::vector<std::string> got(kReaders);
  std::vector<absl::Status> status(kReaders);
  std::vector<std::thread> threads;
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      status[r] = ReadAll(*store, servers[r % 2]->url() + "/bucket/obj", &got[r], 4 * kChunk);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < kReaders; ++r) {
    ASSERT_TRUE(status[r].ok()) << "reader " << r << ": " << status[r];
    EXPECT_TRUE(got[r] == data_) << "reader " << r << ": " << got[r].size() << " bytes";
  }
  for (const auto& server : servers) EXPECT_EQ(server->faults_fired(), 4);
}

TEST_F(HttpStoreTest, FaultsOnRangedReadsResumeAtTheExactByte) {
  server_->AddFault({.kind = HttpFault::Kind::kReset, .after_bytes = 1000});
  auto range = store_->ReadRange(url_, 5000, 50000);
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ(range->view(), data_.substr(5000, 50000));
  auto log = server_->requests();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].headers.at("range"), "bytes=5000-54999");
  EXPECT_EQ(log[1].headers.at("range"), "bytes=6000-54999");
}

TEST_F(HttpStoreTest, StallIsAbortedAndRetried) {
  server_->AddFault(
      {.kind = HttpFault::Kind::kStall, .after_bytes = 1000, .stall = absl::Hours(1), .skip = 1});
  std::string got;
  ASSERT_TRUE(ReadAll(*store_, url_, &got).ok());
  EXPECT_TRUE(got == data_);
  EXPECT_EQ(server_->faults_fired(), 1);
}

TEST_F(HttpStoreTest, RetryAfterIsHonoured) {
  server_->AddFault({.kind = HttpFault::Kind::kStatus, .status = 503, .retry_after = "1"});
  absl::Time start = absl::Now();
  auto range = store_->ReadRange(url_, 0, 100);
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ(range->view(), data_.substr(0, 100));
  EXPECT_GE(absl::Now() - start, absl::Seconds(1));  // backoff alone is <= 20 ms here
  EXPECT_EQ(server_->request_count(), 2);
}

TEST_F(HttpStoreTest, RetriesExhaustedNameUrlAttemptsAndCause) {
  server_->AddFault({.kind = HttpFault::Kind::kStatus, .status = 503, .times = -1});
  absl::Status s = store_->ReadRange(url_, 0, 100).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find(url_), std::string::npos) << s;
  EXPECT_NE(s.message().find("5 attempts"), std::string::npos) << s;
  EXPECT_NE(s.message().find("HTTP 503"), std::string::npos) << s;
  EXPECT_EQ(server_->request_count(), 5);
}

TEST_F(HttpStoreTest, ObjectReplacedMidReadIsFailedPrecondition) {
  for (int skip : {0, 3}) {
    // An object of its own per case, and a fault only for it: a ranged read
    // the previous case's reader left in flight (it stopped at its error)
    // may still reach the server, and must not count as one of this case's
    // `skip` requests.
    const std::string path = fmt::format("/bucket/replaced-{}", skip);
    const std::string url = server_->url() + path;
    server_->Put(path, data_);
    server_->ClearFaults();
    server_->AddFault({.kind = HttpFault::Kind::kReplaceObject,
                       .path_substring = path,
                       .after_bytes = 777,
                       .replacement = Bytes(data_.size(), 99),
                       .skip = skip});
    std::string got;
    absl::Status s = ReadAll(*store_, url, &got);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_NE(s.message().find(url), std::string::npos) << s;
    EXPECT_EQ(got, data_.substr(0, got.size()));  // nothing of the new version
  }
  // A server that ignores If-Match but shows the new ETag is caught too.
  server_->Put("/bucket/obj", data_);
  auto r = store_->Open(url_, {.read_ahead = kChunk});
  ASSERT_TRUE(r.ok());
  std::string buf(kChunk, '\0');
  ASSERT_TRUE((*r)->Read(absl::MakeSpan(reinterpret_cast<uint8_t*>(buf.data()), kChunk)).ok());
  server_->Put("/bucket/obj", data_);  // same bytes, new ETag
  server_->AddFault({.kind = HttpFault::Kind::kIgnoreRange, .path_substring = "/bucket/obj"});
  absl::Status s = testing::ReadToEnd(**r, kChunk);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
}

TEST_F(HttpStoreTest, ConnectionRefusedAndDnsFailureFailFast) {
  std::string dead = server_->url() + "/x";
  server_ = nullptr;  // nothing listens on that port now
  absl::Status refused = store_->Stat(dead).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnavailable) << refused;
  EXPECT_NE(refused.message().find("not retried"), std::string::npos) << refused;
  // A host name no resolver accepts (a label over 63 characters): fails
  // without sending a query anywhere.
  std::string bad = "http://" + std::string(64, 'a') + ".example/x";
  absl::Status dns = store_->Stat(bad).status();
  EXPECT_EQ(dns.code(), absl::StatusCode::kUnavailable) << dns;
  EXPECT_NE(dns.message().find("not retried"), std::string::npos) << dns;
}

TEST_F(HttpStoreTest, CredentialsNeverAppearInErrors) {
  server_->AddFault({.kind = HttpFault::Kind::kStatus, .method = "HEAD", .status = 403});
  std::string url = "http://alice:hunter2@127.0.0.1:" + std::to_string(server_->port()) +
                    "/bucket/obj?token=s3cr3t";
  absl::Status s = store_->Stat(url).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message().find("hunter2"), std::string::npos) << s;
  EXPECT_EQ(s.message().find("s3cr3t"), std::string::npos) << s;
  EXPECT_EQ(server_->requests().at(0).headers.count("authorization"), 1u);
}

TEST_F(HttpStoreTest, ConnectionsAreKeptForTheNextReader) {
  // Objects read one after another (shards) reuse the connections: a window
  // of 16 ranges opens 16, and later readers open none.
  const std::string big = Bytes(16 * kChunk, 11);
  server_->Put("/bucket/big", big);
  ObjectStoreOptions o = FastRetries();
  o.http.max_concurrency = 16;
  auto store = OpenObjectStore(o);
  for (int i = 0; i < 4; ++i) {
    std::string got;
    ASSERT_TRUE(ReadAll(*store, server_->url() + "/bucket/big", &got, 16 * kChunk, kChunk).ok());
    ASSERT_EQ(got, big);
  }
  EXPECT_EQ(server_->request_count("/bucket/big"), 4 * 17);  // a HEAD and 16 GETs each
  EXPECT_LE(server_->connection_count(), 16);
}

TEST_F(HttpStoreTest, CancelAndDestroyMidTransferArePrompt) {
  server_->AddFault(
      {.kind = HttpFault::Kind::kStall, .after_bytes = 10, .stall = absl::Hours(1), .times = -1});
  ObjectStoreOptions o = FastRetries();
  o.http.stall_timeout = absl::Hours(1);
  auto store = OpenObjectStore(o);
  auto r = store->Open(url_, {});
  ASSERT_TRUE(r.ok());
  std::thread canceller([&] {
    while (server_->faults_fired() == 0) absl::SleepFor(absl::Milliseconds(2));
    (*r)->Cancel();
  });
  std::string buf(kChunk, '\0');
  auto n = (*r)->Read(absl::MakeSpan(reinterpret_cast<uint8_t*>(buf.data()), buf.size()));
  canceller.join();
  EXPECT_EQ(n.status().code(), absl::StatusCode::kCancelled);
  // A reader destroyed while its transfers stall, then the store. (Another
  // object: requests of the cancelled reader may still reach the server.)
  server_->ClearFaults();
  server_->Put("/bucket/second", data_);
  auto r2 = store->Open(server_->url() + "/bucket/second", {.read_ahead = 2 * kChunk});
  ASSERT_TRUE(r2.ok());
  std::vector<uint8_t> one(1);
  ASSERT_TRUE((*r2)->Read(absl::MakeSpan(one)).ok());  // asks for chunks 1 and 2
  // Faults apply to requests that arrive later: wait for the HEAD and both GETs.
  while (server_->request_count("/bucket/second") < 3) absl::SleepFor(absl::Milliseconds(2));
  int64_t fired = server_->faults_fired();
  server_->AddFault(
      {.kind = HttpFault::Kind::kStall, .after_bytes = 10, .stall = absl::Hours(1), .times = -1});
  std::vector<uint8_t> rest(kChunk);
  ASSERT_TRUE((*r2)->Read(absl::MakeSpan(rest)).ok());  // starts chunk 3, which stalls
  while (server_->faults_fired() <= fired) absl::SleepFor(absl::Milliseconds(2));
  r2->reset();
  store.reset();
  // A reader that outlives its store still reads (or fails) cleanly.
  auto store3 = OpenObjectStore(FastRetries());
  server_->ClearFaults();
  auto r3 = store3->Open(url_, {});
  ASSERT_TRUE(r3.ok());
  store3.reset();
  auto m = (*r3)->Read(absl::MakeSpan(reinterpret_cast<uint8_t*>(buf.data()), buf.size()));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(buf, data_.substr(0, kChunk));
}

}  // namespace
}  // namespace dataecho
