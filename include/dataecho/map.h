// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// map.h: apply a function to every element, inline or in parallel.
//
// By default (`parallelism = 0`) Map calls `fn` in the consumer's thread:
// right for cheap functions (crop, flip, a cast), for which moving an element
// to another thread and back would cost more than the call. `parallelism = n`
// runs `fn` on a fixed pool of n worker threads, at most n calls in flight,
// and returns results in input order (set `deterministic = false` to take them
// in completion order): for expensive functions (decoding). `parallelism =
// kAutotune` starts inline, measures fn, and then stays inline or picks the
// workers from the measured time and the cores left
// (internal/map_tuning.h). `fn` returns the new element or an error; an error
// comes out at the element's position (in order: every earlier element first)
// and then stays.
//
//   auto decoded = dataecho::MapStage<Record, Example>::Make(
//       std::move(records), DecodeImageRecord, {.parallelism = 4});
//   if (!decoded.ok()) return decoded.status();  // a bad option, empty fn or null input
//
// A parallel Map's results run ahead of the consumer (up to `buffer` beyond
// the calls in flight; by default two batches per worker). Workers take their
// input in batches (one worker pulls at a time, never concurrently) and hand
// results over in batches, a batch being about 200 us of work (one element for
// expensive functions); a thread is woken only when it sleeps waiting for what
// just happened. Workers start on the first Next(). Destruction cancels,
// wakes and joins them; a call of `fn` already running is waited for.
//
// Epochs (stage.h): a Map starts over with its input under a Repeat, inline
// or parallel; a parallel one first lets its workers finish the calls in
// flight and drops their results (the epoch is over), then starts them anew
// on the next Next().
//
// Checkpoints (stage.h, docs/checkpoint.md). `fn` must be deterministic per
// element (the seeded augmenters are): a restore applies it again.
//  - State: an inline Map has none of its own; a parallel one stores no
//    results. Its workers keep a snapshot of the input's state taken after j
//    pulls (internal/input_snapshots.h); SaveState() writes the newest one
//    the consumer has passed and the count c - j of results it took since,
//    and a restore pulls those c - j inputs again and drops them (fn is not
//    applied). deterministic = false cannot be saved (FAILED_PRECONDITION:
//    its results come in completion order).
//  - References (a Shuffle or Echo after the Map holding its elements): the
//    Map references its input's elements and applies fn again on Reread().
//    Map<T, T> passes its elements to its input as they are, so fn must keep
//    source_index, repeat_index and epoch (and a Record's offset and crc32c);
//    Map<Record, Example> sets the Example's source_index, repeat_index and
//    epoch from the record, and its provenance fields (record_offset,
//    record_crc32c: example.h) after fn returns, and references the record
//    by them. A Map to numbers writes their values (a number is its own
//    reference); other type pairs cannot be referenced (FAILED_PRECONDITION).
//
// Stats (stats.h): input_wait = time blocked on an input that had nothing
// ready (the workers', or the consumer's when inline); consumer_wait =
// consumer time waiting for the next result; threads = the workers (0 =
// inline); extra "busy_s" = time in fn (inline too, summed over workers),
// "parallelism" = the workers (0 = inline; with kAutotune, the choice once
// made).
//
// Thread safety: as every stage (stage.h); `fn` must be safe to call from
// several threads at once when parallelism is not 0.
#ifndef DATAECHO_MAP_H_
#define DATAECHO_MAP_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/export.h"
#include "dataecho/formats/record.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/input_snapshots.h"
#include "dataecho/internal/map_tuning.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho {

// MapOptions::parallelism and MapOptions::buffer: let the stage choose. (A
// sentinel no one types by accident: -1 stays an invalid parallelism.)
inline constexpr int kAutotune = std::numeric_limits<int>::min();

struct MapOptions {
  // 0 (default): fn runs inline in the consumer's thread. n >= 1: n worker
  // threads. kAutotune: inline while it measures fn, then inline or workers.
  int parallelism = 0;
  // true: results in input order; false: in completion order.
  bool deterministic = true;
  // Results a parallel Map may hold ahead of the consumer beyond the calls in
  // flight (taken from the input, not yet returned: at most parallelism +
  // buffer). kAutotune (default): two batches per worker (MapWindow).
  int buffer = kAutotune;
  std::string name = "map";

