// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// shuffle.h: a seeded shuffle buffer.
//
// The stage fills a buffer of `buffer_size` elements; once full, each input
// element replaces a uniformly chosen buffered element, which is emitted. At
// the end of the input the rest drains in random order. After example echoing
// it spreads the copies of one item apart (mean distance ~ buffer_size).
// The same seed and input give the same order.
//
// Epochs (repeat.h): below a Repeat (`.Shuffle(...).Repeat(n)`), each epoch
// e starts with an empty buffer and draws from a generator seeded by (seed,
// e), so every epoch has its own order and the order of epoch e depends only
// on the seed and e (a run resumed at epoch e sees the same order). Above a
// Repeat, the draws from the first element of epoch e on come from (seed, e).
// Epoch 0 draws from `seed` alone, as without epochs.
//
//   auto shuffled = dataecho::ShuffleStage<Example>::Make(
//       std::move(echoed), {.buffer_size = 10000, .seed = 7, .max_bytes = 1 << 30});
//   if (!shuffled.ok()) return shuffled.status();
//
// An input error is returned after the buffered elements (produced before the
// error) have drained; it then stays. Memory is capped (`max_bytes`, by
// default half of what the process may use: memory.h): Make() refuses a
// buffer whose slots alone (buffer_size * sizeof(T)) exceed the cap, and
// Next() fails with RESOURCE_EXHAUSTED (sticky) when the elements held
// (payload bytes plus a slot each) would exceed it.
//
// Stats: input_wait = time blocked on an input that had nothing ready
// (stats.h); extra "bytes_held" and "buffered" (elements), "peak_bytes_held".
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_SHUFFLE_H_
#define DATAECHO_SHUFFLE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/element_refs.h"
#include "dataecho/internal/option_checks.h"
#include "dataecho/internal/random.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/internal/str_cat.h"
#include "dataecho/memory.h"
#include "dataecho/record.h"
#include "dataecho/stage.h"
#include "dataecho/stage_options.h"
#include "dataecho/status_macros.h"

