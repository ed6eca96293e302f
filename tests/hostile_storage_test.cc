// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Hostile inputs to the stores, against real parts (the loopback HTTP server
// with its request log, s3rver, real files): keys that look like paths, sizes
// that lie, files without a size, listings that never end, names that look
// like globs, and credentials in URIs, which no error may show.
#include <sys/stat.h>

#include <functional>
#include <string>
#include <vector>

#include "dataecho/formats/tfrecord.h"
#include "dataecho/storage/glob.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "storage/uri.h"
#include "support/examples.h"
#include "support/s3rver.h"
#include "support/store_objects.h"
#include "support/temp_files.h"
#include "testing/http_server.h"

namespace dataecho {
namespace {

using testing::HttpFault;
using testing::HttpReply;
using testing::HttpRequestLog;
using testing::HttpServer;
using testing::StartServer;

ObjectStoreOptions Fast() {
  ObjectStoreOptions o;
  o.retry.initial_backoff = absl::Milliseconds(1);
  o.retry.max_backoff = absl::Milliseconds(5);
  o.retry.max_attempts = 3;
  o.http.chunk_size = 64 << 10;
  return o;
}

// A store whose S3 and GCS endpoints are `server`, with fast retries.
auto StoreOn(const HttpServer& server) {
  ObjectStoreOptions o = Fast();
  o.s3.endpoint = server.url();
  o.gcs.endpoint = server.url();
  return OpenObjectStore(o);
}

// The whole object through a sequential reader; the status of the end.
absl::Status ReadAll(ObjectStore& store, const std::string& uri, std::string* out) {
  out->clear();
  return testing::ReadObject(store, uri, 256 << 10, 10000, out);
}

std::string ThreeRecords() {
  std::string file;
  for (int i = 0; i < 3; ++i)
    AppendTFRecord(&file, std::string(1000 + i, static_cast<char>('a' + i)));
  return file;
}

// Keys that a path-normalizing client would rewrite or cut.
const std::vector<std::string>& HostileKeys() {
  static const auto* keys = new std::vector<std::string>{"x/../../etc/passwd",
                                                         "./a",
                                                         "a/./b",
                                                         "..",
                                                         ".",
                                                         "a//b",
                                                         "100%.bin",
                                                         "50%2Fx",
                                                         "what?x=1",
                                                         "frag#ment",
                                                         "with space",
                                                         "caf\xc3\xa9/\xe2\x82\xac",
                                                         "a/../.."};
  return *keys;
}

// ---- keys are opaque

TEST(HostileKeysTest, S3RequestPathIsAlwaysBucketSlashKey) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  auto store = StoreOn(*server);
  for (const std::string& key : HostileKeys()) {
    server->Put("/bucket/" + key, "bytes of " + key);
    server->ClearLog();
    std::string got;
    absl::Status s = ReadAll(*store, "s3://bucket/" + key, &got);
    std::vector<HttpRequestLog> log = server->requests();
    ASSERT_FALSE(log.empty()) << key;
    for (const HttpRequestLog& r : log) EXPECT_EQ(r.path, "/bucket/" + key) << key;
    EXPECT_TRUE(s.ok()) << key << ": " << s;
    EXPECT_EQ(got, "bytes of " + key);
  }
}

TEST(HostileKeysTest, GcsRequestPathIsAlwaysTheObjectName) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  auto store = StoreOn(*server);
  for (const std::string& key : HostileKeys()) {
    server->ClearLog();
    (void)store->Stat("gs://bucket/" + key);  // 404: only the request line matters
    std::vector<HttpRequestLog> log = server->requests();
    ASSERT_EQ(log.size(), 1u) << key;
    EXPECT_EQ(log[0].path, "/storage/v1/b/bucket/o/" + key) << key;
  }
}

