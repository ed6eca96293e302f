// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "trainer/slow_upstream.h"

#include <utility>

#include "dataecho/formats/tfrecord.h"
#include "dataecho/record.h"
#include "dataecho/storage/throttled_store.h"
#include "fmt/format.h"

namespace trainer {

absl::StatusOr<SlowUpstream> ServeThrottled(std::shared_ptr<dataecho::ObjectStore> local,
                                            const std::vector<std::string>& shards,
                                            double examples_per_second, bool over_http) {
  if (shards.empty()) return absl::InvalidArgumentError("no shards to serve");
  const std::string dir = shards.front().substr(0, shards.front().rfind('/') + 1);
  uint64_t bytes = 0;
  for (const std::string& f : shards) {
    if (f.compare(0, dir.size(), dir) != 0 || f.find('/', dir.size()) != std::string::npos) {
      return absl::InvalidArgumentError(
          fmt::format("shards must share one directory; {} is not in {}", f, dir));
    }
    absl::StatusOr<dataecho::ObjectInfo> info = local->Stat(f);
    if (!info.ok()) return info.status();
    bytes += info->size;
  }
  int64_t records = 0;
  dataecho::StagePtr<dataecho::Record> counter = dataecho::MakeTFRecordSource(local, shards);
  while (true) {
    absl::StatusOr<std::optional<dataecho::Record>> r = counter->Next();
    if (!r.ok()) return r.status();
    if (!r->has_value()) break;
    ++records;
  }
  if (records == 0) {
    return absl::FailedPreconditionError(fmt::format(
        "no records in {} ({} shard(s))", dataecho::RedactUri(shards.front()), shards.size()));
  }

  SlowUpstream out;
  dataecho::ThrottledStoreOptions throttle;
  throttle.bytes_per_second =
      examples_per_second * static_cast<double>(bytes) / static_cast<double>(records);
  if (!over_http) {
    out.uris = shards;
    out.store = dataecho::NewThrottledStore(std::move(local), throttle);
    return out;
  }
  absl::StatusOr<std::unique_ptr<dataecho::testing::HttpServer>> server =
      dataecho::testing::HttpServer::Start({.directory = dir.empty() ? "." : dir});
  if (!server.ok()) return server.status();
  out.server = *std::move(server);
  for (const std::string& f : shards)
    out.uris.push_back(out.server->url() + "/" + f.substr(dir.size()));
  out.store = dataecho::NewThrottledStore(dataecho::OpenObjectStore(), throttle);
  return out;
}

}  // namespace trainer
