// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// map.h: apply a function to every element, in parallel.
//
// Map runs `fn` on a fixed pool of `parallelism` worker threads, at most
// `parallelism` calls in flight, and returns results in input order (set
// `deterministic = false` to take them in completion order). `fn` returns the
// new element or an error; an error comes out at the element's position (in
// order: every earlier element first) and then stays. `parallelism = 0` runs
// `fn` inline in the consumer's thread.
//
//   auto decoded = dataecho::MapStage<Record, Example>::Make(
//       std::move(records), DecodeImageRecord, {.parallelism = 4});
//   if (!decoded.ok()) return decoded.status();  // a bad option, empty fn or null input
//
// Workers pull from the input one at a time (never concurrently) and start on
// the first Next(). Destruction cancels, wakes and joins them; a call of `fn`
// already running is waited for.
//
// Stats (stats.h): input_wait = time blocked on an input that had nothing
// ready; consumer_wait = consumer time waiting for the next result; threads =
// parallelism; extra "busy_s" = time in fn.
//
// Thread safety: as every stage (stage.h); `fn` must be safe to call from
// several threads at once when parallelism > 1.
#ifndef DATAECHO_MAP_H_
#define DATAECHO_MAP_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "dataecho/element_traits.h"
#include "dataecho/example.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/stage.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho {

struct MapOptions {
  // Worker threads; 0 = call fn inline in the consumer's thread.
  int parallelism = 1;
  // true: results in input order; false: in completion order.
  bool deterministic = true;
  // Results buffered ahead of the consumer beyond the calls in flight.
  int buffer = 0;
  std::string name = "map";

  absl::Status Validate() const {
    if (parallelism < 0 || parallelism > 1024) {
      return absl::InvalidArgumentError(
          fmt::format("map parallelism must be in [0, 1024], got {}", parallelism));
    }
    if (buffer < 0) {
      return absl::InvalidArgumentError(fmt::format("map buffer must be >= 0, got {}", buffer));
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
    if (options_.parallelism == 0) return NextInline();
    StartWorkers();
    absl::MutexLock lock(&mu_);
    internal::AwaitTimed(mu_, this, &MapStage::ResultReadyOrCancelled, totals_.consumer_wait_ns);
    return TakeLocked();
  }

  // Epochs (stage.h): an inline Map (parallelism 0) starts over with its
  // input; a parallel one cannot (put .Repeat() below it).
  absl::Status EnableRestart() override {
    if (options_.parallelism != 0) return this->CannotRestart();
    return this->input().EnableRestart();
  }
  absl::Status Restart(uint32_t epoch) override {
    if (options_.parallelism != 0) return this->CannotRestart();
    DATAECHO_RETURN_IF_ERROR(inline_status_);
    return this->input().Restart(epoch);
  }

  bool TryNext(absl::StatusOr<std::optional<Out>>* out) override {
    if (options_.parallelism == 0) {
      *out = NextInline();
      return true;
    }
    StartWorkers();
    absl::MutexLock lock(&mu_);
    if (!ResultReadyOrCancelled()) return false;
    *out = TakeLocked();
    return true;
  }

 protected:
  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    cancel_ = true;
  }

  StageStats OwnStats() const override {
    absl::MutexLock lock(&mu_);
    return totals_.Report(
        options_.name, options_.parallelism,
        {{"parallelism", options_.parallelism}, {"busy_s", static_cast<double>(busy_ns_) * 1e-9}});
  }

 private:
  using Item = absl::StatusOr<std::optional<Out>>;
  static constexpr int64_t kNone = INT64_MAX;

  MapStage(StagePtr<In> input, Fn fn, MapOptions options)
      : UnaryStage<Out, In>(std::move(input)), fn_(std::move(fn)), options_(std::move(options)) {}

  void StartWorkers() {
    if (workers_.empty()) {
      for (int i = 0; i < options_.parallelism; ++i) workers_.emplace_back([this] { Work(); });
    }
  }

