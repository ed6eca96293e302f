// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The adaptive echo's decision journal (internal/decision_journal.h).
#include "dataecho/internal/decision_journal.h"

#include <algorithm>
#include <utility>

#include "fmt/format.h"

namespace dataecho::internal {
namespace {

// Records between two looks at the anchors (a trim is amortized over them).
constexpr size_t kTrimEvery = 4096;

}  // namespace

void DecisionJournal::Record(char decision) {
  absl::MutexLock lock(&mu_);
  log_.push_back(decision);
  if (++recorded_since_trim_ >= kTrimEvery) TrimLocked();
}

std::shared_ptr<const void> DecisionJournal::Anchor(uint64_t position) {
  auto anchor = std::make_shared<const uint64_t>(position);
  absl::MutexLock lock(&mu_);
  anchors_.push_back(anchor);
  TrimLocked();
  return anchor;
}

void DecisionJournal::RestartAt(uint64_t position) {
  absl::MutexLock lock(&mu_);
  base_ = position;
  log_.clear();
  anchors_.clear();
  recorded_since_trim_ = 0;
}

void DecisionJournal::TrimLocked() {
  recorded_since_trim_ = 0;
  const uint64_t end = base_ + log_.size();
  uint64_t oldest = end;
  std::erase_if(anchors_, [&](const std::weak_ptr<const uint64_t>& a) {
    std::shared_ptr<const uint64_t> held = a.lock();
    if (held == nullptr) return true;
    oldest = std::min(oldest, *held);
    return false;
  });
  // An anchor from before the last RestartAt() keeps nothing.
  if (oldest <= base_) return;
  const size_t drop = static_cast<size_t>(std::min(oldest, end) - base_);
  if (drop < log_.size() - drop && drop < kTrimEvery) return;  // amortized
  log_.erase(0, drop);
  base_ += drop;
}

void DecisionJournal::Save(StateWriter& w) {
  absl::MutexLock lock(&mu_);
  TrimLocked();
  w.U64(base_);
  w.U64(log_.size());
  std::string bits((log_.size() + 7) / 8, '\0');
  for (size_t i = 0; i < log_.size(); ++i) {
    if (log_[i] == 'R') bits[i / 8] = static_cast<char>(bits[i / 8] | (1 << (i % 8)));
  }
  w.Bytes(bits);
}

absl::Status DecisionJournal::Restore(StateReader& r, std::string_view name) {
  const uint64_t base = r.U64();
  const uint64_t count = r.U64();
  const std::string bits = r.Bytes();
  if (!r.status().ok()) return r.status();
  if (base > (uint64_t{1} << 62) || count > uint64_t{8} * bits.size() ||
      bits.size() > count / 8 + 1) {
    return absl::DataLossError(
        fmt::format("pipeline state: {}: a journal of {} decisions from {} in {} bytes", name,
                    count, base, bits.size()));
  }
  std::string log(static_cast<size_t>(count), 'F');
  for (size_t i = 0; i < log.size(); ++i) {
    if ((static_cast<unsigned char>(bits[i / 8]) >> (i % 8)) & 1) log[i] = 'R';
  }
  absl::MutexLock lock(&mu_);
  restored_ = true;
  restored_base_ = base;
  restored_log_ = std::move(log);
  return absl::OkStatus();
}

absl::StatusOr<std::string> DecisionJournal::ReplayFrom(uint64_t position, std::string_view name) {
  absl::MutexLock lock(&mu_);
  if (!restored_) return std::string();
  restored_ = false;
  const uint64_t end = restored_base_ + restored_log_.size();
  if (position < restored_base_ || position > end) {
    return absl::DataLossError(fmt::format(
        "pipeline state: {}: the adaptive echo was saved at decision {}, its journal holds "
        "decisions {} to {}",
        name, position, restored_base_, end));
  }
  std::string replay = restored_log_.substr(static_cast<size_t>(position - restored_base_));
  restored_log_.clear();
  return replay;
}

size_t DecisionJournal::kept() const {
  absl::MutexLock lock(&mu_);
  return log_.size();
}

}  // namespace dataecho::internal
