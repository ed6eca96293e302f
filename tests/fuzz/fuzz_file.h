// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// fuzz_file.h: the fuzz targets read their input through the real local
// ObjectStore, from one scratch file per process (in /dev/shm when present).
#ifndef DATAECHO_TESTS_FUZZ_FUZZ_FILE_H_
#define DATAECHO_TESTS_FUZZ_FUZZ_FILE_H_

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace dataecho::fuzz {

// Writes `bytes` to this process's scratch file named `name` and returns its path.
inline std::string WriteScratch(std::string_view name, const uint8_t* data, size_t size) {
  const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : P_tmpdir;
  std::string path =
      std::string(dir) + "/dataecho-fuzz-" + std::to_string(getpid()) + "-" + std::string(name);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0)
    std::abort();
  return path;
}

}  // namespace dataecho::fuzz

#endif  // DATAECHO_TESTS_FUZZ_FUZZ_FILE_H_