  // Returns the result the consumer may take. REQUIRES: ResultReadyOrCancelled().
  absl::StatusOr<std::optional<Out>> TakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancel_) return CancelledError();
    if (!failed_.ok()) return failed_;
    // Deterministic: the next in order. Otherwise any finished result (the
    // terminal one, always the last sequence number, only once all others are out).
    auto it = results_.begin();
    const int64_t seq = it->first;
    if (seq == terminal_seq_) return it->second;  // end of stream or input error: sticky
    Item item = std::move(it->second);
    results_.erase(it);
    if (!item.ok()) {  // fn failed for this element: sticky from here on
      failed_ = item.status();
      results_.clear();
      return failed_;
    }
    ++next_out_;
    ++totals_.elements;
    totals_.bytes += static_cast<int64_t>(ElementTraits<Out>::ByteSize(**item));
    return item;
  }

  // parallelism == 0: fn runs in the consumer's thread; only real waits on
  // the input are timed (busy_s stays 0).
  absl::StatusOr<std::optional<Out>> NextInline() {
    if (this->cancelled()) return CancelledError();
    if (!inline_status_.ok()) return inline_status_;
    absl::StatusOr<std::optional<In>> in;
    if (!this->input().TryNext(&in)) {
      const int64_t t0 = internal::NowNanos();
      in = this->input().Next();
      const int64_t waited = internal::NowNanos() - t0;
      absl::MutexLock lock(&mu_);
      totals_.input_wait_ns += waited;
    }
    if (!in.ok()) return inline_status_ = in.status();
    if (!in->has_value()) return std::nullopt;
    absl::StatusOr<Out> out = fn_(std::move(**in));
    if (!out.ok()) return inline_status_ = out.status();
    absl::MutexLock lock(&mu_);
    ++totals_.elements;
    totals_.bytes += static_cast<int64_t>(ElementTraits<Out>::ByteSize(*out));
    return std::optional<Out>(std::move(*out));
  }

  // The consumer may take a result: the next in order (or any completed one
  // when not deterministic; the terminal one only after all before it).
  bool ResultReadyOrCancelled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (cancel_ || !failed_.ok()) return true;
    if (results_.empty()) return false;
    if (options_.deterministic) return results_.begin()->first == next_out_;
    return results_.begin()->first != terminal_seq_ || terminal_seq_ == next_out_;
  }

  bool CanPull() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancel_ || terminal_seq_ != kNone || !failed_.ok() ||
           next_seq_ - next_out_ < options_.parallelism + options_.buffer;
  }

  void Work() {
    while (true) {
      int64_t seq;
      absl::StatusOr<std::optional<In>> in = std::optional<In>();
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &MapStage::CanPull));
        if (cancel_ || terminal_seq_ != kNone || !failed_.ok()) return;
      }
      {
        // One puller at a time; the sequence number is taken with the element.
        absl::MutexLock input_lock(&input_mu_);
        {
          absl::MutexLock lock(&mu_);
          if (cancel_ || terminal_seq_ != kNone) return;
          seq = next_seq_++;
        }
        const int64_t waited = internal::PullTimed(this->input(), &in);
        absl::MutexLock lock(&mu_);
        totals_.input_wait_ns += waited;
        if (!in.ok() || !in->has_value()) {
          terminal_seq_ = seq;
          results_.emplace(seq, in.ok() ? Item(std::nullopt) : Item(in.status()));
          return;
        }
      }
      const int64_t t0 = internal::NowNanos();
      absl::StatusOr<Out> out = fn_(std::move(**in));
      const int64_t busy = internal::NowNanos() - t0;
      absl::MutexLock lock(&mu_);
      busy_ns_ += busy;
      if (!failed_.ok()) return;
      results_.emplace(seq,
                       out.ok() ? Item(std::optional<Out>(std::move(*out))) : Item(out.status()));
    }
  }

  const Fn fn_;
  const MapOptions options_;
  absl::Status inline_status_;  // parallelism == 0: sticky error
  absl::Mutex input_mu_;        // serializes input().Next() across workers
  mutable absl::Mutex mu_;
  std::map<int64_t, Item> results_ ABSL_GUARDED_BY(mu_);  // finished, not yet returned
  int64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;             // sequence number of the next input
  int64_t next_out_ ABSL_GUARDED_BY(mu_) = 0;          // next sequence number to return (in order)
  int64_t terminal_seq_ ABSL_GUARDED_BY(mu_) = kNone;  // position of end of stream or the error
  bool cancel_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status failed_ ABSL_GUARDED_BY(mu_);  // first error returned by fn
  internal::StageTotals<int64_t> totals_ ABSL_GUARDED_BY(mu_);
  int64_t busy_ns_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> workers_;  // consumer thread starts them; joined in the destructor
};

}  // namespace dataecho

#endif  // DATAECHO_MAP_H_