TEST(HostileKeysTest, S3KeysRoundTripThroughSignedRequestsToS3rver) {
  auto s3 = testing::S3rver::Start();
  ASSERT_TRUE(s3.ok()) << s3.status();
  ASSERT_TRUE((*s3)->CreateBucket("data").ok());
  ObjectStoreOptions o = Fast();
  o.s3.endpoint = (*s3)->endpoint();
  o.s3.access_key_id = testing::S3rver::kAccessKey;
  o.s3.secret_access_key = testing::S3rver::kSecretKey;
  auto store = OpenObjectStore(o);
  ASSERT_TRUE((*s3)->PutObject("data", "etc/passwd", "the bucket's own etc/passwd").ok());
  for (const std::string& key :
       {std::string("x/../../etc/passwd"), std::string("100%.bin"), std::string("with space"),
        std::string("what?x=1"), std::string("caf\xc3\xa9")}) {
    ASSERT_TRUE((*s3)->PutObject("data", internal::EncodeKeyPath(key), "bytes of " + key).ok())
        << key;
    std::string got;
    absl::Status s = ReadAll(*store, "s3://data/" + key, &got);
    ASSERT_TRUE(s.ok()) << key << ": " << s;
    EXPECT_EQ(got, "bytes of " + key);
  }
}

// ---- a stat size is a hint the read verifies

// Serves `path` with HEAD answering `head_size` bytes (the same ETag).
void LieAboutSize(HttpServer* server, const std::string& path, size_t head_size) {
  server->SetRoute([server, path, head_size](const HttpRequestLog& r) -> std::optional<HttpReply> {
    if (r.path != path || r.method != "HEAD") return std::nullopt;
    HttpReply reply;
    reply.body = std::string(head_size, 'x');
    reply.content_type = "application/octet-stream";
    reply.headers["ETag"] = server->Get(path)->etag;
    return reply;
  });
}

TEST(SizeLiesTest, HeadSmallerThanTheObjectIsFailedPreconditionNotAShortRead) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  const std::string file = ThreeRecords();
  server->Put("/d/three.tfrecord", file);
  LieAboutSize(server.get(), "/d/three.tfrecord", 1020);  // the first record only
  std::shared_ptr<ObjectStore> store = OpenObjectStore(Fast());
  std::string got;
  absl::Status s = ReadAll(*store, server->url() + "/d/three.tfrecord", &got);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("1020"), std::string::npos) << s;
  EXPECT_NE(s.message().find(std::to_string(file.size())), std::string::npos) << s;
  auto source = MakeTFRecordSource(store, {server->url() + "/d/three.tfrecord"});
  testing::ReadResult result = testing::ReadAllRecords(*source);
  EXPECT_EQ(result.status.code(), absl::StatusCode::kFailedPrecondition) << result.status;
}

TEST(SizeLiesTest, HeadSayingZeroStillAsksAndFails) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Put("/d/three.tfrecord", ThreeRecords());
  LieAboutSize(server.get(), "/d/three.tfrecord", 0);
  auto store = OpenObjectStore(Fast());
  std::string got;
  absl::Status s = ReadAll(*store, server->url() + "/d/three.tfrecord", &got);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(server->request_count("three"), 2);  // the HEAD and one GET
}

TEST(SizeLiesTest, HonestEmptyAndHonestObjectsReadCleanly) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Put("/d/empty", "");
  server->Put("/d/three.tfrecord", ThreeRecords());
  auto store = OpenObjectStore(Fast());
  std::string got;
  EXPECT_TRUE(ReadAll(*store, server->url() + "/d/empty", &got).ok());
  EXPECT_EQ(got, "");
  EXPECT_TRUE(ReadAll(*store, server->url() + "/d/three.tfrecord", &got).ok());
  EXPECT_EQ(got, ThreeRecords());
}

// ---- files without a trustworthy size