namespace dataecho {

template <typename T>
class ShuffleStage final : public PassThroughStage<T> {
 public:
  static absl::StatusOr<StagePtr<T>> Make(StagePtr<T> input, ShuffleOptions options) {
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, options));
    DATAECHO_RETURN_IF_ERROR(CheckMemoryEstimate(options.name, "buffer_size", options.buffer_size,
                                                 sizeof(T), options.max_bytes,
                                                 "ShuffleOptions::max_bytes"));
    return StagePtr<T>(new ShuffleStage(std::move(input), std::move(options)));
  }

  absl::StatusOr<std::optional<T>> Next() override {
    if (this->cancelled()) return CancelledError();
    if (!error_.ok() && buffer_.empty()) return error_;
    while (!input_done_ && static_cast<int64_t>(buffer_.size()) < options_.buffer_size) {  // fill
      if (this->cancelled()) return CancelledError();
      absl::StatusOr<std::optional<T>> v;
      DATAECHO_RETURN_IF_ERROR(Pull(&v));
      if (Holds(v)) buffer_.push_back(**std::move(v));
      buffered_.Set(static_cast<int64_t>(buffer_.size()));
    }
    if (buffer_.empty())
      return error_.ok() ? absl::StatusOr<std::optional<T>>(std::nullopt) : error_;
    return Emit();
  }

 protected:
  // Epochs: a pass-through stage (stage.h) that drops its buffer when its
  // input starts over.
  absl::Status OnRestart(uint32_t epoch) override {
    for (const T& v : buffer_)
      bytes_held_.Add(-static_cast<int64_t>(ElementTraits<T>::ByteSize(v)));
    buffer_.clear();
    buffered_.Set(0);
    input_done_ = false;
    next_size_ = 0;
    Reseed(epoch);
    return absl::OkStatus();
  }

  // State: the generator, the drawn slot and references to the buffered
  // elements (read again at restore, grouped by file by a record source).
  // References and re-reads of its own elements are its input's.
  std::string StateName() const override { return options_.name; }
  uint64_t StateOptionsHash() const override { return Hash(); }
  absl::Status StickyError() const override { return error_; }
  absl::Status SaveOwn(StateWriter& w) override {
    w.U64(epoch_);
    internal::SaveRng(rng_, w);
    w.U64(next_);
    w.U64(next_size_);
    w.Bool(input_done_);
    return internal::SaveElements(this->input(), buffer_, w);
  }
  absl::Status RestoreOwn(StateReader& r) override {
    epoch_ = static_cast<uint32_t>(r.U64());
    rng_ = internal::RestoreRng(r);
    next_ = r.U64();
    next_size_ = r.U64();
    input_done_ = r.Bool();
    const uint64_t n = r.Count();
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (n > static_cast<uint64_t>(options_.buffer_size) ||
        (next_size_ > 0 && next_ >= next_size_)) {
      return absl::DataLossError(internal::StrCat("pipeline state: ", options_.name, " holds ", n,
                                                  " elements, slot ", next_, " of ", next_size_));
    }
    buffer_.clear();
    DATAECHO_RETURN_IF_ERROR(
        internal::RereadElements(this->input(), r, n, &buffer_, "shuffle buffer"));
    bytes_held_.Set(internal::ElementBytes(buffer_));
    buffered_.Set(static_cast<int64_t>(buffer_.size()));
    return absl::OkStatus();
  }

  StageStats OwnStats() const override {
    return totals_.Report(options_.name,
                          {{"buffer_size", static_cast<double>(options_.buffer_size)},
                           {"buffered", static_cast<double>(buffered_.Get())},
                           {"bytes_held", static_cast<double>(bytes_held_.Get())},
                           {"peak_bytes_held", static_cast<double>(peak_bytes_held_.Get())}});
  }

 private:
  ShuffleStage(StagePtr<T> input, ShuffleOptions options)
      : PassThroughStage<T>(std::move(input)),
        options_(std::move(options)),
        max_bytes_(EffectiveMemoryCap(options_.max_bytes)),
        rng_(options_.seed) {
    buffer_.reserve(static_cast<size_t>(std::min<int64_t>(options_.buffer_size, int64_t{1} << 20)));
  }

  // Emits a uniformly chosen element; the next input takes its slot. The
  // element is moved once, into the returned value, which its one return
  // builds in the caller's (see Pipeline::PullFromStage).
  absl::StatusOr<std::optional<T>> Emit() {
    // The slot was drawn at the end of the previous call (see below) unless
    // the buffer changed size since.
    const size_t i = next_size_ == buffer_.size() ? next_ : rng_.Below(buffer_.size());
    next_size_ = 0;
    absl::StatusOr<std::optional<T>> out(absl::in_place, std::in_place, std::move(buffer_[i]));
    const int64_t b = static_cast<int64_t>(ElementTraits<T>::ByteSize(**out));
    bytes_held_.Add(-b);
    absl::StatusOr<std::optional<T>> next;
    if (!input_done_) {
      if (absl::Status s = Pull(&next); !s.ok()) [[unlikely]] {
        out = std::move(s);
        return out;
      }
    }
    if (Holds(next)) {
      // Built in the slot moved from: an assignment of an Example goes
      // through its components one by one, a construction does not.
      std::destroy_at(&buffer_[i]);
      std::construct_at(&buffer_[i], **std::move(next));
    } else {  // draining
      if (i + 1 != buffer_.size()) buffer_[i] = std::move(buffer_.back());
      buffer_.pop_back();
      buffered_.Set(static_cast<int64_t>(buffer_.size()));
    }
    totals_.elements.Add(1);
    totals_.bytes.Add(b);
    // Draw the next call's slot now and ask for the slot itself, a cache miss
    // in a large buffer (the element's bytes are left to the consumer: Batch
    // prefetches them a few rows ahead; docs/benchmarks.md, "Prefetching
    // rows"). The draws are the ones the next call would make (the buffer
    // keeps its size until then); saved states hold the slot drawn (next_).
    if (!buffer_.empty()) {
      next_ = rng_.Below(buffer_.size());
      next_size_ = buffer_.size();
      // (Inline: GCC 12 drops calls to a function that only prefetches.)
      const char* slot = reinterpret_cast<const char*>(&buffer_[next_]);
      for (size_t off = 0; off < sizeof(T); off += 64) __builtin_prefetch(slot + off);
    }
    return out;
  }

  static bool Holds(const absl::StatusOr<std::optional<T>>& r) { return r.ok() && r->has_value(); }

  // Reads one input element into `*r` and accounts for its bytes; at the end
  // of the input or on an input error (kept in error_ and returned after the
  // drain) *r holds no element (!Holds(*r)). A non-OK return is a
  // memory-cap failure.
  absl::Status Pull(absl::StatusOr<std::optional<T>>* r) {
    totals_.input_wait_ns.Add(internal::PullTimed(this->input(), r));
    if (!Holds(*r)) {
      input_done_ = true;
      if (!r->ok()) error_ = r->status();
      return absl::OkStatus();
    }
    const int64_t b = static_cast<int64_t>(ElementTraits<T>::ByteSize(***r));
    const int64_t slots = static_cast<int64_t>((buffer_.size() + 1) * sizeof(T));
    if (bytes_held_.Get() + b + slots > max_bytes_) {
      error_ = absl::ResourceExhaustedError(internal::StrCat(
          options_.name, ": buffering ", b, " more bytes would exceed max_bytes = ", max_bytes_,
          " (", buffer_.size(), " elements, ", bytes_held_.Get(), " bytes held, ", slots,
          " in slots; lower buffer_size or raise ShuffleOptions::max_bytes)"));
      input_done_ = true;
      buffer_.clear();
      bytes_held_.Set(0);
      return error_;
    }
    if (const uint32_t e = internal::EpochOf(***r); e > epoch_) Reseed(e);
    bytes_held_.Add(b);
    if (bytes_held_.Get() > peak_bytes_held_.Get()) peak_bytes_held_.Set(bytes_held_.Get());
    return absl::OkStatus();
  }

  uint64_t Hash() const {
    return OptionsHash().Add(options_.buffer_size).Add(options_.seed).value();
  }

  // Draws from now on come from (seed, epoch); epoch 0 from the seed alone.
  void Reseed(uint32_t epoch) {
    epoch_ = epoch;
    rng_ = internal::Rng(epoch == 0 ? options_.seed : internal::MixSeed(options_.seed, epoch));
  }

  const ShuffleOptions options_;
  const int64_t max_bytes_;  // the cap in force
  internal::Rng rng_;
  uint32_t epoch_ = 0;  // of the draws
  std::vector<T> buffer_;
  size_t next_ = 0;       // slot to emit next, drawn when the buffer had
  size_t next_size_ = 0;  // this many elements (0: none drawn)
  bool input_done_ = false;
  absl::Status error_;  // input error, returned once the buffer has drained
  internal::StageTotals<internal::Counter> totals_;
  internal::Counter bytes_held_, peak_bytes_held_, buffered_;
};

// Compiled once, in src/shuffle.cc (export.h).
DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(ShuffleStage);

}  // namespace dataecho

#endif  // DATAECHO_SHUFFLE_H_
