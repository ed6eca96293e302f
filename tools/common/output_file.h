// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// output_file.h: a file a program writes when its work is done (a --json
// or --plot result), opened when the program starts.
//
// Open() creates the file (or opens the existing one, leaving its contents)
// so that a path that cannot be written fails before a long run, not after
// it. Write() replaces the contents. A file that Open() created and that was
// never written is removed when the OutputFile goes, so a failed run leaves
// no empty result behind.
//
//   absl::StatusOr<tools::OutputFile> json = tools::OutputFile::Open("json", path);
//   if (!json.ok()) return UsageError(json.status());     // before the run
//   ...                                                   // the run
//   if (absl::Status s = json->Write(text); !s.ok()) return Fail(s);
//
// Not thread-safe.
#ifndef DATAECHO_TOOLS_COMMON_OUTPUT_FILE_H_
#define DATAECHO_TOOLS_COMMON_OUTPUT_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace dataecho::tools {

class OutputFile {
 public:
  // An empty `path` gives an OutputFile that writes nothing. INVALID_ARGUMENT
  // "--<flag>=<path>: cannot write it: <reason>" if the file cannot be
  // opened for writing.
  static absl::StatusOr<OutputFile> Open(std::string_view flag, std::string path);

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&& other) = delete;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  // Replaces the file's contents with `text` and closes it.
  absl::Status Write(std::string_view text);

 private:
  OutputFile(std::string path, int fd, bool created)
      : path_(std::move(path)), fd_(fd), created_(created) {}

  std::string path_;
  int fd_ = -1;           // -1: nothing (left) to write
  bool created_ = false;  // Open() created the file
};

}  // namespace dataecho::tools

#endif  // DATAECHO_TOOLS_COMMON_OUTPUT_FILE_H_
