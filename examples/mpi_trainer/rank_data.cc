// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "mpi_trainer/rank_data.h"

#include <algorithm>
#include <utility>

#include "dataecho/formats/image_record.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"
#include "testing/http_server.h"

namespace rank_data {
namespace {

// "dir/name" -> {"dir", "name"}.
std::pair<std::string, std::string> SplitPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace

absl::StatusOr<std::unique_ptr<trainer::TrainData>> MakeRankData(const RankDataOptions& o,
                                                                 std::vector<RowOrigin>* layout) {
  if (o.uris.size() != o.counts.size() || o.indexes == nullptr ||
      o.indexes->size() != o.uris.size()) {
    return absl::InvalidArgumentError("rank data: one count and one index per shard expected");
  }
  std::shared_ptr<dataecho::ObjectStore> store = dataecho::OpenObjectStore();
  std::unique_ptr<dataecho::testing::HttpServer> server;
  std::vector<std::string> uris = o.uris;
  if (o.latency_ms > 0 && !uris.empty()) {
    const std::string dir = SplitPath(uris[0]).first;
    absl::StatusOr<std::unique_ptr<dataecho::testing::HttpServer>> started =
        dataecho::testing::HttpServer::Start(
            {.directory = dir, .latency = absl::Microseconds(o.latency_ms * 1e3)});
    if (!started.ok()) return started.status();
    server = *std::move(started);
    for (std::string& uri : uris) {
      auto [uri_dir, name] = SplitPath(uri);
      if (uri_dir != dir) {
        return absl::InvalidArgumentError(
            fmt::format("--latency_ms serves one directory: {} is not in {}", uri, dir));
      }
      uri = server->url() + "/" + name;
    }
  }
  // Every epoch this run reads, in one range source whose "files" are the
  // ranges themselves: entry p of its list is range p's shard, with the part
  // of the shard's index that covers the range, so that the range's records
  // are numbered from 0 and their source index names the range (p << 40 |
  // i). The source's options (and so the shape of a checkpoint of the rank's
  // pipeline) stay the same all run long, no factory has to know an epoch,
  // and a record referenced by a Shuffle or Echo buffer is read again from
  // its range. `layout` maps p back to the epoch, the shard and the record.
  // Epoch k: this rank's slice of the job's order of epoch k (after a resume:
  // its share of the leftover, then of the plan's rest), read in order
  // (cycle_length 1) as the plan's resume rule needs.
  const uint64_t first = o.resume.first_epoch;
  uint64_t total = 0;
  for (uint64_t c : o.counts) total += c;
  uint64_t end = first;
  if (o.epochs > 0) {
    end = std::max<uint64_t>(first, static_cast<uint64_t>(o.epochs));
  } else if (total > 0) {
    // Enough epochs for the fresh budget (the job stops at it), one to spare.
    end = first + (static_cast<uint64_t>(o.train.fresh_budget) + total - 1) / total + 1;
  }
  std::vector<std::string> range_uris;
  auto range_indexes = std::make_shared<std::vector<dataecho::TFRecordIndex>>();
  std::vector<dataecho::RecordRange> ranges;
  layout->clear();
  for (uint64_t k = first; k < end; ++k) {
    absl::StatusOr<std::vector<dataecho::RecordRange>> mine =
        elastic::RankRanges(o.counts, o.plan, o.resume, k, o.rank, o.world_size);
    if (!mine.ok()) return mine.status();
    for (const dataecho::RecordRange& range : *mine) {
      const std::vector<uint64_t>& offsets = (*o.indexes)[range.file].offsets;
      if (range.end >= offsets.size()) {
        return absl::InvalidArgumentError(
            fmt::format("rank data: records [{}, {}) of {}: its index has {} records", range.begin,
                        range.end, uris[range.file], offsets.empty() ? 0 : offsets.size() - 1));
      }
      const uint64_t p = ranges.size();
      ranges.push_back({.file = p, .begin = 0, .end = range.size()});
      range_uris.push_back(uris[range.file]);
      range_indexes->push_back({.offsets = std::vector<uint64_t>(
                                    offsets.begin() + static_cast<std::ptrdiff_t>(range.begin),
                                    offsets.begin() + static_cast<std::ptrdiff_t>(range.end) + 1)});
      layout->push_back({.epoch = k, .file = range.file, .record = range.begin});
    }
  }
  dataecho::Pipeline<dataecho::Example> upstream =
      dataecho::From(dataecho::MakeTFRecordRangeSource(store, std::move(range_uris),
                                                       std::move(ranges), std::move(range_indexes)))
          .Map([](const dataecho::Record& r) { return dataecho::DecodeImageRecord(r); },
               {.parallelism = o.train.decode_parallelism, .name = "decode"});
  dataecho::Pipeline<dataecho::Batch> batches =
      trainer::EchoedTrainBatches(std::move(upstream), o.train, /*drop_remainder=*/false);
  if (!batches.status().ok()) return batches.status();
  return trainer::PipelineTrainData(std::move(server), std::move(batches));
}

RowOrigin Origin(uint64_t source_index, const std::vector<RowOrigin>& layout) {
  const uint64_t p = source_index >> dataecho::kRecordIndexBits;
  const uint64_t i = source_index & ((uint64_t{1} << dataecho::kRecordIndexBits) - 1);
  if (p >= layout.size()) return {UINT64_MAX, UINT64_MAX, i};
  return {layout[p].epoch, layout[p].file, layout[p].record + i};
}

absl::StatusOr<std::vector<dataecho::TFRecordIndex>> IndexShards(
    const std::vector<std::string>& uris) {
  std::unique_ptr<dataecho::ObjectStore> store = dataecho::OpenObjectStore();
  std::vector<dataecho::TFRecordIndex> out;
  for (const std::string& uri : uris) {
    absl::StatusOr<dataecho::TFRecordIndex> index =
        dataecho::ScanTFRecordIndex(*store, uri, dataecho::TFRecordScan::kStream);
    if (!index.ok()) return index.status();
    out.push_back(*std::move(index));
  }
  return out;
}

std::vector<uint64_t> FlattenIndexes(const std::vector<dataecho::TFRecordIndex>& indexes) {
  std::vector<uint64_t> flat = {indexes.size()};
  for (const dataecho::TFRecordIndex& index : indexes) {
    flat.push_back(index.offsets.size());
    flat.insert(flat.end(), index.offsets.begin(), index.offsets.end());
  }
  return flat;
}

absl::StatusOr<std::vector<dataecho::TFRecordIndex>> UnflattenIndexes(
    const std::vector<uint64_t>& flat) {
  std::vector<dataecho::TFRecordIndex> out;
  size_t at = 0;
  auto take = [&]() -> absl::StatusOr<uint64_t> {
    if (at >= flat.size()) return absl::DataLossError("flattened indexes end early");
    return flat[at++];
  };
  absl::StatusOr<uint64_t> files = take();
  if (!files.ok()) return files.status();
  for (uint64_t f = 0; f < *files; ++f) {
    absl::StatusOr<uint64_t> n = take();
    if (!n.ok()) return n.status();
    if (*n > flat.size() - at) return absl::DataLossError("flattened indexes end early");
    dataecho::TFRecordIndex index;
    index.offsets.assign(flat.begin() + static_cast<std::ptrdiff_t>(at),
                         flat.begin() + static_cast<std::ptrdiff_t>(at + *n));
    at += *n;
    out.push_back(std::move(index));
  }
  return out;
}

}  // namespace rank_data