TEST(NonRegularFilesTest, PipesDevicesAndProcFilesAreRejectedNotReadAsEmpty) {
  testing::TempDir dir;
  const std::string fifo = dir.File("pipe.tfrecord");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto store = OpenObjectStore();
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    auto info = store->Stat(path);
    EXPECT_EQ(info.status().code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_NE(info.status().message().find("not a regular file"), std::string::npos)
        << info.status();
    std::string got;
    EXPECT_EQ(ReadAll(*store, path, &got).code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_EQ(store->ReadRange(path, 0, 10).status().code(), absl::StatusCode::kInvalidArgument);
  }
  auto proc = store->Stat("/proc/self/status");
  EXPECT_EQ(proc.status().code(), absl::StatusCode::kInvalidArgument) << proc.status();
  EXPECT_NE(proc.status().message().find("size of 0"), std::string::npos) << proc.status();
  auto source = MakeTFRecordSource(std::shared_ptr<ObjectStore>(OpenObjectStore()), {fifo});
  EXPECT_EQ(testing::ReadAllRecords(*source).status.code(), absl::StatusCode::kInvalidArgument);
  // A real empty file is still an empty object.
  testing::WriteFileOrDie(dir.File("empty"), "");
  auto empty = store->Stat(dir.File("empty"));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->size, 0u);
}

// ---- listings that never end

struct ListingCase {
  std::string name;
  std::function<std::string(int page)> body;
  absl::StatusCode code;
  std::string says;
};

TEST(ListingTest, S3ListingsThatLoopRepeatOrLieFailNamingBucketAndPrefix) {
  auto entry = [](const std::string& key) {
    return fmt::format("<Contents><Key>{}</Key><Size>3</Size><ETag>\"e\"</ETag></Contents>", key);
  };
  std::vector<ListingCase> cases = {
      {"repeated token",
       [&](int page) {
         return fmt::format(
             "<ListBucketResult>{}<IsTruncated>true</IsTruncated>"
             "<NextContinuationToken>same</NextContinuationToken></ListBucketResult>",
             entry(fmt::format("p/k{}", page)));
       },
       absl::StatusCode::kDataLoss, "repeats an earlier page token"},
      {"empty truncated page",
       [&](int page) {
         return fmt::format(
             "<ListBucketResult><IsTruncated>true</IsTruncated>"
             "<NextContinuationToken>t{}</NextContinuationToken></ListBucketResult>",
             page);
       },
       absl::StatusCode::kDataLoss, "lists nothing"},
      {"duplicate key",
       [&](int page) {
         return fmt::format(
             "<ListBucketResult>{}{}<IsTruncated>false</IsTruncated></ListBucketResult>",
             entry("p/a"), entry("p/a"));
       },
       absl::StatusCode::kDataLoss, "lists s3://bkt/p/a again"},
      {"html",
       [&](int) { return std::string("<html><body>Welcome to the captive portal</body></html>"); },
       absl::StatusCode::kDataLoss, "not an S3 listing"},
  };
  for (const ListingCase& c : cases) {
    auto server = StartServer();
    ASSERT_NE(server, nullptr);
    int pages = 0;
    server->SetRoute([&](const HttpRequestLog& r) -> std::optional<HttpReply> {
      if (r.query.count("list-type") == 0) return std::nullopt;
      HttpReply reply;
      reply.content_type = "application/xml";
      reply.body = c.body(++pages);
      return reply;
    });
    auto store = StoreOn(*server);
    auto listed = store->List("s3://bkt/p/");
    EXPECT_EQ(listed.status().code(), c.code) << c.name << ": " << listed.status();
    const std::string message(listed.status().message());
    EXPECT_NE(message.find(c.says), std::string::npos) << c.name << ": " << message;
    EXPECT_NE(message.find("bucket 'bkt', prefix 'p/'"), std::string::npos) << message;
    EXPECT_LE(pages, 3) << c.name;
  }
}

TEST(ListingTest, GcsListingThatRepeatsItsPageTokenFails) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  int pages = 0;
  server->SetRoute([&](const HttpRequestLog& r) -> std::optional<HttpReply> {
    if (r.path != "/storage/v1/b/bkt/o") return std::nullopt;
    ++pages;
    HttpReply reply;
    reply.body = fmt::format(R"({{"items": [{{"name": "p/k{}", "size": "3", "generation": "1"}}],)"
                             R"( "nextPageToken": "same"}})",
                             pages);
    return reply;
  });
  auto store = StoreOn(*server);
  auto listed = store->List("gs://bkt/p/");
  EXPECT_EQ(listed.status().code(), absl::StatusCode::kDataLoss) << listed.status();
  EXPECT_NE(listed.status().message().find("repeats an earlier page token"), std::string::npos);
  EXPECT_NE(listed.status().message().find("bucket 'bkt', prefix 'p/'"), std::string::npos);
  EXPECT_EQ(pages, 2);
}

