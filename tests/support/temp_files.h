// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// temp_files.h: a per-test temporary directory and small file helpers.
#ifndef DATAECHO_TESTS_SUPPORT_TEMP_FILES_H_
#define DATAECHO_TESTS_SUPPORT_TEMP_FILES_H_

#include <string>
#include <string_view>

namespace dataecho::testing {

// A fresh directory under the test temp dir, removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name
  std::string File(std::string_view name) const;

 private:
  std::string path_;
};

// Writes `bytes` to `path` (truncating); aborts the test binary on failure.
void WriteFileOrDie(const std::string& path, std::string_view bytes);
// The whole file; aborts on failure.
std::string ReadFileOrDie(const std::string& path);
// gzip (RFC 1952) of `bytes`.
std::string Gzip(std::string_view bytes);

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTS_SUPPORT_TEMP_FILES_H_
