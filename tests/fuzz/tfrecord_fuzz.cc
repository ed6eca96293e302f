// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Fuzzes the TFRecord reader: the input is a file (plain; also read as gzip
// and zlib) read with and without skip_corrupt. Every outcome must be records
// and then a clean end or a status; nothing may crash, hang or allocate a
// length the file cannot hold.
#include <cstdint>
#include <cstdio>
#include <memory>

#include "dataecho/object_store.h"
#include "dataecho/tfrecord.h"
#include "fuzz_file.h"

namespace {

void ReadAll(const std::shared_ptr<dataecho::ObjectStore>& store, const std::string& path,
             const dataecho::TFRecordReaderOptions& options) {
  auto source = dataecho::MakeTFRecordSource(store, {path}, options);
  for (int i = 0; i < 1 << 20; ++i) {
    auto next = source->Next();
    if (!next.ok() || !next->has_value()) return;
  }
  std::abort();  // more records than the input could hold: the reader spins
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::shared_ptr<dataecho::ObjectStore> store = dataecho::OpenObjectStore();
  const std::string path = dataecho::fuzz::WriteScratch("tfrecord", data, size);
  for (bool skip : {false, true}) {
    dataecho::TFRecordReaderOptions options;
    options.skip_corrupt = skip;
    options.max_skipped = 100;
    options.max_record_bytes = 1 << 24;
    options.buffer_size = 4096;  // small buffers: many refills, fast runs
    options.read_ahead = 4096;
    ReadAll(store, path, options);
    options.compression = dataecho::Compression::kGzip;
    ReadAll(store, path, options);
  }
  dataecho::TFRecordReaderOptions zlib;
  zlib.compression = dataecho::Compression::kZlib;
  zlib.max_record_bytes = 1 << 24;
  zlib.buffer_size = 4096;
  zlib.read_ahead = 4096;
  ReadAll(store, path, zlib);
  return 0;
}