// ---- globs only where a listing can expand them

TEST(GlobTest, GlobCharactersCountOnlyInListablePaths) {
  EXPECT_TRUE(IsGlob("/data/part-*"));
  EXPECT_TRUE(IsGlob("gs://b/train-?.tfrecord"));
  EXPECT_TRUE(IsGlob("s3://b/x[0-9]"));
  EXPECT_FALSE(IsGlob("s3://b[1]/x"));
  EXPECT_FALSE(IsGlob("https://host/x?X-Amz-Signature=abc"));
  EXPECT_FALSE(IsGlob("http://[::1]:8080/x"));
  EXPECT_FALSE(IsGlob("http://host/*"));
  EXPECT_FALSE(IsGlob("/data/part\\[1\\]"));
}

TEST(GlobTest, UrlWithAQueryStringIsOneObject) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Put("/d/obj", "hello");
  auto store = OpenObjectStore(Fast());
  const std::string url = server->url() + "/d/obj?X-Amz-Signature=abc&X-Amz-Expires=60";
  auto uris = ExpandUris(*store, url);
  ASSERT_TRUE(uris.ok()) << uris.status();
  EXPECT_EQ(*uris, std::vector<std::string>{url});
  std::string got;
  ASSERT_TRUE(ReadAll(*store, url, &got).ok());
  EXPECT_EQ(got, "hello");
}

TEST(GlobTest, Ipv6LiteralHostIsNamedWhole) {
  auto store = OpenObjectStore(Fast());
  // Nothing listens there: the error must name the URL whole, not "http://".
  const std::string url = "http://[::1]:9/x.tfrecord";
  auto uris = ExpandUris(*store, url);
  ASSERT_FALSE(uris.ok());
  EXPECT_NE(uris.status().message().find(url), std::string::npos) << uris.status();
}

TEST(GlobTest, LocalNamesWithBracketsAreReadableAsWrittenOrEscaped) {
  testing::TempDir dir;
  testing::WriteFileOrDie(dir.File("part[1].tfrecord"), ThreeRecords());
  testing::WriteFileOrDie(dir.File("part1.tfrecord"), "other");
  auto store = OpenObjectStore();
  auto literal = ExpandUris(*store, dir.File("part[1].tfrecord"));
  ASSERT_TRUE(literal.ok()) << literal.status();
  // "[1]" is a class matching "1": the glob's match wins.
  EXPECT_EQ(*literal, std::vector<std::string>{dir.File("part1.tfrecord")});
  auto escaped = ExpandUris(*store, dir.File("part\\[1\\].tfrecord"));
  ASSERT_TRUE(escaped.ok()) << escaped.status();
  EXPECT_EQ(*escaped, std::vector<std::string>{dir.File("part[1].tfrecord")});
  auto glob = ExpandUris(*store, dir.File("part\\[*"));
  ASSERT_TRUE(glob.ok()) << glob.status();
  EXPECT_EQ(*glob, std::vector<std::string>{dir.File("part[1].tfrecord")});
  testing::WriteFileOrDie(dir.File("only[2].tfrecord"), ThreeRecords());
  auto unmatched = ExpandUris(*store, dir.File("only[2].tfrecord"));
  ASSERT_TRUE(unmatched.ok()) << unmatched.status();
  EXPECT_EQ(*unmatched, std::vector<std::string>{dir.File("only[2].tfrecord")});
}

// ---- credentials never reach a message

