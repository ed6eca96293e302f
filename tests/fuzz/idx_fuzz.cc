// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Fuzzes IDX parsing: the header parser on the raw input, the row reader on
// the input as a file (plain and gzip), and the images+labels zip with the
// input as the images file.
#include <cstdint>
#include <memory>
#include <string_view>

#include "dataecho/idx.h"
#include "dataecho/object_store.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::shared_ptr<dataecho::ObjectStore> store = dataecho::OpenObjectStore();
  (void)dataecho::ParseIdxHeader(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  const std::string path = dataecho::fuzz::WriteScratch("idx", data, size);
  for (dataecho::Compression c : {dataecho::Compression::kNone, dataecho::Compression::kGzip}) {
    auto rows = dataecho::MakeIdxRecordSource(store, {path}, {.compression = c, .buffer_size = 4096, .read_ahead = 4096});
    while (true) {
      auto next = rows->Next();
      if (!next.ok() || !next->has_value()) break;
    }
  }
  static const uint8_t kLabels[] = {0, 0, 8, 1, 0, 0, 0, 2, 1, 2};
  const std::string labels = dataecho::fuzz::WriteScratch("labels", kLabels, sizeof(kLabels));
  auto examples = dataecho::MakeIdxSource(store, path, labels, {.compression = dataecho::Compression::kNone, .buffer_size = 4096, .read_ahead = 4096});
  while (true) {
    auto next = examples->Next();
    if (!next.ok() || !next->has_value()) break;
  }
  return 0;
}
