// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Built against an installed dataecho through pkg-config only: writes a
// gzip-compressed TFRecord file of JPEG image records (zlib, libjpeg-turbo),
// reads it back through OpenObjectStore() (the store behind every scheme,
// libcurl included), echoes it, and prints the library version and counts.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dataecho/dataecho.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/version.h"

namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string path =
      std::string(tmp != nullptr ? tmp : "/tmp") + "/dataecho_pkg_config_consumer.tfrecord.gz";
  auto writer =
      dataecho::TFRecordWriter::Create(path, {.compression = dataecho::Compression::kGzip});
  if (!writer.ok()) return Fail(writer.status());
  for (int i = 0; i < 8; ++i) {
    dataecho::MutableBuffer pixels(16 * 16 * 3);
    for (size_t j = 0; j < pixels.size(); ++j) pixels.data()[j] = static_cast<uint8_t>(i * 16 + j);
    auto image =
        dataecho::Tensor::Make(dataecho::DType::kUInt8, {16, 16, 3}, std::move(pixels).Freeze());
    if (!image.ok()) return Fail(image.status());
    auto payload =
        dataecho::EncodeImageRecord(*image, i, {.encoding = dataecho::ImageEncoding::kJpeg});
    if (!payload.ok()) return Fail(payload.status());
    if (absl::Status s = (*writer)->Write(*payload); !s.ok()) return Fail(s);
  }
  if (absl::Status s = (*writer)->Close(); !s.ok()) return Fail(s);

  std::shared_ptr<dataecho::ObjectStore> store = dataecho::OpenObjectStore();
  auto pipeline = dataecho::From(dataecho::MakeTFRecordSource(
                                     store, {path}, {.compression = dataecho::Compression::kAuto}))
                      .Map([](dataecho::Record r) { return dataecho::DecodeImageRecord(r); })
                      .Echo({.factor = 2.0});
  int64_t emitted = 0, fresh = 0;
  while (true) {
    auto next = pipeline.Next();
    if (!next.ok()) return Fail(next.status());
    if (!next->has_value()) break;
    ++emitted;
    fresh += (*next)->fresh() ? 1 : 0;
  }
  std::remove(path.c_str());
  std::printf("dataecho %s (headers %s): %lld fresh, %lld emitted\n",
              std::string(dataecho::Version()).c_str(), DATAECHO_VERSION_STRING,
              static_cast<long long>(fresh), static_cast<long long>(emitted));
  return fresh == 8 && emitted == 16 ? 0 : 1;
}