  absl::Status Validate() const {
    if (parallelism != kAutotune && (parallelism < 0 || parallelism > 1024)) {
      return absl::InvalidArgumentError(
          fmt::format("map parallelism must be kAutotune or in [0, 1024], got {}", parallelism));
    }
    if (buffer != kAutotune && buffer < 0) {
      return absl::InvalidArgumentError(
          fmt::format("map buffer must be >= 0, got {} (or kAutotune)", buffer));
    }
    return absl::OkStatus();
  }
};

template <typename In, typename Out>
class MapStage final : public UnaryStage<Out, In> {
 public:
  using Fn = std::function<absl::StatusOr<Out>(In)>;

  static absl::StatusOr<StagePtr<Out>> Make(StagePtr<In> input, Fn fn, MapOptions options = {}) {
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(input, options.name));
    DATAECHO_RETURN_IF_ERROR(options.Validate());
    if (!fn) return absl::InvalidArgumentError(fmt::format("{}: empty fn", options.name));
    return StagePtr<Out>(new MapStage(std::move(input), std::move(fn), std::move(options)));
  }

  ~MapStage() override {
    this->Cancel();
    for (std::thread& t : workers_) t.join();
  }

  absl::StatusOr<std::optional<Out>> Next() override {
    if (parallelism_ <= 0) return NextInline();
    StartWorkers();
    absl::MutexLock lock(&mu_);
    if (!ReadyLocked()) WaitReady();
    return TakeLocked();
  }

  // Epochs (stage.h): inline or parallel, the Map starts over with its input.
  absl::Status EnableRestart() override { return this->input().EnableRestart(); }
  absl::Status Restart(uint32_t epoch) override {
    if (parallelism_ <= 0 || workers_.empty()) {
      DATAECHO_RETURN_IF_ERROR(inline_status_);
      {
        absl::MutexLock lock(&mu_);
        DATAECHO_RETURN_IF_ERROR(StickyErrorLocked());
      }
      return this->input().Restart(epoch);
    }
    {
      absl::MutexLock lock(&mu_);
      DATAECHO_RETURN_IF_ERROR(StickyErrorLocked());
      restarting_ = true;  // the workers stop at their next look at the stage
      room_cv_.SignalAll();
    }
    for (std::thread& t : workers_) t.join();
    workers_.clear();  // the next Next() starts them again
    {
      absl::MutexLock lock(&mu_);
      restarting_ = false;
      if (cancel_) return CancelledError();
      // No worker runs: drop what they took and made (the rest of the epoch).
      slots_.clear();
      done_.clear();
      next_seq_ = next_out_ = 0;
      terminal_seq_ = kNone;
      terminal_.reset();
    }
    snapshots_.Reset();
    return this->input().Restart(epoch);
  }

  // References (see the file comment): the input's, under the pull lock.
  absl::Status SaveRefs(std::span<const Out* const> items, StateWriter& w) override {
    if constexpr (std::is_same_v<In, Out>) {
      absl::MutexLock lock(&input_mu_);
      return this->input().SaveRefs(items, w);
    } else if constexpr (std::is_same_v<In, Record> && std::is_same_v<Out, Example>) {
      std::vector<Record> records(items.size());
      std::vector<const Record*> refs(items.size());
      for (size_t i = 0; i < items.size(); ++i) {
        const Example& ex = *items[i];
        Record& rec = records[i];
        rec.source_index = ex.source_index;
        rec.repeat_index = ex.repeat_index;
        rec.epoch = ex.epoch;
        rec.offset = ex.record_offset;
        rec.crc32c = ex.record_crc32c;
        refs[i] = &rec;
      }
      absl::MutexLock lock(&input_mu_);
      return this->input().SaveRefs(refs, w);
    } else {
      return Stage<Out>::SaveRefs(items, w);  // numbers: their values; else FAILED_PRECONDITION
    }
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<Out>* out) override {
    if constexpr (std::is_same_v<In, Out> ||
                  (std::is_same_v<In, Record> && std::is_same_v<Out, Example>)) {
      std::vector<In> inputs;
      {
        absl::MutexLock lock(&input_mu_);
        DATAECHO_RETURN_IF_ERROR(this->input().Reread(r, n, &inputs));
      }
      for (In& in : inputs) {
        absl::StatusOr<Out> o = Apply(std::move(in));
        if (!o.ok()) return o.status();
        out->push_back(*std::move(o));
      }
      return absl::OkStatus();
    } else {
      return Stage<Out>::Reread(r, n, out);
    }
  }

  bool TryNext(absl::StatusOr<std::optional<Out>>* out) override {
    if (parallelism_ <= 0) {
      *out = NextInline();
      return true;
    }
    StartWorkers();
    absl::MutexLock lock(&mu_);
    if (!ReadyLocked()) return false;
    *out = TakeLocked();
    return true;
  }

 protected:
  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    cancel_ = true;
    consumer_cv_.SignalAll();
    room_cv_.SignalAll();
  }

  std::string StateName() const override { return options_.name; }
  // The input's state: inline (or before the workers start) the input's
  // own; with workers, the newest snapshot the consumer has passed, and the
  // results taken since (SaveOwn).
  absl::Status SaveInput(StateWriter& w) override {
    if (!options_.deterministic && options_.parallelism != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          options_.name,
          " (deterministic = false) cannot save its state: results in completion order"));
    }
    DATAECHO_RETURN_IF_ERROR(inline_status_.ok() ? absl::OkStatus() : AfterError(inline_status_));
    int64_t consumed = 0;
    {
      absl::MutexLock lock(&mu_);
      if (cancel_) return CancelledError();
      if (!failed_.ok()) return AfterError(failed_);
      if (terminal_.has_value() && !terminal_->ok() && next_out_ == terminal_seq_) {
        return AfterError(terminal_->status());
      }
      consumed = next_out_;
    }
    if (workers_.empty()) {
      save_skip_ = 0;
      return this->input().SaveState(w);
    }
    absl::StatusOr<int64_t> skip = snapshots_.WriteBase(consumed, w);
    if (!skip.ok()) return skip.status();
    save_skip_ = *skip;
    return absl::OkStatus();
  }
  absl::Status SaveOwn(StateWriter& w) override {
    w.U64(static_cast<uint64_t>(save_skip_));
    return absl::OkStatus();
  }
  // Pulls again the inputs of the results taken after the snapshot, and
  // drops them (fn is not applied).
  absl::Status RestoreOwn(StateReader& r) override {
    const uint64_t skip = r.U64();
    if (!r.status().ok()) return r.status();
    if (skip > kMaxSkip) {
      return absl::DataLossError(
          absl::StrCat("pipeline state: ", options_.name, " skips ", skip, " inputs"));
    }
    snapshots_.Reset();
    return internal::SkipInputs(this->input(), static_cast<int64_t>(skip), options_.name);
  }

  StageStats OwnStats() const override {
    const int threads = static_cast<int>(reported_parallelism_.Get());
    return totals_.Report(
        options_.name, threads,
        {{"parallelism", threads}, {"busy_s", static_cast<double>(busy_ns_.Get()) * 1e-9}});
  }

 private:
  using Item = absl::StatusOr<std::optional<Out>>;
  static constexpr int64_t kNone = INT64_MAX;
  // A state's skip count above this is corrupt (and would spin over a Repeat).
  static constexpr uint64_t kMaxSkip = uint64_t{1} << 32;

  absl::Status AfterError(const absl::Status& s) const {
    return absl::FailedPreconditionError(
        absl::StrCat(options_.name, " cannot save its state after an error: ", s.message()));
  }

  // fn, and what a checkpoint needs of its result (see the file comment).
  absl::StatusOr<Out> Apply(In in) const {
    if constexpr (std::is_same_v<In, Record> && std::is_same_v<Out, Example>) {
      const uint64_t source_index = in.source_index, offset = in.offset;
      const uint32_t repeat_index = in.repeat_index, epoch = in.epoch;
      const uint32_t crc = in.PayloadCrc32c();
      absl::StatusOr<Out> out = fn_(std::move(in));
      if (out.ok()) {
        out->source_index = source_index;
        out->repeat_index = repeat_index;
        out->epoch = epoch;
        out->record_offset = offset;
        out->record_crc32c = crc;
      }
      return out;
    } else if constexpr (std::is_same_v<In, Example> && std::is_same_v<Out, Example>) {
      const uint64_t offset = in.record_offset;
      const uint32_t crc = in.record_crc32c;
      absl::StatusOr<Out> out = fn_(std::move(in));
      if (out.ok()) {
        out->record_offset = offset;
        out->record_crc32c = crc;
      }
      return out;
    } else {
      return fn_(std::move(in));
    }
  }

  MapStage(StagePtr<In> input, Fn fn, MapOptions options)
      : UnaryStage<Out, In>(std::move(input)),
        fn_(std::move(fn)),
        options_(std::move(options)),
        parallelism_(options_.parallelism) {
    reported_parallelism_.Set(parallelism_ > 0 ? parallelism_ : 0);
  }

  // ---- inline (parallelism 0, and kAutotune while it measures) ----

  absl::StatusOr<std::optional<Out>> NextInline() {
    if (this->cancelled()) return CancelledError();
    if (!inline_status_.ok()) return inline_status_;
    const bool tuning = parallelism_ == kAutotune;
    if (tuning) tuner_.Enter();
    absl::StatusOr<std::optional<In>> in;
    totals_.input_wait_ns.Add(internal::PullTimed(this->input(), &in));  // only real waits
    if (!in.ok()) return inline_status_ = in.status();
    if (!in->has_value()) return std::nullopt;
    const int64_t t0 = internal::NowNanos();
    absl::StatusOr<Out> out = Apply(std::move(**in));
    const int64_t busy = internal::NowNanos() - t0;
    busy_ns_.Add(busy);
    if (!out.ok()) return inline_status_ = out.status();
    totals_.elements.Add(1);
    totals_.bytes.Add(static_cast<int64_t>(ElementTraits<Out>::ByteSize(*out)));
    if (tuning && tuner_.Leave(busy)) {  // measured enough: from the next call on
      parallelism_ = tuner_.choice();
      reported_parallelism_.Set(parallelism_);
    }
    return std::optional<Out>(std::move(*out));
  }

  // ---- parallel ----

  void StartWorkers() {
    if (!workers_.empty()) return;
    // The base snapshot: the input as the workers find it (no pull yet).
    snapshots_.Take(0, [this](StateWriter& w) { return this->input().SaveState(w); });
    for (int i = 0; i < parallelism_; ++i) workers_.emplace_back([this] { Work(); });
  }

  // The consumer may take a result (or an end, an error, a cancel).
  bool ReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancel_ || !failed_.ok() || next_out_ == terminal_seq_) return true;
    if (options_.deterministic) return !slots_.empty() && slots_.front().has_value();
    return !done_.empty();
  }

  void WaitReady() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const int64_t t0 = internal::NowNanos();
    consumer_waiting_ = true;
    while (!ReadyLocked()) consumer_cv_.Wait(&mu_);
    consumer_waiting_ = false;
    totals_.consumer_wait_ns.Add(internal::NowNanos() - t0);
  }

  // Returns the result the consumer may take. REQUIRES: ReadyLocked().
  Item TakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancel_) return CancelledError();
    if (!failed_.ok()) return failed_;
    if (next_out_ == terminal_seq_) return *terminal_;  // end of stream or input error: sticky
    Item item;
    if (options_.deterministic) {
      item = *std::move(slots_.front());
      slots_.pop_front();
    } else {
      item = std::move(done_.front());
      done_.pop_front();
    }
    ++next_out_;
    if (!item.ok()) {  // fn failed for this element: sticky from here on
      failed_ = item.status();
      slots_.clear();
      done_.clear();
      room_cv_.SignalAll();
      return failed_;
    }
    if (room_waiting_ && RoomLocked() >= RoomWantedLocked()) room_cv_.Signal();
    totals_.elements.Add(1);
    totals_.bytes.Add(static_cast<int64_t>(ElementTraits<Out>::ByteSize(**item)));
    return item;
  }

  int64_t RoomLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return internal::MapWindow(parallelism_, options_.buffer, batch_) - (next_seq_ - next_out_);
  }
  // A worker that found no room sleeps until there is room for a batch (or
  // half the window): one wake-up per batch, not per element.
  int64_t RoomWantedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const int64_t window = internal::MapWindow(parallelism_, options_.buffer, batch_);
    return std::max<int64_t>(1, std::min<int64_t>(batch_, window / 2));
  }
  // The workers stop: a cancel, an fn error returned, or a Restart().
  bool StoppedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || !failed_.ok() || restarting_;
  }
  // What makes Restart() fail: a cancel, an fn error returned, an input error.
  absl::Status StickyErrorLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancel_) return CancelledError();
    if (!failed_.ok()) return failed_;
    if (terminal_.has_value() && !terminal_->ok()) return terminal_->status();
    return absl::OkStatus();
  }

  // Takes a batch of inputs (one worker at a time, in sequence order): false
  // when there is nothing more to take.
  bool Claim(std::vector<In>& batch, int64_t& first_seq, int64_t& cost_ns) {
    // Waits for room without the pull lock (the consumer may need it for
    // SaveRefs while it has not yet made room), then takes the lock and
    // looks again (another worker may have claimed the room meanwhile).
    int64_t want = 0;
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        if (!StoppedLocked() && terminal_seq_ == kNone && RoomLocked() < RoomWantedLocked()) {
          room_waiting_ = true;
          while (!StoppedLocked() && terminal_seq_ == kNone && RoomLocked() < RoomWantedLocked()) {
            room_cv_.Wait(&mu_);
          }
          room_waiting_ = false;
        }
        if (StoppedLocked() || terminal_seq_ != kNone) return false;
      }
      input_mu_.Lock();
      absl::MutexLock lock(&mu_);
      if (StoppedLocked() || terminal_seq_ != kNone) {
        input_mu_.Unlock();
        return false;
      }
      if (RoomLocked() < RoomWantedLocked()) {
        input_mu_.Unlock();
        continue;
      }
      first_seq = next_seq_;
      want = std::min<int64_t>(batch_, RoomLocked());
      break;
    }
    std::optional<Item> terminal;
    int64_t blocked = 0;
    const int64_t start = internal::NowNanos();
    int64_t now = start;
    while (static_cast<int64_t>(batch.size()) < want) {
      absl::StatusOr<std::optional<In>> in;
      blocked += internal::PullTimed(this->input(), &in);
      now = internal::NowNanos();
      if (!in.ok() || !in->has_value()) {
        terminal = in.ok() ? Item(std::nullopt) : Item(in.status());
        break;
      }
      batch.push_back(*std::move(*in));
      if (now - start >= internal::kMapBatchNanos) break;  // a slow input: hand over what we have
    }
    totals_.input_wait_ns.Add(blocked);  // one writer at a time: input_mu_
    cost_ns = now - start;               // pulling, blocked or not
    int64_t consumed = 0;
    const bool ended = terminal.has_value();
    {
      absl::MutexLock lock(&mu_);
      next_seq_ = first_seq + static_cast<int64_t>(batch.size());
      consumed = next_out_;
      if (!StoppedLocked() && options_.deterministic) {
        slots_.resize(static_cast<size_t>(next_seq_ - next_out_));
      }
      if (terminal.has_value()) {
        terminal_ = std::move(terminal);
        terminal_seq_ = next_seq_;
        if (consumer_waiting_ && ReadyLocked()) consumer_cv_.Signal();
      }
    }
    // A snapshot of the input after next_seq_ pulls (still holding the pull lock).
    if (!ended && options_.deterministic && !batch.empty() && snapshots_.Due(consumed)) {
      const int64_t pulled = first_seq + static_cast<int64_t>(batch.size());
      snapshots_.Take(pulled, [this](StateWriter& w) { return this->input().SaveState(w); });
    }
    input_mu_.Unlock();
    return !batch.empty();
  }

  // Hands results [first_seq, first_seq + out.size()) to the consumer: false
  // if the stage stopped (cancel or an fn error returned). At the end of a
  // batch of `batch_size` elements, `cost_ns` is what the batch cost (pulling
  // and fn), from which the next batches are sized.
  bool Publish(int64_t first_seq, std::vector<Item>& out, int64_t busy_ns, int64_t cost_ns,
               size_t batch_size) {
    busy_ns_.Add(busy_ns);
    absl::MutexLock lock(&mu_);
    if (StoppedLocked()) return false;
    for (size_t i = 0; i < out.size(); ++i) {
      if (options_.deterministic) {
        slots_[static_cast<size_t>(first_seq + static_cast<int64_t>(i) - next_out_)] =
            std::move(out[i]);
      } else {
        done_.push_back(std::move(out[i]));
      }
    }
    if (batch_size > 0) {  // the cost of an element: pulling it and fn
      const int64_t cost = cost_ns / static_cast<int64_t>(batch_size);
      cost_ns_ = cost_ns_ == 0 ? cost : (3 * cost_ns_ + cost) / 4;
      batch_ = internal::MapBatchSize(cost_ns_);
    }
    if (consumer_waiting_ && ReadyLocked()) consumer_cv_.Signal();
    return true;
  }

  void Work() {
    std::vector<In> batch;
    std::vector<Item> out;
    while (true) {
      batch.clear();
      int64_t first_seq = 0, cost_ns = 0;
      if (!Claim(batch, first_seq, cost_ns)) return;
      // fn on the batch; results go out at its end, or sooner if it runs long.
      out.clear();
      int64_t busy = 0, published = 0;
      int64_t t = internal::NowNanos(), flushed = t;
      for (size_t i = 0; i < batch.size(); ++i) {
        absl::StatusOr<Out> result = Apply(std::move(batch[i]));
        const int64_t now = internal::NowNanos();
        busy += now - t;
        t = now;
        out.push_back(result.ok() ? Item(std::optional<Out>(*std::move(result)))
                                  : Item(result.status()));
        const bool last = i + 1 == batch.size();
        if (last || now - flushed >= internal::kMapBatchNanos) {
          cost_ns += busy;
          if (!Publish(first_seq + published, out, busy, cost_ns, last ? batch.size() : 0)) return;
          published += static_cast<int64_t>(out.size());
          out.clear();
          busy = 0;
          flushed = now;
        }
      }
    }
  }

  const Fn fn_;
  const MapOptions options_;
  int parallelism_;               // consumer thread only: 0 inline, kAutotune measuring, n workers
  internal::MapAutotuner tuner_;  // consumer thread only
  absl::Status inline_status_;    // inline: sticky error (consumer thread only)
  internal::StageTotals<internal::Counter> totals_;  // one writer each (input_wait: input_mu_)
  internal::SharedCounter busy_ns_;
  internal::Counter reported_parallelism_;
  absl::Mutex input_mu_;  // one worker pulls from the input at a time (SaveRefs/Reread too)
  internal::InputSnapshots snapshots_;  // checkpoints: the input's state after j pulls
  int64_t save_skip_ = 0;               // consumer thread: between SaveInput and SaveOwn
  mutable absl::Mutex mu_;
  absl::CondVar consumer_cv_;  // a result is ready (signalled while consumer_waiting_)
  absl::CondVar room_cv_;      // room for a batch (signalled while room_waiting_)
  bool consumer_waiting_ ABSL_GUARDED_BY(mu_) = false;
  bool room_waiting_ ABSL_GUARDED_BY(mu_) = false;
  // Deterministic: results of [next_out_, next_seq_), filled as they finish.
  std::deque<std::optional<Item>> slots_ ABSL_GUARDED_BY(mu_);
  std::deque<Item> done_ ABSL_GUARDED_BY(mu_);         // not deterministic: in completion order
  int64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;          // sequence number of the next input
  int64_t next_out_ ABSL_GUARDED_BY(mu_) = 0;          // results returned so far
  int64_t terminal_seq_ ABSL_GUARDED_BY(mu_) = kNone;  // position of end of stream or the error
  std::optional<Item> terminal_ ABSL_GUARDED_BY(mu_);
  bool cancel_ ABSL_GUARDED_BY(mu_) = false;
  bool restarting_ ABSL_GUARDED_BY(mu_) = false;  // Restart() waits for the workers to stop
  absl::Status failed_ ABSL_GUARDED_BY(mu_);      // first error returned by fn
  int64_t cost_ns_ ABSL_GUARDED_BY(mu_) = 0;      // per element, averaged over batches
  int batch_ ABSL_GUARDED_BY(mu_) = 1;            // elements per batch (MapBatchSize)
  // The consumer thread starts them, Restart() and the destructor join them.
  std::vector<std::thread> workers_;
};

// MapStage for the library's element types are compiled once, in
// src/map.cc: programs link them instead of compiling them again. Other
// types are instantiated where they are used, as usual.
extern template class DATAECHO_EXPORT MapStage<Record, Example>;
extern template class DATAECHO_EXPORT MapStage<Example, Example>;
extern template class DATAECHO_EXPORT MapStage<Batch, Batch>;
extern template class DATAECHO_EXPORT MapStage<Record, Record>;

}  // namespace dataecho

#endif  // DATAECHO_MAP_H_
