// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// cache.h: read the input once, replay it from memory in later epochs.
//
// CacheStage passes its input's elements on and keeps a copy of each (a
// handle: payload bytes are shared, element_traits.h). When a Repeat above it
// starts a new epoch (Restart(), stage.h), the cache replays the kept
// elements, in order, instead of restarting its input; so
//
//   auto p = dataecho::From(dataecho::MakeTFRecordSource(store, shards))
//       .Map(dataecho::DecodeImageRecord)
//       .Cache({.max_bytes = int64_t{2} << 30})       // decoded once, at most 2 GiB
//       .Shuffle({.buffer_size = 10000, .seed = 1})    // a new order every epoch
//       .Repeat(3);
//
// reads and decodes the shards once, then serves epochs 1 and 2 from memory.
// Put Cache after the expensive, deterministic work (reading, decoding) and
// before the random work (augmentation, Shuffle), which then differs per
// epoch. Replayed elements carry the epoch being served (where the element
// type has one: ElementTraits<T>::SetEpoch).
//
// A restart before the input has ended (a Take above it, or a Repeat after a
// partial epoch) replays what is cached, then continues reading the input
// where it stopped, caching as before: the input is read at most once,
// whatever the restarts.
//
// Over the cap: the element that would take the cached bytes
// (ElementTraits<T>::ByteSize) above `max_bytes` is not returned; Next()
// fails with RESOURCE_EXHAUSTED naming the cap, and stays failed. Caching is
// all or nothing: a dataset that does not fit is an error, not a silent
// fall-back to reading it every epoch. An input error is returned in order
// (after the elements before it) and stays, as is the cache's failure.
//
// Checkpoints (docs/checkpoint.md): the state is the input's (where the
// filling phase stopped reading), then the cache's: its epoch, the next
// element to serve, whether the input ended, and *references* to the cached
// elements (a few bytes each: the state grows with the cache), which a
// restore has its input read again (a record source groups them by file). An
// element the cache emitted is referenced as its input's element, stamped
// with the epoch served: so a stage between the source and the cache must
// make the same element whatever the epoch stamped on its input.
//
// Stats: elements = emitted (all epochs); input_wait = time blocked on an
// input with nothing ready; extra "cached" (elements kept), "cached_bytes", "replayed"
// (elements served from memory), "complete" (1 once the input has ended),
// "epoch" (the epoch being served).
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_CACHE_H_
#define DATAECHO_CACHE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/element_refs.h"
#include "dataecho/internal/option_checks.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/internal/str_cat.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/stage_options.h"
#include "dataecho/status_macros.h"

