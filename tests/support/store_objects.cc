// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "support/store_objects.h"

#include <cstdint>
#include <utility>

#include "absl/types/span.h"
#include "gtest/gtest.h"

namespace dataecho::testing {

std::string Bytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    s[i] = static_cast<char>(x >> 23);
  }
  return s;
}

absl::Status ReadToEnd(ObjectReader& reader, size_t step, std::string* out) {
  std::string buf(step, '\0');
  while (true) {
    absl::StatusOr<size_t> n =
        reader.Read(absl::MakeSpan(reinterpret_cast<uint8_t*>(buf.data()), buf.size()));
    if (!n.ok()) return n.status();
    if (*n == 0) return absl::OkStatus();
    if (out != nullptr) out->append(buf.data(), *n);
  }
}

absl::Status ReadObject(ObjectStore& store, const std::string& uri, size_t read_ahead, size_t step,
                        std::string* out) {
  ReadOptions options;
  options.read_ahead = read_ahead;
  absl::StatusOr<std::unique_ptr<ObjectReader>> reader = store.Open(uri, options);
  if (!reader.ok()) return reader.status();
  return ReadToEnd(**reader, step, out);
}

std::unique_ptr<HttpServer> StartServer() {
  absl::StatusOr<std::unique_ptr<HttpServer>> s = HttpServer::Start({});
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

}  // namespace dataecho::testing