TEST(RedactionTest, RedactUriRemovesUserinfoAndSignaturesAndEscapesControls) {
  EXPECT_EQ(RedactUri("http://alice:PASS@host:8/p?a=1&X-Amz-Signature=S&token=T#f"),
            "http://host:8/p?a=1&X-Amz-Signature=[redacted]&token=[redacted]#f");
  EXPECT_EQ(RedactUri("https://h/o?X-Goog-Signature=S&X-Goog-Credential=C&sig=Z&x=1"),
            "https://h/o?X-Goog-Signature=[redacted]&X-Goog-Credential=[redacted]&sig=[redacted]"
            "&x=1");
  EXPECT_EQ(RedactUri("http://u@[::1]:9/x"), "http://[::1]:9/x");
  EXPECT_EQ(RedactUri("http://u:p@h?access_token=T"), "http://h?access_token=[redacted]");
  EXPECT_EQ(RedactUri("/data/a\x1b[2Jb"), "/data/a\\x1b[2Jb");
  EXPECT_EQ(RedactUri("s3://bucket/key"), "s3://bucket/key");
  EXPECT_EQ(RedactUri("/plain/path?x"), "/plain/path?x");
}

void ExpectRedacted(const absl::Status& s, const std::string& what, const std::string& shown) {
  EXPECT_FALSE(s.ok()) << what;
  const std::string m(s.message());
  for (const char* secret : {"alice", "PASS", "SIGSECRET", "TOKSECRET"}) {
    EXPECT_EQ(m.find(secret), std::string::npos) << what << ": " << m;
  }
  EXPECT_NE(m.find(shown), std::string::npos) << what << ": " << m;
}

TEST(RedactionTest, EveryErrorNamingAUriIsRedacted) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  const std::string host = server->url().substr(7);  // 127.0.0.1:PORT
  auto url = [&](const std::string& path) {
    return fmt::format("http://alice:PASS@{}{}?X-Amz-Signature=SIGSECRET&token=TOKSECRET", host,
                       path);
  };
  auto shown = [&](const std::string& path) { return host + path; };
  server->Put("/page.html", "<html><body>not a record</body></html>\n");
  server->Put("/big", std::string(1 << 20, 'b'));
  server->Put("/three", ThreeRecords());
  std::shared_ptr<ObjectStore> store = OpenObjectStore(Fast());

  // A record-level error (an HTML page read as TFRecords): DATA_LOSS.
  testing::ReadResult html =
      testing::ReadAllRecords(*MakeTFRecordSource(store, {url("/page.html")}));
  EXPECT_EQ(html.status.code(), absl::StatusCode::kDataLoss);
  ExpectRedacted(html.status, "record error", shown("/page.html"));
  // 404, 403, 503 until retries run out.
  ExpectRedacted(store->Stat(url("/missing")).status(), "404", shown("/missing"));
  server->AddFault({.method = "HEAD", .path_substring = "/forbidden", .status = 403});
  ExpectRedacted(store->Stat(url("/forbidden")).status(), "403", shown("/forbidden"));
  server->AddFault({.path_substring = "/big", .status = 503, .times = -1});
  std::string got;
  ExpectRedacted(ReadAll(*store, url("/big"), &got), "retries exhausted", shown("/big"));
  server->ClearFaults();
  // The object replaced mid-read. An object of its own: a request of the failed
  // read above still draining must not be the one the fault replaces.
  server->Put("/changing", std::string(1 << 20, 'b'));
  server->AddFault({.kind = HttpFault::Kind::kReplaceObject,
                    .path_substring = "/changing",
                    .after_bytes = 1000,
                    .replacement = std::string(1 << 20, 'c')});
  ExpectRedacted(ReadAll(*store, url("/changing"), &got), "object changed", shown("/changing"));
  // A size that lies.
  LieAboutSize(server.get(), "/three", 10);
  ExpectRedacted(ReadAll(*store, url("/three"), &got), "size lie", shown("/three"));
  // Patterns: no match, listing over HTTP.
  ExpectRedacted(ExpandUris(*store, url("/missing")).status(), "expand", shown("/missing"));
  ExpectRedacted(store->List(url("/dir/")).status(), "list", shown("/dir/"));
  // Connection refused.
  const std::string gone = url("/x");
  server.reset();
  ExpectRedacted(store->Stat(gone).status(), "refused", shown("/x"));
}

}  // namespace
}  // namespace dataecho
