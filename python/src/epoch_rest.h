// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/epoch_rest.h (internal): the rest of an interrupted epoch, read
// by a DataLoader resumed with another number of workers or ranks
// (dataecho.torch.DataLoader's elastic resume, docs/python.md).
//
// A file source split by file (from_tfrecord(rank=, world_size=): worker k of
// W reads files k, k + W, ...) trains its records shuffled, so what the loop
// took is not a prefix of anything. The loader records the records it took
// (their source_index) and, at a resume under another layout, hands every new
// worker a share of the records not taken of the files that were in play:
//
//   rest = EpochRestFrom(shard.attr("rest"));     // from the loader's state
//   auto counts = ...;                             // records per file in play
//   std::vector<RecordRange> mine = RestRanges(rest, counts);
//
// The records not taken are in (file, record) order and split into `parts`
// contiguous shares, balanced to one record; share `part` is this worker's.
// Every record of the files in play is then read exactly once across the runs.
#ifndef DATAECHO_PYTHON_SRC_EPOCH_REST_H_
#define DATAECHO_PYTHON_SRC_EPOCH_REST_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/storage/epoch_plan.h"
#include "dataecho/storage/sharding.h"
#include "py_pipeline.h"

namespace dataecho::python {

struct EpochRest {
  // The layout that read the epoch's start: `world_size` shards, file i read by
  // shard i % world_size; `shards`: those whose files are in play (sorted).
  int world_size = 1;
  std::vector<int> shards;
  // The source indices the loop took, as sorted, disjoint runs [begin, end).
  std::vector<std::pair<uint64_t, uint64_t>> taken;
  // This worker's share of the rest: `part` of `parts`.
  int part = 0;
  int parts = 1;

  bool InPlay(uint64_t file) const;
};

// From the dict dataecho.torch puts on a resumed worker's shard ("world_size",
// "shards", "taken": bytes of little-endian uint64 pairs, "part", "parts").
// Raises InvalidArgumentError naming the field that is wrong.
EpochRest EpochRestFrom(const pybind11::handle& rest);

// This worker's ranges of the rest; `counts[i]`: the records of file i (read
// only for files in play). DATA_LOSS, naming `uris`' file, if a taken record
// lies past its file's end or in a file not in play (the files changed since
// the state was saved).
absl::StatusOr<std::vector<RecordRange>> RestRanges(const EpochRest& rest,
                                                    const std::vector<uint64_t>& counts,
                                                    const std::vector<std::string>& uris);

// A source's shard= argument: a dataecho.Shard's rank and world_size into
// `options` (TypeError with rank= or world_size= too), and its `rest` if a
// resumed DataLoader put one on it (then marked taken: `rest_taken = True`).
std::optional<EpochRest> TakeShardArg(const pybind11::object& shard, ShardOptions* options,
                                      const char* caller);

// The pipeline of this worker's share of `rest` over `uris` (all the files
// the patterns name, in order): `count` gives a file's records, `make` the
// source over the ranges. Its length is known.
using RecordCounter = std::function<absl::StatusOr<uint64_t>(const std::string& uri)>;
using RangeSourceMaker =
    std::function<StagePtr<Record>(std::vector<std::string> uris, std::vector<RecordRange>)>;
std::shared_ptr<PipelineHandle> RestSource(std::vector<std::string> uris, const EpochRest& rest,
                                           const RecordCounter& count,
                                           const RangeSourceMaker& make);

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_EPOCH_REST_H_