namespace dataecho {

template <typename T>
class CacheStage final : public UnaryStage<T, T> {
 public:
  // INVALID_ARGUMENT for a null input or a negative max_bytes.
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, CacheOptions options = {}) {
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, options));
    return StagePtr<T>(new CacheStage(std::move(input), std::move(options)));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    if (this->cancelled()) return CancelledError();
    if (!error_.ok()) return error_;
    if (next_ < items_.size()) {  // replay: a copy of the handle, built in place
      absl::StatusOr<std::optional<T>> r(absl::in_place, std::in_place, items_[next_++]);
      Stamp(**r);
      replayed_.Add(1);
      Count(**r);
      return r;
    }
    if (complete_) return std::nullopt;
    absl::StatusOr<std::optional<T>> r;
    totals_.input_wait_ns.Add(internal::PullTimed(this->input(), &r));
    if (!r.ok()) return error_ = r.status();
    if (!r->has_value()) {
      complete_ = true;
      complete_count_.Set(1);
      return std::nullopt;
    }
    const auto size = static_cast<int64_t>(ElementTraits<T>::ByteSize(**r));
    if (options_.max_bytes > 0 && cached_bytes_.Get() + size > options_.max_bytes) {
      return error_ = absl::ResourceExhaustedError(internal::StrCat(
                 options_.name, ": element ", items_.size(), " (", size,
                 " bytes) would take the cache above max_bytes = ", options_.max_bytes, " (",
                 cached_bytes_.Get(), " bytes in ", items_.size(),
                 " elements cached); raise CacheOptions::max_bytes or cache less"));
    }
    items_.push_back(**r);
    next_ = items_.size();
    cached_bytes_.Add(size);
    cached_.Add(1);
    Stamp(**r);
    Count(**r);
    return r;
  }

  // Epochs (stage.h): the cache replays from memory and never restarts its
  // input, so it can always start over; the input's own restart support does
  // not matter.
  absl::Status EnableRestart() override { return absl::OkStatus(); }

  // Serves epoch `epoch` from the first element: the cached ones, then the
  // rest of the input if it has not ended. The cache's error, if any, stays.
  absl::Status Restart(uint32_t epoch) override {
    DATAECHO_RETURN_IF_ERROR(StickyError());
    next_ = 0;
    epoch_ = epoch;
    epoch_stat_.Set(epoch);
    return absl::OkStatus();
  }

  // An element served is its input's, stamped with the epoch.
  absl::Status SaveRefs(std::span<const T* const> items, StateWriter& w) override {
    return this->input().SaveRefs(items, w);
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<T>* out) override {
    return this->input().Reread(r, n, out);
  }

 protected:
  StageStats OwnStats() const override {
    return totals_.Report(options_.name,
                          {{"cached", static_cast<double>(cached_.Get())},
                           {"cached_bytes", static_cast<double>(cached_bytes_.Get())},
                           {"replayed", static_cast<double>(replayed_.Get())},
                           {"complete", static_cast<double>(complete_count_.Get())},
                           {"epoch", static_cast<double>(epoch_stat_.Get())}});
  }

 private:
  CacheStage(StagePtr<T> input, CacheOptions options)
      : UnaryStage<T, T>(std::move(input)), options_(std::move(options)) {}

  // State (stage.h's shape): the input's, then this stage's section: the
  // epoch, the next element to serve, whether the input ended, and
  // references to the cached elements.
  std::string StateName() const override { return options_.name; }
  uint64_t StateOptionsHash() const override {
    return OptionsHash().Add(options_.max_bytes).value();
  }
  absl::Status StickyError() const override { return error_; }
  absl::Status SaveOwn(StateWriter& w) override {
    w.U64(epoch_);
    w.U64(next_);
    w.Bool(complete_);
    return internal::SaveElements(this->input(), items_, w);
  }
  absl::Status RestoreOwn(StateReader& r) override {
    const uint64_t epoch = r.U64();
    const uint64_t next = r.U64();
    const bool complete = r.Bool();
    const uint64_t count = r.Count(1);
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (epoch > UINT32_MAX || next > count) {
      return absl::DataLossError(internal::StrCat("pipeline state: ", options_.name,
                                                  " serves element ", next, " of ", count,
                                                  " in epoch ", epoch));
    }
    std::vector<T> items;
    DATAECHO_RETURN_IF_ERROR(
        internal::RereadElements(this->input(), r, count, &items, options_.name + "'s elements"));
    const int64_t bytes = internal::ElementBytes(items);
    items_ = std::move(items);
    next_ = static_cast<size_t>(next);
    complete_ = complete;
    epoch_ = static_cast<uint32_t>(epoch);
    cached_.Add(static_cast<int64_t>(items_.size()));
    cached_bytes_.Add(bytes);
    complete_count_.Set(complete_ ? 1 : 0);
    epoch_stat_.Set(epoch_);
    return absl::OkStatus();
  }

  // Marks `v` with the epoch being served, where T has epochs.
  void Stamp(T& v) const {
    if constexpr (requires { ElementTraits<T>::SetEpoch(v, epoch_); }) {
      if (epoch_ > 0) ElementTraits<T>::SetEpoch(v, epoch_);
    }
  }

  void Count(const T& v) {
    totals_.elements.Add(1);
    totals_.bytes.Add(static_cast<int64_t>(ElementTraits<T>::ByteSize(v)));
  }

  const CacheOptions options_;
  // The input's elements so far, as received (consumer thread only).
  std::vector<T> items_;
  size_t next_ = 0;        // next element to serve from items_ (consumer thread only)
  bool complete_ = false;  // the input has ended (consumer thread only)
  uint32_t epoch_ = 0;     // consumer thread only
  absl::Status error_;     // sticky (consumer thread only)
  internal::StageTotals<internal::Counter> totals_;
  internal::Counter cached_, cached_bytes_, replayed_, complete_count_, epoch_stat_;
};

// Compiled once, in src/cache.cc (export.h).
DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(CacheStage);

}  // namespace dataecho

#endif  // DATAECHO_CACHE_H_
