// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The placed echoes' factor logs in a state (internal/auto_placement.h,
// SaveFactorLogs; docs/checkpoint.md, "Auto echo placement"), and a planner's
// start from an earlier decision (StartFromMemory).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/checkpoint.h"
#include "fmt/format.h"
#include "internal/auto_placement.h"

namespace dataecho::internal {
namespace {

bool FactorOk(double e) { return e >= 1 && e <= kMaxEchoFactor; }

}  // namespace

void SaveFactorLogs(EchoControl& control, StateWriter& w) {
  for (int slot : {kPlacedBefore, kPlacedAfter, kPlacedBatch}) {
    // The position first: a change at an index below it was logged before it was read.
    const int64_t taken = control.taken[slot].load(std::memory_order_acquire);
    std::vector<EchoControl::FactorChange> changes;
    {
      absl::MutexLock lock(&control.log_mu);
      for (const EchoControl::FactorChange& c : control.changes[slot]) {
        if (c.fresh < taken) changes.push_back(c);
      }
    }
    w.U64(static_cast<uint64_t>(taken));
    w.U64(changes.size());
    int64_t last = 0;
    for (const EchoControl::FactorChange& c : changes) {
      w.U64(static_cast<uint64_t>(c.fresh - last));
      w.Double(c.factor);
      last = c.fresh;
    }
    w.Double(control.factor[slot].load(std::memory_order_relaxed));
  }
}

absl::Status RestoreFactorLogs(EchoControl& control, const std::string& name, StateReader& r) {
  auto bad = [&](auto... what) {
    return absl::DataLossError(absl::StrCat("pipeline state: ", name, ": ", what...));
  };
  std::vector<EchoControl::FactorChange> changes[3];
  int64_t until[3] = {0, 0, 0};
  double factors[3] = {1, 1, 1};
  for (int slot : {kPlacedBefore, kPlacedAfter, kPlacedBatch}) {
    const uint64_t taken = r.U64();
    const uint64_t n = r.Count(9);
    if (!r.status().ok()) return r.status();
    if (taken > kMaxStatePosition) return bad("placed echo ", slot, " at fresh item ", taken);
    uint64_t at = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t delta = r.U64();
      const double e = r.Double();
      if (!r.status().ok()) return r.status();
      if ((i > 0 && delta == 0) || delta >= taken - at || !FactorOk(e)) {
        return bad("placed echo ", slot, "'s factor change ", i, " (", e, " after ", delta,
                   " fresh items) is out of order");
      }
      at += delta;
      changes[slot].push_back({.fresh = static_cast<int64_t>(at), .factor = e});
    }
    until[slot] = static_cast<int64_t>(taken);
    factors[slot] = r.Double();
    if (!r.status().ok()) return r.status();
    if (!FactorOk(factors[slot])) return bad("placed echo ", slot, " factor ", factors[slot]);
  }
  absl::MutexLock lock(&control.log_mu);
  for (int slot : {kPlacedBefore, kPlacedAfter, kPlacedBatch}) {
    control.changes[slot] = std::move(changes[slot]);
    control.replay_until[slot] = until[slot];
    control.factor[slot].store(factors[slot], std::memory_order_relaxed);
  }
  return absl::OkStatus();
}

StartedPlan StartFromMemory(const EchoPlannerMemory& m, PlannerMode mode, EchoControl& control) {
  constexpr const char* kNames[] = {"before_augment", "after_augment", "batch"};
  StartedPlan p;
  if (mode == PlannerMode::kAdaptive) {
    const bool cheap = m.placement == kPlacedBefore || m.factor <= 1;
    p.before_cap = cheap ? 1e9 : 1.0;
    p.placement = cheap ? kPlacedBefore : kPlacedBatch;
    p.factor = cheap ? 1.0 : m.factor;
    control.before_cap.store(p.before_cap, std::memory_order_relaxed);
    control.factor[kPlacedBatch].store(p.factor, std::memory_order_relaxed);
  } else {
    p.placement = m.placement;
    p.factor = m.factor;
    for (int slot : {kPlacedBefore, kPlacedAfter, kPlacedBatch}) {
      control.factor[slot].store(slot == p.placement ? p.factor : 1.0, std::memory_order_relaxed);
    }
  }
  p.note = fmt::format(
      "from the start: {} echo, e = {:.2f}, as an earlier planner decided (start_from), its "
      "costs measured on",
      kNames[p.placement], p.factor);
  return p;
}

}  // namespace dataecho::internal
