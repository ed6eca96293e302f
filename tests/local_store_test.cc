// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/storage/local_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dataecho/storage/glob.h"
#include "dataecho/storage/object_store.h"
#include "gtest/gtest.h"
#include "storage/local_glob.h"
#include "support/store_objects.h"
#include "support/temp_files.h"

namespace dataecho {
namespace {

namespace fs = std::filesystem;

class LocalStoreTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& rel, const std::string& bytes) {
    fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  std::string ReadAll(ObjectReader& r, size_t step) {
    std::string out;
    absl::Status s = testing::ReadToEnd(r, step, &out);
    EXPECT_TRUE(s.ok()) << s;
    return out;
  }
  testing::TempDir tmp_;  // a fresh directory per test, removed after it
  fs::path dir_ = tmp_.path();
  std::unique_ptr<ObjectStore> store_ = OpenObjectStore();
};

TEST_F(LocalStoreTest, StatGivesSizeAndVersionThatChangesWithContent) {
  std::string path = Write("a.bin", testing::Bytes(1000, 1));
  absl::StatusOr<ObjectInfo> info = store_->Stat(path);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->size, 1000u);
  EXPECT_EQ(info->uri, path);
  EXPECT_FALSE(info->version.empty());
  Write("a.bin", testing::Bytes(1001, 1));
  absl::StatusOr<ObjectInfo> again = store_->Stat(path);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->version, info->version);
}

TEST_F(LocalStoreTest, FileUriAndPlainPathAreTheSameObject) {
  std::string path = Write("b.bin", testing::Bytes(77, 1));
  absl::StatusOr<ObjectInfo> info = store_->Stat("file://" + path);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->size, 77u);
  EXPECT_EQ(info->uri, "file://" + path);
  absl::StatusOr<Buffer> range = store_->ReadRange("file://localhost" + path, 7, 10);
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ(range->view(), testing::Bytes(77, 1).substr(7, 10));
  EXPECT_EQ(store_->Stat("file://otherhost/x").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(LocalStoreTest, ErrorsNameThePathAndUseTheRightCode) {
  std::string missing = (dir_ / "missing.bin").string();
  absl::Status s = store_->Stat(missing).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find(missing), std::string::npos) << s;
  EXPECT_EQ(store_->Open(missing, {}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->Stat(dir_.string()).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Stat("ftp://host/x").status().code(), absl::StatusCode::kInvalidArgument);
  if (geteuid() != 0) {  // root reads everything
    std::string secret = Write("secret.bin", "x");
    chmod(secret.c_str(), 0);
    absl::Status denied = store_->Open(secret, {}).status();
    EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied) << denied;
    EXPECT_NE(denied.message().find(secret), std::string::npos);
  }
}

TEST_F(LocalStoreTest, ReaderReturnsEveryByteOnceWhateverTheReadSize) {
  std::string bytes = testing::Bytes(300000, 1);
  std::string path = Write("c.bin", bytes);
  for (size_t step : {1u, 7u, 4096u, 65536u, 1000000u}) {
    ReadOptions opts;
    opts.read_ahead = 10000;
    absl::StatusOr<std::unique_ptr<ObjectReader>> r = store_->Open(path, opts);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(ReadAll(**r, step), bytes) << "step " << step;
    EXPECT_EQ((*r)->offset(), bytes.size());
  }
}

TEST_F(LocalStoreTest, ReaderHonoursOffsetAndLength) {
  std::string bytes = testing::Bytes(5000, 1);
  std::string path = Write("d.bin", bytes);
  ReadOptions opts;
  opts.offset = 1234;
  opts.length = 2000;
  opts.read_ahead = 512;
  auto r = store_->Open(path, opts);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->offset(), 1234u);
  EXPECT_EQ(ReadAll(**r, 300), bytes.substr(1234, 2000));
  opts.offset = 9999;  // past the end: a clean, empty stream
  auto past = store_->Open(path, opts);
  ASSERT_TRUE(past.ok());
  EXPECT_EQ(ReadAll(**past, 10), "");
  absl::StatusOr<Buffer> tail = store_->ReadRange(path, 4990, 100);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->view(), bytes.substr(4990));
}

TEST_F(LocalStoreTest, ReaderSeesAFileChangingUnderIt) {
  std::string path = Write("e.bin", testing::Bytes(100000, 1));
  ReadOptions opts;
  opts.read_ahead = 4096;
  auto r = store_->Open(path, opts);
  ASSERT_TRUE(r.ok());
  uint8_t buf[100];
  ASSERT_TRUE((*r)->Read(absl::MakeSpan(buf)).ok());
  ASSERT_EQ(truncate(path.c_str(), 50000), 0);
  absl::Status s = testing::ReadToEnd(**r, sizeof(buf));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
}

TEST_F(LocalStoreTest, CancelledReaderReturnsCancelled) {
  std::string path = Write("f.bin", testing::Bytes(1000, 1));
  auto r = store_->Open(path, {});
  ASSERT_TRUE(r.ok());
  (*r)->Cancel();
  uint8_t buf[10];
  EXPECT_EQ((*r)->Read(absl::MakeSpan(buf)).status().code(), absl::StatusCode::kCancelled);
}

