// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// slow_upstream.h: TFRecord shards served over loopback HTTP and read through
// a throttled store, to make the trainer's upstream slow on purpose.
//
//   auto slow = trainer::ServeThrottled(local_store, shard_paths, /*examples_per_second=*/7000);
//   // read slow->uris through slow->store; keep slow->server alive meanwhile
//
// Thread safety: the returned store is thread-safe.
#ifndef DATAECHO_EXAMPLES_TRAINER_SLOW_UPSTREAM_H_
#define DATAECHO_EXAMPLES_TRAINER_SLOW_UPSTREAM_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/storage/object_store.h"
#include "testing/http_server.h"

namespace trainer {

struct SlowUpstream {
  std::unique_ptr<dataecho::testing::HttpServer> server;  // serves the shards' directory
  std::shared_ptr<dataecho::ObjectStore> store;           // throttled HTTP client
  std::vector<std::string> uris;                          // http://127.0.0.1:PORT/shard...
};

// Serves the directory of `shards` (local paths, all in one directory) and
// caps the store's bandwidth to `examples_per_second` times the shards'
// mean bytes per record (counted by reading them once through `local`).
// Without `over_http`, no server: the throttled store wraps `local`.
absl::StatusOr<SlowUpstream> ServeThrottled(std::shared_ptr<dataecho::ObjectStore> local,
                                            const std::vector<std::string>& shards,
                                            double examples_per_second, bool over_http = true);

}  // namespace trainer

#endif  // DATAECHO_EXAMPLES_TRAINER_SLOW_UPSTREAM_H_
