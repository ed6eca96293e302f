// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// s3rver.h: runs the s3rver S3 emulator (npm, installed by scripts/setup.sh
// into tests/s3rver) on a free loopback port for the life of the object,
// and writes objects into it with signed PUTs.
//
//   auto s3 = dataecho::testing::S3rver::Start();
//   (*s3)->CreateBucket("b");
//   (*s3)->PutObject("b", "train/part-0", bytes);
//   // s3://b/train/part-0 through OpenObjectStore() with
//   // s3.endpoint = (*s3)->endpoint(), keys S3rver::kAccessKey/kSecretKey.
//
// Thread safety: not thread-safe (set up from one thread).
#ifndef DATAECHO_TESTS_SUPPORT_S3RVER_H_
#define DATAECHO_TESTS_SUPPORT_S3RVER_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace dataecho::testing {

class S3rver {
 public:
  // s3rver's built-in credentials.
  static constexpr const char* kAccessKey = "S3RVER";
  static constexpr const char* kSecretKey = "S3RVER";

  // The s3rver launcher script, or "" when it is not installed.
  static std::string Binary();

  // Starts s3rver and waits until it accepts connections.
  static absl::StatusOr<std::unique_ptr<S3rver>> Start();
  ~S3rver();  // stops the process and removes its data directory

  // "http://127.0.0.1:PORT"
  std::string endpoint() const;

  absl::Status CreateBucket(const std::string& bucket);
  absl::Status PutObject(const std::string& bucket, const std::string& key,
                         const std::string& bytes);

 private:
  S3rver() = default;
  absl::Status Put(const std::string& path, const std::string& bytes);

  pid_t pid_ = -1;
  int port_ = 0;
  std::string data_dir_;
};

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTS_SUPPORT_S3RVER_H_
