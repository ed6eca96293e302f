// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "tfrecord_length.h"

#include <pybind11/pybind11.h>

#include <map>
#include <tuple>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "dataecho/formats/tfrecord_index.h"
#include "status.h"

namespace dataecho::python {
namespace {

// Records per file version: (uri, size, version) -> count.
struct CountCache {
  absl::Mutex mu;
  std::map<std::tuple<std::string, uint64_t, std::string>, int64_t> counts ABSL_GUARDED_BY(mu);
};

CountCache& Cache() {
  static CountCache* cache = new CountCache;  // never destroyed (used at exit)
  return *cache;
}

}  // namespace

absl::StatusOr<int64_t> CountTFRecords(ObjectStore& store, const std::string& uri,
                                       const TFRecordReaderOptions& options) {
  absl::StatusOr<ObjectInfo> info = store.Stat(uri);
  if (!info.ok()) return info.status();
  auto key = std::make_tuple(uri, info->size, info->version);
  CountCache& cache = Cache();
  {
    absl::MutexLock lock(&cache.mu);
    if (auto it = cache.counts.find(key); it != cache.counts.end()) return it->second;
  }
  absl::StatusOr<TFRecordIndex> index =
      ScanTFRecordIndex(store, uri, TFRecordScan::kStream, options);
  if (!index.ok()) return index.status();
  const auto n = static_cast<int64_t>(index->records());
  absl::MutexLock lock(&cache.mu);
  cache.counts[std::move(key)] = n;
  return n;
}

Length TFRecordLength(std::shared_ptr<ObjectStore> store, std::vector<std::string> uris,
                      TFRecordReaderOptions options) {
  return Length::Deferred(
      [store = std::move(store), uris = std::move(uris), options = std::move(options)]() -> Length {
        int64_t total = 0;
        absl::Status error;
        {
          pybind11::gil_scoped_release nogil;
          for (const std::string& uri : uris) {
            absl::StatusOr<int64_t> n = CountTFRecords(*store, uri, options);
            if (!n.ok()) {
              error = n.status();
              break;
            }
            total += *n;
          }
        }
        CheckOk(error);
        return Length::Known(total);
      });
}

}  // namespace dataecho::python