TEST_F(LocalStoreTest, ListIsRecursiveSortedAndKeepsTheUriForm) {
  Write("train-1", "a");
  Write("train-0", "bb");
  Write("train-dir/x", "ccc");
  Write("test-0", "d");
  std::string prefix = (dir_ / "train").string();
  auto listed = store_->List(prefix);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[0].uri, prefix + "-0");
  EXPECT_EQ((*listed)[0].size, 2u);
  EXPECT_EQ((*listed)[1].uri, prefix + "-1");
  EXPECT_EQ((*listed)[2].uri, prefix + "-dir/x");
  auto as_uri = store_->List("file://" + dir_.string() + "/");
  ASSERT_TRUE(as_uri.ok());
  ASSERT_EQ(as_uri->size(), 4u);
  EXPECT_EQ((*as_uri)[0].uri, "file://" + dir_.string() + "/test-0");
  auto none = store_->List((dir_ / "nothing-here/x").string());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_F(LocalStoreTest, GlobAndPrefixExpansion) {
  for (const char* name : {"part-02", "part-00", "part-01", "part-10", "other", "sub/part-03"}) {
    Write(name, name);
  }
  std::string d = dir_.string();
  auto glob = ExpandUris(*store_, d + "/part-0?");
  ASSERT_TRUE(glob.ok()) << glob.status();
  EXPECT_EQ(*glob, (std::vector<std::string>{d + "/part-00", d + "/part-01", d + "/part-02"}));
  auto star = ExpandUris(*store_, d + "/*/part-*");  // '*' does not cross '/'
  ASSERT_TRUE(star.ok());
  EXPECT_EQ(*star, std::vector<std::string>{d + "/sub/part-03"});
  auto prefix = ExpandUris(*store_, d + "/");
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(prefix->size(), 6u);
  auto multi =
      ExpandUris(*store_, std::vector<std::string>{d + "/part-1*", d + "/other", d + "/part-10"});
  ASSERT_TRUE(multi.ok());
  EXPECT_EQ(*multi, (std::vector<std::string>{d + "/other", d + "/part-10"}));
  EXPECT_EQ(ExpandUris(*store_, d + "/nope-*").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ExpandUris(*store_, d + "/nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(GlobMatch("gs://b/x-[0-9]", "gs://b/x-7"));
  EXPECT_FALSE(GlobMatch("gs://b/*", "gs://b/d/x"));
}

// A symbolic link loop is not UNKNOWN: FAILED_PRECONDITION naming the path,
// from Stat, Open, ReadRange, a literal pattern and a glob that matches it.
TEST_F(LocalStoreTest, SymbolicLinkLoopIsFailedPreconditionNamingThePath) {
  const std::string loop = (dir_ / "loop.tfrecord").string();
  ASSERT_EQ(symlink("loop.tfrecord", loop.c_str()), 0);
  for (const absl::Status& s :
       {store_->Stat(loop).status(), store_->Open(loop, {}).status(),
        store_->ReadRange("file://" + loop, 0, 10).status(), ExpandUris(*store_, loop).status(),
        ExpandUris(*store_, dir_.string() + "/*.tfrecord").status()}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_NE(s.message().find(loop), std::string::npos) << s;
    EXPECT_NE(s.message().find("symbolic link loop"), std::string::npos) << s;
  }
}

// '*', '?' and "[...]" never match '/': a local glob reads the directories its
// pattern can reach, not every directory below its literal prefix.
TEST_F(LocalStoreTest, GlobReadsOnlyTheDirectoriesItsPatternCanReach) {
  for (const char* name : {"top.x", "top.y", "a/b/c/deep.x", "a/b/c/d/deeper.x", "sub1/x/y.x",
                           "sub1/x/z/w.x", "sub2/z.x", "sub2/q/r.x"}) {
    Write(name, name);
  }
  const std::string d = dir_.string();
  struct Case {
    std::string pattern;
    std::vector<std::string> files;
    int64_t directories;  // read for it
  };
  const Case cases[] = {
      {d + "/*.x", {d + "/top.x"}, 1},                                       // d
      {d + "/*/z.x", {d + "/sub2/z.x"}, 1},                                  // d (z.x is literal)
      {d + "/*/*.x", {d + "/sub2/z.x"}, 4},                                  // d, a, sub1, sub2
      {d + "/sub?/x/*.x", {d + "/sub1/x/y.x"}, 2},                           // d, sub1/x
      {"file://" + d + "/a/*/c/*.x", {"file://" + d + "/a/b/c/deep.x"}, 2},  // a, a/b/c
      {d + "/top.[xy]", {d + "/top.x", d + "/top.y"}, 1},
  };
  for (const Case& c : cases) {
    const int64_t before = internal::LocalDirectoriesRead();
    absl::StatusOr<std::vector<std::string>> got = ExpandUris(*store_, c.pattern);
    ASSERT_TRUE(got.ok()) << c.pattern << ": " << got.status();
    EXPECT_EQ(*got, c.files) << c.pattern;
    EXPECT_EQ(internal::LocalDirectoriesRead() - before, c.directories) << c.pattern;
  }
}

}  // namespace
}  // namespace dataecho
