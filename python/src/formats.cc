// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Writing data from Python: TFRecord files, image-record payloads, CRC-32C.
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "dataecho/crc32c.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "elements.h"
#include "paths.h"
#include "status.h"

namespace dataecho::python {

void RegisterFormats(py::module_& m) {
  m.def(
      "crc32c",
      [](const py::buffer& data) {
        const py::buffer_info info = data.request();
        const size_t n = static_cast<size_t>(info.size * info.itemsize);
        py::gil_scoped_release nogil;
        return Crc32c(info.ptr, n);
      },
      py::arg("data"),
      "CRC-32C (Castagnoli) of a bytes-like object (contiguous): the checksum TFRecord uses, "
      "unmasked. Handy to compare batches by digest.");
  m.def(
      "encode_image_record",
      [](const py::object& image, int64_t label, ImageEncoding encoding, int jpeg_quality) {
        const Tensor t = TensorFromArray(image);
        return py::bytes(ValueOrThrow(EncodeImageRecord(t, label, {encoding, jpeg_quality})));
      },
      py::arg("image"), py::arg("label") = 0, py::arg("encoding") = "raw",
      py::arg("jpeg_quality") = 90,
      "The image-record payload (the layout `dataecho convert` writes; decode_image_record "
      "reads it) of a uint8 [H, W, C] or [H, W] image: encoding 'raw' or 'jpeg'.");
  m.def(
      "write_tfrecord",
      [](const py::object& path_arg, const py::iterable& records, Compression compression,
         int compression_level) {
        const std::string path = PathBytes(path_arg, "write_tfrecord(): path");
        std::unique_ptr<TFRecordWriter> writer =
            ValueOrThrow(TFRecordWriter::Create(path, {compression, compression_level}));
        for (const py::handle r : records) {
          CheckOk(writer->Write(r.cast<std::string>()));
        }
        CheckOk(writer->Close());
        return writer->records();
      },
      py::arg("path"), py::arg("records"), py::arg("compression") = "none",
      py::arg("compression_level") = 6,
      "Writes the byte strings `records` as a TFRecord file at a local path; returns the "
      "count. compression: 'none', 'gzip', 'zlib' or 'auto' (by the suffix).");
}

}  // namespace dataecho::python
