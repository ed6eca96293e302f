// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "mpi_trainer/elastic.h"

#include <algorithm>
#include <utility>

#include "dataecho/record.h"
#include "fmt/format.h"

namespace elastic {
namespace {

constexpr uint64_t kRecordMask = (uint64_t{1} << 40) - 1;

std::vector<uint64_t> Offsets(std::span<const uint64_t> counts) {
  std::vector<uint64_t> offsets = {0};
  for (uint64_t c : counts) offsets.push_back(offsets.back() + c);
  return offsets;
}

RecordId FromId(const std::vector<uint64_t>& offsets, uint64_t id) {
  const size_t file =
      static_cast<size_t>(std::upper_bound(offsets.begin(), offsets.end(), id) - offsets.begin()) -
      1;
  return {file, id - offsets[file]};
}

void Append(std::vector<dataecho::RecordRange>& out, uint64_t file, uint64_t begin, uint64_t end) {
  if (begin == end) return;
  if (!out.empty() && out.back().file == file && out.back().end == begin) {
    out.back().end = end;
  } else {
    out.push_back({.file = file, .begin = begin, .end = end});
  }
}

}  // namespace

const EpochResume* JobResume::Find(uint64_t epoch) const {
  for (const EpochResume& e : epochs) {
    if (e.progress.epoch == epoch) return &e;
  }
  return nullptr;
}

absl::StatusOr<std::vector<dataecho::RecordRange>> RankRanges(
    std::span<const uint64_t> counts, const dataecho::EpochPlanOptions& plan,
    const JobResume& resume, uint64_t epoch, int rank, int world) {
  std::vector<dataecho::RecordRange> out;
  dataecho::EpochProgress progress{.epoch = epoch, .runs = {}};
  if (const EpochResume* e = resume.Find(epoch)) {
    const uint64_t n = e->leftover.size();
    const uint64_t w = static_cast<uint64_t>(world), r = static_cast<uint64_t>(rank);
    for (uint64_t i = n * r / w; i < n * (r + 1) / w; ++i) {
      Append(out, e->leftover[i].file, e->leftover[i].record, e->leftover[i].record + 1);
    }
    progress = e->progress;
  }
  absl::StatusOr<std::vector<dataecho::RecordRange>> planned =
      dataecho::PlanRank(counts, plan, progress, rank, world);
  if (!planned.ok()) return planned.status();
  for (const dataecho::RecordRange& range : *planned)
    Append(out, range.file, range.begin, range.end);
  return out;
}

Tracker::Tracker(std::span<const uint64_t> counts) : offsets_(Offsets(counts)) {}

void Tracker::Trained(uint64_t epoch, uint64_t source_index) {
  const uint64_t file = source_index >> 40;
  const uint64_t record = source_index & kRecordMask;
  if (file + 1 >= offsets_.size() || record >= offsets_[file + 1] - offsets_[file]) return;
  std::vector<uint8_t>& bytes = epochs_[epoch];
  if (bytes.empty()) bytes.assign(offsets_.back(), 0);
  bytes[Id({file, record})] = 1;
}

int64_t Tracker::last_epoch() const {
  return epochs_.empty() ? -1 : static_cast<int64_t>(epochs_.rbegin()->first);
}

std::vector<uint8_t> Tracker::Bytes(uint64_t epoch) const {
  auto it = epochs_.find(epoch);
  return it == epochs_.end() ? std::vector<uint8_t>(offsets_.back(), 0) : it->second;
}

void Tracker::Seed(uint64_t epoch, std::string_view bytes) {
  if (bytes.size() != offsets_.back()) return;
  std::vector<uint8_t>& mine = epochs_[epoch];
  if (mine.empty()) mine.assign(offsets_.back(), 0);
  for (size_t i = 0; i < bytes.size(); ++i) mine[i] |= bytes[i] != 0 ? 1 : 0;
}

absl::StatusOr<JobResume> Advance(std::span<const uint64_t> counts,
                                  const dataecho::EpochPlanOptions& plan, const JobResume& start,
                                  int world, const std::vector<std::vector<uint8_t>>& trained) {
  const std::vector<uint64_t> offsets = Offsets(counts);
  const uint64_t total = offsets.back();
  auto id = [&](uint64_t file, uint64_t record) { return offsets[file] + record; };
  uint64_t epochs = trained.size();
  if (!start.epochs.empty() && start.epochs.back().progress.epoch >= start.first_epoch) {
    epochs = std::max(epochs, start.epochs.back().progress.epoch - start.first_epoch + 1);
  }
  JobResume next;
  next.first_epoch = start.first_epoch + epochs;
  bool unfinished = false;
  for (uint64_t i = 0; i < epochs; ++i) {
    const uint64_t k = start.first_epoch + i;
    const std::vector<uint8_t> none;
    const std::vector<uint8_t>& done = i < trained.size() ? trained[i] : none;
    if (!done.empty() && done.size() != total) {
      return absl::InvalidArgumentError(
          fmt::format("epoch {}: {} trained flags for {} records", k, done.size(), total));
    }
    auto was_trained = [&](uint64_t x) { return !done.empty() && done[x] != 0; };
    const EpochResume* e = start.Find(k);
    const dataecho::EpochProgress progress =
        e != nullptr ? e->progress : dataecho::EpochProgress{.epoch = k, .runs = {}};
    // What this run had to train: its plan and the leftover it was given.
    absl::StatusOr<dataecho::EpochPlan> run = dataecho::PlanEpoch(counts, plan, progress, world);
    if (!run.ok()) return run.status();
    std::vector<uint8_t> todo(total, 0);
    if (e != nullptr) {
      for (const RecordId& r : e->leftover) todo[id(r.file, r.record)] = 1;
    }
    dataecho::EpochRestart restart{.world_size = world, .position = 0, .consumed = {}};
    for (const std::vector<dataecho::RecordRange>& slice : run->ranks) {
      uint64_t position = 0, consumed = 0;
      for (const dataecho::RecordRange& range : slice) {
        for (uint64_t rec = range.begin; rec < range.end; ++rec) {
          ++position;
          todo[id(range.file, rec)] = 1;
          if (was_trained(id(range.file, rec))) consumed = position;
        }
      }
      restart.consumed.push_back(consumed);
      restart.position += consumed;
    }
    dataecho::EpochProgress after = progress;
    if (restart.position > 0) {
      restart.position += progress.runs.empty() ? 0 : progress.runs.back().position;
      after.runs.push_back(std::move(restart));
    }
    absl::StatusOr<dataecho::EpochPlan> rest = dataecho::PlanEpoch(counts, plan, after, 1);
    if (!rest.ok()) return rest.status();
    std::vector<uint8_t> covered(total, 0);
    for (const dataecho::RecordRange& range : rest->ranks[0]) {
      for (uint64_t rec = range.begin; rec < range.end; ++rec) covered[id(range.file, rec)] = 1;
    }
    EpochResume out{.progress = std::move(after), .leftover = {}};
    for (uint64_t x = 0; x < total; ++x) {
      if (was_trained(x) && !todo[x]) {
        const RecordId r = FromId(offsets, x);
        return absl::InternalError(
            fmt::format("epoch {}: record {} of file {} was trained, but it was not this run's "
                        "to train (trained twice)",
                        k, r.record, r.file));
      }
      if (todo[x] && !was_trained(x) && !covered[x]) out.leftover.push_back(FromId(offsets, x));
    }
    const bool finished = rest->ranks[0].empty() && out.leftover.empty();
    if (finished && !unfinished) continue;  // done, and so is every epoch before
    if (!unfinished) next.first_epoch = k;
    unfinished = true;
    next.epochs.push_back(std::move(out));
  }
  return next;
}

void Save(const JobResume& resume, trainer::StateWriter& w) {
  w.U64(resume.first_epoch);
  w.List(resume.epochs, [&](const EpochResume& e) {
    w.U64(e.progress.epoch);
    w.List(e.progress.runs, [&](const dataecho::EpochRestart& run) {
      w.U64(static_cast<uint64_t>(run.world_size));
      w.U64(run.position);
      w.U64s(run.consumed);
    });
    w.List(e.leftover, [&](const RecordId& r) {
      w.U64(r.file);
      w.U64(r.record);
    });
  });
}

JobResume Restore(trainer::StateReader& r, std::span<const uint64_t> counts) {
  constexpr uint64_t kMaxList = uint64_t{1} << 32;
  JobResume out;
  out.first_epoch = r.U64();
  r.List(1024, "epochs in progress", [&] {
    EpochResume e;
    e.progress.epoch = r.U64();
    r.List(1024, "runs of epoch", [&] {
      dataecho::EpochRestart run;
      const uint64_t world = r.U64();
      if (r.status().ok() && (world < 1 || world > (1u << 20))) {
        r.Fail(fmt::format("world size {}", world));
      }
      run.world_size = static_cast<int>(world);
      run.position = r.U64();
      run.consumed = r.U64s(world);
      e.progress.runs.push_back(std::move(run));
    });
    r.List(kMaxList, "leftover records", [&] {
      RecordId id{.file = r.U64(), .record = r.U64()};
      if (r.status().ok() && (id.file >= counts.size() || id.record >= counts[id.file])) {
        r.Fail(fmt::format("record {} of file {}: not in the dataset", id.record, id.file));
      }
      e.leftover.push_back(id);
    });
    out.epochs.push_back(std::move(e));
  });
  return out;
}

}  // namespace elastic
