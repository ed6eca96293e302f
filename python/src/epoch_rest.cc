// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "epoch_rest.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "dataecho/record.h"
#include "dataecho/storage/object_store.h"
#include "status.h"

namespace dataecho::python {
namespace {

[[noreturn]] void Bad(const std::string& why) {
  ThrowStatus(absl::InvalidArgumentError(
      absl::StrCat("the rest of an interrupted epoch (a resumed dataecho.torch.DataLoader's "
                   "shard): ",
                   why)));
}

int IntField(const py::dict& d, const char* key, int64_t low, int64_t high) {
  if (!d.contains(key)) Bad(absl::StrCat("no '", key, "'"));
  const py::object v = d[key];
  if (py::isinstance<py::bool_>(v) || !py::isinstance<py::int_>(v)) {
    Bad(absl::StrCat("'", key, "' is not an int"));
  }
  const auto n = v.cast<int64_t>();
  if (n < low || n > high)
    Bad(absl::StrCat("'", key, "' ", n, " is not in [", low, ", ", high, "]"));
  return static_cast<int>(n);
}

}  // namespace

bool EpochRest::InPlay(uint64_t file) const {
  return std::binary_search(shards.begin(), shards.end(),
                            static_cast<int>(file % static_cast<uint64_t>(world_size)));
}

EpochRest EpochRestFrom(const py::handle& handle) {
  if (!py::isinstance<py::dict>(handle)) Bad("not a dict");
  const auto d = py::reinterpret_borrow<py::dict>(handle);
  constexpr int64_t kMaxWorld = int64_t{1} << 20;
  EpochRest rest;
  rest.world_size = IntField(d, "world_size", 1, kMaxWorld);
  rest.parts = IntField(d, "parts", 1, kMaxWorld);
  rest.part = IntField(d, "part", 0, rest.parts - 1);
  if (!d.contains("shards") || !py::isinstance<py::sequence>(d["shards"])) Bad("no 'shards' list");
  for (const py::handle s : d["shards"]) {
    if (py::isinstance<py::bool_>(s) || !py::isinstance<py::int_>(s)) Bad("a shard is not an int");
    const auto k = s.cast<int64_t>();
    if (k < 0 || k >= rest.world_size) {
      Bad(absl::StrCat("shard ", k, " of world_size ", rest.world_size));
    }
    rest.shards.push_back(static_cast<int>(k));
  }
  std::sort(rest.shards.begin(), rest.shards.end());
  rest.shards.erase(std::unique(rest.shards.begin(), rest.shards.end()), rest.shards.end());
  if (!d.contains("taken") || !py::isinstance<py::bytes>(d["taken"])) Bad("'taken' is not bytes");
  const std::string taken = d["taken"].cast<std::string>();
  if (taken.size() % 16 != 0) Bad(absl::StrCat("'taken' has ", taken.size(), " bytes"));
  for (size_t i = 0; i < taken.size(); i += 16) {
    uint64_t run[2];
    std::memcpy(run, taken.data() + i, sizeof(run));  // little-endian, as numpy's '<u8'
    if (run[0] >= run[1] || (!rest.taken.empty() && run[0] <= rest.taken.back().second) ||
        (run[1] - 1) >> kRecordIndexBits != run[0] >> kRecordIndexBits) {
      Bad(absl::StrCat("'taken' run ", i / 16, " [", run[0], ", ", run[1],
                       ") is empty, out of order or spans two files"));
    }
    rest.taken.emplace_back(run[0], run[1]);
  }
  return rest;
}

absl::StatusOr<std::vector<RecordRange>> RestRanges(const EpochRest& rest,
                                                    const std::vector<uint64_t>& counts,
                                                    const std::vector<std::string>& uris) {
  // The records not taken, as ranges in (file, record) order.
  std::vector<RecordRange> open;
  uint64_t total = 0;
  auto run = rest.taken.begin();
  for (uint64_t file = 0; file < counts.size(); ++file) {
    const uint64_t first = file << kRecordIndexBits;
    if (!rest.InPlay(file)) {
      if (run != rest.taken.end() && run->first >> kRecordIndexBits == file) {
        return absl::DataLossError(
            absl::StrCat("the state says the loop took record ", run->first - first, " of ",
                         RedactUri(uris[file]),
                         ", a file no worker of the saved layout read (the files changed "
                         "since the state was saved)"));
      }
      continue;
    }
    uint64_t next = 0;  // the first record of `file` not yet covered
    for (; run != rest.taken.end() && run->first >> kRecordIndexBits == file; ++run) {
      const uint64_t begin = run->first - first, end = run->second - first;
      if (end > counts[file]) {
        return absl::DataLossError(absl::StrCat(
            "the state says the loop took record ", end - 1, " of ", RedactUri(uris[file]),
            ", which has ", counts[file], " records (the file changed since the state was saved)"));
      }
      if (begin > next) open.push_back({.file = file, .begin = next, .end = begin});
      next = end;
    }
    if (counts[file] > next) open.push_back({.file = file, .begin = next, .end = counts[file]});
  }
  if (run != rest.taken.end()) {
    return absl::DataLossError(absl::StrCat("the state says the loop took records of file number ",
                                            run->first >> kRecordIndexBits,
                                            ", but the pattern names ", counts.size(),
                                            " files (the files changed since the state "
                                            "was saved)"));
  }
  for (const RecordRange& r : open) total += r.size();
  // This part's share [lo, hi) of the `total` records, cut out of `open`.
  const auto parts = static_cast<uint64_t>(rest.parts), part = static_cast<uint64_t>(rest.part);
  const uint64_t lo = total / parts * part + std::min(part, total % parts);
  const uint64_t hi = lo + total / parts + (part < total % parts ? 1 : 0);
  std::vector<RecordRange> mine;
  uint64_t at = 0;
  for (const RecordRange& r : open) {
    const uint64_t b = std::max(at, lo), e = std::min(at + r.size(), hi);
    if (b < e)
      mine.push_back({.file = r.file, .begin = r.begin + (b - at), .end = r.begin + (e - at)});
    at += r.size();
  }
  return mine;
}

std::optional<EpochRest> TakeShardArg(const py::object& shard, ShardOptions* options,
                                      const char* caller) {
  if (shard.is_none()) return std::nullopt;
  if (!py::isinstance<Shard>(shard)) {
    throw py::type_error(
        absl::StrCat(caller, "(): shard must be a dataecho.Shard, got ",
                     py::str(py::type::of(shard).attr("__name__")).cast<std::string>()));
  }
  if (options->rank != -1 || options->world_size != -1) {
    throw py::type_error(
        absl::StrCat(caller, "(): give shard= or rank= and world_size=, not both"));
  }
  const auto& s = shard.cast<const Shard&>();
  options->rank = s.rank;
  options->world_size = s.world_size;
  options->allow_empty = options->allow_empty || s.allow_empty;
  const py::object rest = py::getattr(shard, "rest", py::none());
  if (rest.is_none()) return std::nullopt;
  EpochRest out = EpochRestFrom(rest);
  shard.attr("rest_taken") = true;
  return out;
}

std::shared_ptr<PipelineHandle> RestSource(std::vector<std::string> uris, const EpochRest& rest,
                                           const RecordCounter& count,
                                           const RangeSourceMaker& make) {
  absl::StatusOr<std::vector<RecordRange>> ranges;
  {
    py::gil_scoped_release nogil;
    std::vector<uint64_t> counts(uris.size(), 0);
    absl::Status status;
    for (uint64_t file = 0; file < uris.size() && status.ok(); ++file) {
      if (!rest.InPlay(file)) continue;
      absl::StatusOr<uint64_t> n = count(uris[file]);
      if (n.ok()) {
        counts[file] = *n;
      } else {
        status = n.status();
      }
    }
    ranges = status.ok() ? RestRanges(rest, counts, uris) : status;
  }
  std::vector<RecordRange> mine = ValueOrThrow(std::move(ranges));
  uint64_t records = 0;
  for (const RecordRange& r : mine) records += r.size();
  auto out = MakeHandle(Pipeline<Record>(make(std::move(uris), std::move(mine))));
  out->set_length(Length::Known(static_cast<int64_t>(records)));
  return out;
}

}  // namespace dataecho::python
