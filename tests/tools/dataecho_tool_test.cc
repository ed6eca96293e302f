// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Runs the built `dataecho` binary and checks its output and exit status.
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

#include "dataecho/crc32c.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "support/gcs_api.h"
#include "support/programs.h"
#include "support/s3rver.h"
#include "support/temp_files.h"
#include "testing/http_server.h"

namespace dataecho {
namespace {

using ::dataecho::testing::HttpServer;
using ::dataecho::testing::ProgramRun;
using ::dataecho::testing::RunShell;
using ::dataecho::testing::S3rver;
using ::dataecho::testing::TempDir;

// Runs `dataecho ARGS`, with the environment variables `env` ("NAME=value
// ...", shell words) added.
ProgramRun Tool(const TempDir& dir, const std::string& args, const std::string& env = "") {
  return RunShell(fmt::format("{} '{}' {}", env, DATAECHO_TOOL_PATH, args), dir.File("stderr.txt"));
}

// Writes dir/part-0.tfrecord and dir/part-1.tfrecord (201 records in all)
// and returns the line `dataecho stat` must print for the two.
std::string WriteTwoShards(const TempDir& dir) {
  uint64_t records = 0, bytes = 0, sum = 0;
  for (int f = 0; f < 2; ++f) {
    auto w = TFRecordWriter::Create(dir.File(fmt::format("part-{}.tfrecord", f)));
    EXPECT_TRUE(w.ok());
    if (!w.ok()) return "";
    for (int i = 0; i < 100 + f; ++i) {
      const std::string payload(static_cast<size_t>(i * 7 % 300), static_cast<char>(i));
      EXPECT_TRUE((*w)->Write(payload).ok());
      ++records;
      bytes += payload.size();
      sum += Crc32c(payload);
    }
    EXPECT_TRUE((*w)->Close().ok());
  }
  return fmt::format(
      "{{\"records\": {}, \"payload_bytes\": {}, \"crc32c_sum\": {}, \"skipped_corrupt\": 0}}\n",
      records, bytes, sum);
}

TEST(DataechoToolTest, StatPrintsTheExactJson) {
  TempDir dir;
  const std::string want = WriteTwoShards(dir);
  ProgramRun glob = Tool(dir, "stat '" + dir.File("part-*.tfrecord") + "'");
  ProgramRun r =
      Tool(dir, "stat " + dir.File("part-0.tfrecord") + " " + dir.File("part-1.tfrecord"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, want);
  EXPECT_EQ(glob.exit_code, 0) << glob.err;
  EXPECT_EQ(glob.out, want);
}

// The same two shards through every URI scheme: file://, http:// (the test
// server serving the directory), gs:// (the Cloud Storage JSON API on the
// test server, found through STORAGE_EMULATOR_HOST) and s3:// (s3rver, found
// through AWS_ENDPOINT_URL), with globs where the scheme can list. A file
// next to the shards that is not a TFRecord file must not match the glob.
TEST(DataechoToolTest, StatReadsEveryUriScheme) {
  TempDir dir;
  const std::string want = WriteTwoShards(dir);
  ASSERT_FALSE(want.empty());
  const std::string shards[2] = {testing::ReadFileOrDie(dir.File("part-0.tfrecord")),
                                 testing::ReadFileOrDie(dir.File("part-1.tfrecord"))};
  const std::string decoy = "not a TFRecord file";

  ProgramRun file =
      Tool(dir, fmt::format("stat 'file://{}' 'file://{}'", dir.File("part-0.tfrecord"),
                            dir.File("part-1.tfrecord")));
  EXPECT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(file.out, want);
  ProgramRun file_glob = Tool(dir, fmt::format("stat 'file://{}'", dir.File("part-*.tfrecord")));
  EXPECT_EQ(file_glob.exit_code, 0) << file_glob.err;
  EXPECT_EQ(file_glob.out, want);

  auto http = HttpServer::Start({.directory = dir.path()});
  ASSERT_TRUE(http.ok()) << http.status();
  ProgramRun web =
      Tool(dir, fmt::format("stat {0}/part-0.tfrecord {0}/part-1.tfrecord", (*http)->url()));
  EXPECT_EQ(web.exit_code, 0) << web.err;
  EXPECT_EQ(web.out, want);

  constexpr const char* kToken = "ya29.tool-test-token";
  auto gcs = HttpServer::Start({});
  ASSERT_TRUE(gcs.ok()) << gcs.status();
  testing::ServeCloudStorageApi(gcs->get(), kToken, /*page_size=*/1);
  (*gcs)->Put("/bkt/train/part-0.tfrecord", shards[0]);
  (*gcs)->Put("/bkt/train/part-1.tfrecord", shards[1]);
  (*gcs)->Put("/bkt/train/part-notes.txt", decoy);
  const std::string gcs_env = fmt::format(
      "STORAGE_EMULATOR_HOST=127.0.0.1:{} GOOGLE_OAUTH_ACCESS_TOKEN={}", (*gcs)->port(), kToken);
  ProgramRun gs = Tool(dir, "stat 'gs://bkt/train/part-*.tfrecord'", gcs_env);
  EXPECT_EQ(gs.exit_code, 0) << gs.err;
  EXPECT_EQ(gs.out, want);
  ProgramRun gs_missing = Tool(dir, "stat gs://bkt/train/part-9.tfrecord", gcs_env);
  EXPECT_EQ(gs_missing.exit_code, 1);
  EXPECT_NE(gs_missing.err.find("NOT_FOUND"), std::string::npos) << gs_missing.err;
  EXPECT_NE(gs_missing.err.find("gs://bkt/train/part-9.tfrecord"), std::string::npos)
      << gs_missing.err;
  EXPECT_EQ(gs_missing.err.find(kToken), std::string::npos) << gs_missing.err;

  auto s3 = S3rver::Start();
  ASSERT_TRUE(s3.ok()) << s3.status();
  ASSERT_TRUE((*s3)->CreateBucket("data").ok());
  ASSERT_TRUE((*s3)->PutObject("data", "train/part-0.tfrecord", shards[0]).ok());
  ASSERT_TRUE((*s3)->PutObject("data", "train/part-1.tfrecord", shards[1]).ok());
  ASSERT_TRUE((*s3)->PutObject("data", "train/part-notes.txt", decoy).ok());
  const std::string s3_env = fmt::format(
      "AWS_ENDPOINT_URL={} AWS_ACCESS_KEY_ID={} AWS_SECRET_ACCESS_KEY={} AWS_REGION=us-east-1",
      (*s3)->endpoint(), S3rver::kAccessKey, S3rver::kSecretKey);
  ProgramRun aws = Tool(dir, "stat 's3://data/train/part-*.tfrecord'", s3_env);
  EXPECT_EQ(aws.exit_code, 0) << aws.err;
  EXPECT_EQ(aws.out, want);
}

TEST(DataechoToolTest, StatErrorsGoToStderrWithTheCodeName) {
  TempDir dir;
  std::string bytes;
  for (int i = 0; i < 3; ++i) AppendTFRecord(&bytes, "record" + std::to_string(i));
  bytes[(7 + 16) + 12] ^= 1;  // payload of record 1 (records are 7 + 16 bytes)
  testing::WriteFileOrDie(dir.File("bad"), bytes);
  ProgramRun r = Tool(dir, "stat " + dir.File("bad"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("DATA_LOSS: corrupted record at " + dir.File("bad") + ":23"),
            std::string::npos)
      << r.err;

  ProgramRun skip = Tool(dir, "stat --skip_corrupt " + dir.File("bad"));
  EXPECT_EQ(skip.exit_code, 0) << skip.err;
  const uint64_t sum = uint64_t{Crc32c("record0")} + Crc32c("record2");
  EXPECT_EQ(
      skip.out,
      fmt::format(
          "{{\"records\": 2, \"payload_bytes\": 14, \"crc32c_sum\": {}, \"skipped_corrupt\": 1}}\n",
          sum));
  EXPECT_EQ(Tool(dir, "stat --skip_corrupt --max_skipped=0 " + dir.File("bad")).exit_code, 1);

  testing::WriteFileOrDie(dir.File("cut"), bytes.substr(0, 30));
  ProgramRun cut = Tool(dir, "stat " + dir.File("cut"));
  EXPECT_EQ(cut.exit_code, 1);
  EXPECT_NE(cut.err.find("DATA_LOSS: truncated record at " + dir.File("cut") + ":23"),
            std::string::npos)
      << cut.err;

  ProgramRun missing = Tool(dir, "stat " + dir.File("missing"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("NOT_FOUND"), std::string::npos) << missing.err;
}

TEST(DataechoToolTest, UsageAndHelp) {
  TempDir dir;
  for (const char* args : {"--help", "stat --help", "convert --help", "stat -h"}) {
    ProgramRun r = Tool(dir, args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_EQ(r.out.rfind("Usage: dataecho", 0), 0u) << args;
  }
  for (const char* args : {"", "frobnicate", "stat", "stat --format=bogus x", "stat --bogus x",
                           "stat --format=fixed:0 x", "stat --format=idx --skip_corrupt x",
                           "convert", "convert --images=a --labels=b --output=c --shards=0"}) {
    ProgramRun r = Tool(dir, args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_FALSE(r.err.empty()) << args;
  }
}

// Each subcommand has its own flags: one of convert is unknown to stat and
// the other way round; each help text lists its own.
TEST(DataechoToolTest, SubcommandsHaveTheirOwnFlags) {
  TempDir dir;
  testing::WriteFileOrDie(dir.File("fixed"), "aaaa");
  for (const char* args : {"stat --shards=2 ", "stat --encoding=raw ", "stat --images=a "}) {
    ProgramRun r = Tool(dir, args + dir.File("fixed"));
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.err.find("unknown flag"), std::string::npos) << args << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
  ProgramRun convert = Tool(dir, "convert --images=a --labels=b --output=c --skip_corrupt");
  EXPECT_EQ(convert.exit_code, 2);
  EXPECT_NE(convert.err.find("unknown flag --skip_corrupt"), std::string::npos) << convert.err;

  const std::string stat_help = Tool(dir, "stat --help").out;
  for (const char* flag :
       {"--format=FORMAT", "--compression=C", "--skip_corrupt", "--max_skipped=K", "-h, --help"}) {
    EXPECT_NE(stat_help.find(flag), std::string::npos) << flag << "\n" << stat_help;
  }
  EXPECT_EQ(stat_help.find("--shards"), std::string::npos) << stat_help;
  const std::string convert_help = Tool(dir, "convert --help").out;
  for (const char* flag : {"--images=URI", "--labels=URI", "--output=PREFIX", "--shards=N",
                           "--encoding=E", "--jpeg_quality=Q", "--compression=C", "--limit=N"}) {
    EXPECT_NE(convert_help.find(flag), std::string::npos) << flag << "\n" << convert_help;
  }
  EXPECT_EQ(convert_help.find("--skip_corrupt"), std::string::npos) << convert_help;
  // The shared --compression flag: each subcommand says its own default.
  EXPECT_NE(stat_help.find("none, gzip, zlib or auto (default: gzip for URIs"), std::string::npos);
  EXPECT_NE(convert_help.find("none (default), gzip or zlib"), std::string::npos);
}

// Flags are Abseil flags: a boolean also takes =true/=false, a value that is
// not of the flag's type is a usage error naming it.
TEST(DataechoToolTest, FlagValues) {
  TempDir dir;
  std::string bytes;
  AppendTFRecord(&bytes, "record0");
  testing::WriteFileOrDie(dir.File("one"), bytes);
  const std::string want = fmt::format(
      "{{\"records\": 1, \"payload_bytes\": 7, \"crc32c_sum\": {}, \"skipped_corrupt\": 0}}\n",
      Crc32c("record0"));
  for (const char* flags : {"--skip_corrupt=false", "--skip_corrupt=true", "--skip_corrupt",
                            "--max_skipped=0 --compression=none", "-- "}) {
    ProgramRun r = Tool(dir, fmt::format("stat {} {}", flags, dir.File("one")));
    EXPECT_EQ(r.exit_code, 0) << flags << r.err;
    EXPECT_EQ(r.out, want) << flags;
  }
  for (const char* args :
       {"stat --max_skipped=many x", "stat --max_skipped x", "stat --skip_corrupt=maybe x",
        "stat --compression= x", "convert --images=a --labels=b --output=c --limit=-1"}) {
    ProgramRun r = Tool(dir, args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err.rfind("dataecho ", 0), 0u) << args << r.err;
    const std::string flag = std::string(args).substr(std::string(args).rfind("--"));
    EXPECT_NE(r.err.find(flag.substr(0, flag.find_first_of("= "))), std::string::npos)
        << args << r.err;
  }
}

TEST(DataechoToolTest, StatFixedAndIdx) {
  TempDir dir;
  testing::WriteFileOrDie(dir.File("fixed"), "aaaabbbbcccc");
  ProgramRun r = Tool(dir, "stat --format=fixed:4 " + dir.File("fixed"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(
      r.out,
      fmt::format(
          "{{\"records\": 3, \"payload_bytes\": 12, \"crc32c_sum\": {}, \"skipped_corrupt\": 0}}\n",
          uint64_t{Crc32c("aaaa")} + Crc32c("bbbb") + Crc32c("cccc")));
  EXPECT_EQ(Tool(dir, "stat --format=fixed:5 " + dir.File("fixed")).exit_code, 1);
  testing::WriteFileOrDie(dir.File("labels.idx"),
                          std::string("\0\0\x08\x01\0\0\0\x03\x01\x02\x03", 11));
  ProgramRun idx = Tool(dir, "stat --format=idx " + dir.File("labels.idx"));
  EXPECT_EQ(idx.exit_code, 0) << idx.err;
  EXPECT_EQ(idx.out.rfind("{\"records\": 3, \"payload_bytes\": 3,", 0), 0u) << idx.out;
}

TEST(DataechoToolTest, ConvertIdxToShardsReadableByDecodeImageRecord) {
  TempDir dir;
  // 7 images of 3x2 and labels.
  std::string images("\0\0\x08\x03\0\0\0\x07\0\0\0\x03\0\0\0\x02", 16),
      labels("\0\0\x08\x01\0\0\0\x07", 8);
  for (int r = 0; r < 7; ++r) {
    for (int i = 0; i < 6; ++i) images += static_cast<char>(r * 10 + i);
    labels += static_cast<char>(r % 10);
  }
  testing::WriteFileOrDie(dir.File("images"), images);
  testing::WriteFileOrDie(dir.File("labels.gz"), testing::Gzip(labels));
  for (const char* encoding : {"raw", "jpeg"}) {
    ProgramRun r = Tool(
        dir, fmt::format("convert --images={} --labels={} --output={} --shards=3 --encoding={}",
                         dir.File("images"), dir.File("labels.gz"), dir.File(encoding), encoding));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("{\"records\": 7, \"shards\": 3,", 0), 0u) << r.out;
    std::vector<std::string> shards;
    for (int s = 0; s < 3; ++s)
      shards.push_back(dir.File(fmt::format("{}-{:05d}-of-00003.tfrecord", encoding, s)));
    auto source = MakeTFRecordSource(OpenObjectStore(), shards);
    std::vector<int64_t> labels_seen;
    while (true) {
      auto next = source->Next();
      ASSERT_TRUE(next.ok()) << next.status();
      if (!next->has_value()) break;
      auto ex = DecodeImageRecord(**next);
      ASSERT_TRUE(ex.ok()) << ex.status();
      EXPECT_EQ(ex->components[0].shape(), Shape({3, 2, 1}));
      if (std::string(encoding) == "raw") {
        EXPECT_EQ(ex->components[0].buffer().data()[1], ex->label * 10 + 1);
      }
      labels_seen.push_back(ex->label);
    }
    // Example i went to shard i % 3: shard 0 holds 0, 3, 6; shard 1 holds 1, 4; shard 2 holds 2, 5.
    EXPECT_EQ(labels_seen, (std::vector<int64_t>{0, 3, 6, 1, 4, 2, 5})) << encoding;
  }
}

}  // namespace
}  // namespace dataecho
