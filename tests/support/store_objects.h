// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// store_objects.h: made-up object bytes, reading a stored object to its end,
// and the loopback server that serves them, for the store tests.
#ifndef DATAECHO_TESTS_SUPPORT_STORE_OBJECTS_H_
#define DATAECHO_TESTS_SUPPORT_STORE_OBJECTS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "dataecho/storage/object_store.h"
#include "testing/http_server.h"

namespace dataecho::testing {

// `n` pseudo-random bytes, the same for the same `seed`.
std::string Bytes(size_t n, uint32_t seed);

// Reads `reader` to its end with reads of `step` bytes, appending what it
// reads to `*out` (when not null). Returns the first error, or OK at the end.
absl::Status ReadToEnd(ObjectReader& reader, size_t step, std::string* out = nullptr);

// Opens `uri` in `store` with `read_ahead` and reads it to its end
// (ReadToEnd): the error of the open or of a read, or OK.
absl::Status ReadObject(ObjectStore& store, const std::string& uri, size_t read_ahead, size_t step,
                        std::string* out);

// The loopback HTTP server (testing/http_server.h), started; null (and a
// test failure) if it does not start.
std::unique_ptr<HttpServer> StartServer();

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTS_SUPPORT_STORE_OBJECTS_H_
