// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/decision_journal.h: the fresh/repeat decisions an adaptive echo
// took that a restore may have to take again. Not part of the public API.
//
// An adaptive echo decides fresh or repeat from timing. Behind a Prefetch
// (or a parallel Map), its state is in the producer's snapshot, taken at some
// decision d0, and a restore makes again what the producer made after it: to
// make the same elements, the restored echo must take the decisions the
// original took from d0 on. The journal keeps them: the echo records each
// decision; each snapshot of the echo's state holds an *anchor* (through
// StateWriter::KeepAlive) that keeps the journal from its d0 on while the
// snapshot lives; a stage above the Prefetch, on the consumer's side, writes
// the journal (Save) into the state, from the oldest live anchor on. At a
// restore, that stage reads it (Restore) before its input restores; the echo,
// restored at d0, replays the journal's decisions from d0 on (ReplayFrom) and
// then decides from its own timing.
//
//   auto journal = std::make_shared<DecisionJournal>();
//   options.adaptive.journal = journal;      // the echo records into it
//   // the stage above the Prefetch: SaveOwn: journal->Save(w);
//   //                               RestoreOwn: journal->Restore(r, name);
//
// Size: one bit per decision from the oldest snapshot still held, a few
// batches' rows in a pipeline that saves (its snapshots follow the consumer).
// With no snapshot held, nothing is kept.
//
// Thread safety: thread-safe (Record on the echo's thread, Save on the
// consumer's).
#ifndef DATAECHO_INTERNAL_DECISION_JOURNAL_H_
#define DATAECHO_INTERNAL_DECISION_JOURNAL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/checkpoint.h"
#include "dataecho/export.h"

namespace dataecho::internal {

// The echo stages' template code (internal/pooled_echo_stage.h) calls Record,
// Anchor, RestartAt and ReplayFrom: those are exported.
class DecisionJournal {
 public:
  // The echo took its next decision: 'F' (fresh) or 'R' (repeat).
  DATAECHO_EXPORT void Record(char decision);
  // The echo's state is being written at `position` decisions (its SaveOwn):
  // the anchor keeps the journal from `position` on while it lives; put it
  // into the snapshot with StateWriter::KeepAlive.
  DATAECHO_EXPORT std::shared_ptr<const void> Anchor(uint64_t position);
  // The echo was restored at `position` decisions: what it records next is
  // decision `position`.
  DATAECHO_EXPORT void RestartAt(uint64_t position);

  // Writes the journal from the oldest live anchor on: its first position,
  // the count, the decisions as bits (1 = repeat).
  void Save(StateWriter& w);
  // Reads what Save wrote, for ReplayFrom. DATA_LOSS naming `name` for a
  // count beyond the state's bytes.
  absl::Status Restore(StateReader& r, std::string_view name);
  // The restored echo, at `position` decisions: the decisions ('F'/'R') to
  // take again from there ("" without a restored journal, or at its end).
  // DATA_LOSS naming `name` when the journal starts after `position` or ends
  // before it (a state whose parts do not belong together).
  DATAECHO_EXPORT absl::StatusOr<std::string> ReplayFrom(uint64_t position, std::string_view name);

  // Decisions kept (for tests and stats).
  size_t kept() const;

 private:
  // Drops the decisions before the oldest live anchor (all of them with no
  // anchor alive), when that frees at least half of what is kept.
  void TrimLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  uint64_t base_ ABSL_GUARDED_BY(mu_) = 0;  // the position of log_[0]
  std::string log_ ABSL_GUARDED_BY(mu_);    // 'F' / 'R'
  std::vector<std::weak_ptr<const uint64_t>> anchors_ ABSL_GUARDED_BY(mu_);
  size_t recorded_since_trim_ ABSL_GUARDED_BY(mu_) = 0;
  // What Restore read.
  bool restored_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t restored_base_ ABSL_GUARDED_BY(mu_) = 0;
  std::string restored_log_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_DECISION_JOURNAL_H_
